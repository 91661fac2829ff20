"""The fixture model behind LanguageModel in Chromium, on ONNX Runtime Web (wasm).

Runs tests/wpt-models/ with the fixture as the page's model in every dtype, and
checks that the page and CPython's onnxruntime, running the same generation loop,
give the same answers (greedy) for the same conversations.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from model_pages import (
    cpython_answers,
    cpython_constrained_answers,
    page_answers,
    page_constrained_answers,
)
from playwright.sync_api import BrowserType, Page

from py_runtime.devtools.browser import WEBGPU_ARGS, launch_args
from py_runtime.devtools.wpt import run_wpt_file
from py_runtime.devtools.wpt_host import WptHost

REPO_ROOT = Path(__file__).resolve().parents[2]
DIST = REPO_ROOT / "dist"
FIXTURE = REPO_ROOT / "tests" / "fixtures" / "tiny-qwen2-toolcall"
WPT_DIR = REPO_ROOT / "tests" / "wpt-models" / "ai" / "language-model"
WPT_FILE = WPT_DIR / "tiny-qwen2-toolcall.tentative.https.window.js"
#: Constrained decoding (XGrammar in the worker) on the fixture's noise.
CONSTRAINED_FILE = WPT_DIR / "tiny-qwen2-constrained.tentative.https.window.js"
DTYPES = ["fp32", "fp16", "q8", "int8", "q4", "q4f16"]
PROMPTS = [
    "Hello!",
    "What is the capital of France?",
    "What is the weather like in Paris today?",
    "Tell me about the sea.",
]

pytestmark = pytest.mark.needs_files(
    DIST / "language-model.js", reason="dist/ is missing: run `python3 build/build.py`"
)


@pytest.mark.parametrize("dtype", DTYPES)
def test_fixture_wpt_file_passes(page: Page, dtype: str) -> None:
    with WptHost(DIST, model=str(FIXTURE), dtype=dtype) as host:
        result = run_wpt_file(page, host, WPT_FILE)
    assert result.harness_status == "OK", result.harness_message
    failures = [f"{t.status} {t.name}: {t.message}" for t in result.subtests if t.status != "PASS"]
    assert not failures and result.subtests, "\n".join(failures)


@pytest.mark.parametrize("dtype", ["fp32", "q4f16"])
def test_fixture_constrained_wpt_file_passes(page: Page, dtype: str) -> None:
    with WptHost(DIST, model=str(FIXTURE), dtype=dtype) as host:
        result = run_wpt_file(page, host, CONSTRAINED_FILE)
    assert result.harness_status == "OK", result.harness_message
    failures = [f"{t.status} {t.name}: {t.message}" for t in result.subtests if t.status != "PASS"]
    assert not failures and result.subtests, "\n".join(failures)


@pytest.mark.parametrize("dtype", DTYPES)
def test_page_and_cpython_give_the_same_answers(page: Page, dtype: str) -> None:
    pytest.importorskip("onnxruntime")
    assert page_answers(page, FIXTURE, dtype, PROMPTS) == cpython_answers(FIXTURE, dtype, PROMPTS)


def test_page_and_cpython_apply_the_same_repetition_penalty(page: Page, tmp_path: Path) -> None:
    """generation_config.json's repetition_penalty, in sampling.mjs (web/worker) and in NumPy."""
    folder = tmp_path / "fixture-penalty"
    shutil.copytree(FIXTURE, folder)
    config = json.loads((folder / "generation_config.json").read_text())
    config["repetition_penalty"] = 5.0
    (folder / "generation_config.json").write_text(json.dumps(config))
    answers = page_answers(page, folder, "fp32", PROMPTS)
    assert answers == cpython_answers(folder, "fp32", PROMPTS)
    assert answers != cpython_answers(FIXTURE, "fp32", PROMPTS), "the penalty changed them"


@pytest.mark.parametrize("dtype", ["fp32", "q4"])
def test_fixture_wpt_file_passes_on_webgpu(browser_type: BrowserType, dtype: str) -> None:
    """WebGPU through Chromium's software adapter (--enable-unsafe-webgpu): correctness only."""
    browser = browser_type.launch(**launch_args(WEBGPU_ARGS))
    try:
        with WptHost(
            DIST, model=str(FIXTURE), dtype=dtype, device="webgpu", timeout_multiplier=10
        ) as host:
            result = run_wpt_file(browser.new_page(), host, WPT_FILE, timeout=1200)
    finally:
        browser.close()
    assert result.harness_status == "OK", result.harness_message
    failures = [f"{t.status} {t.name}: {t.message}" for t in result.subtests if t.status != "PASS"]
    assert not failures and result.subtests, "\n".join(failures)


def evaluate_with_model(page: Page, folder: Path, dtype: str, script: str) -> object:
    """Evaluate ``script`` in a page whose model is ``folder``, after a real click."""
    with WptHost(DIST, model=str(folder), dtype=dtype) as host:
        server = host.server_for(folder.parent)
        server.add_file(
            "/model.html",
            f"""<!doctype html><script src="/_lm/language-model.js"
            data-model="/_models/{folder.name}/" data-dtype="{dtype}"></script>
            <button id=go>go</button>""".encode(),
        )
        page.goto(f"{server.url}/model.html")
        page.click("#go")
        return page.evaluate(script)


def broken_model_error(page: Page, folder: Path) -> dict:
    """availability() and the create() error for a model folder, in the page."""
    return evaluate_with_model(
        page,
        folder,
        "q4",
        """async () => {
              const availability = await LanguageModel.availability();
              try { await LanguageModel.create(); return { availability }; }
              catch (e) { return { availability, name: e.name, message: e.message }; }
            }""",
    )


def test_a_missing_model_file_rejects_create_naming_it(page: Page, tmp_path: Path) -> None:
    folder = tmp_path / "no-tokenizer"
    shutil.copytree(FIXTURE, folder)
    (folder / "tokenizer.json").unlink()
    outcome = broken_model_error(page, folder)
    assert outcome["availability"] == "downloadable"
    assert outcome["name"] == "OperationError"
    assert "tokenizer.json" in outcome["message"] and "missing" in outcome["message"]


def test_a_malformed_model_file_rejects_create_naming_it(page: Page, tmp_path: Path) -> None:
    folder = tmp_path / "bad-config"
    shutil.copytree(FIXTURE, folder)
    (folder / "config.json").write_text("{ not json")
    outcome = broken_model_error(page, folder)
    assert outcome["name"] == "OperationError"
    assert "config.json" in outcome["message"] and "not valid JSON" in outcome["message"]


def test_an_unreachable_model_is_unavailable(page: Page, tmp_path: Path) -> None:
    folder = tmp_path / "empty-model"
    folder.mkdir()
    outcome = broken_model_error(page, folder)
    assert outcome["availability"] == "unavailable"
    assert outcome["name"] == "NotSupportedError"


def test_external_weights_in_onnx_data_load(page: Page, tmp_path: Path) -> None:
    """Large models keep their weights in onnx/model.onnx_data beside the graph."""
    onnx = pytest.importorskip("onnx")
    folder = tmp_path / "external-data"
    shutil.copytree(FIXTURE, folder, ignore=shutil.ignore_patterns("*.onnx"))
    graph = onnx.load(str(FIXTURE / "onnx" / "model.onnx"))
    onnx.save_model(
        graph,
        str(folder / "onnx" / "model.onnx"),
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location="model.onnx_data",
        size_threshold=0,
    )
    assert (folder / "onnx" / "model.onnx_data").stat().st_size > 1_000_000
    answer = evaluate_with_model(
        page,
        folder,
        "fp32",
        """async () => {
          const session = await LanguageModel.create({samplingMode: 'most-predictable'});
          return session.prompt('Hello!');
        }""",
    )
    assert answer == "Hello! How can I help you today?"


#: Greedy constrained answers: keys and literals the grammar forces are drafts the
#: model judges (jump-forward, ort-backend.mjs's speculate in the page).
CONSTRAINED_CASES: list[dict[str, Any]] = [
    {"prompt": "What is the weather like in Paris today?", "tools": True},
    {"prompt": "Hello!", "tools": True},
    {"prompt": "Hello!", "regexp": r"Hello! How can I help you today\?"},
    {
        "prompt": "What is the capital of France?",
        "regexp": r"The capital of France is [A-Z][a-z]+\.",
    },
    {
        "prompt": "Tell me about the sea.",
        "schema": {
            "type": "object",
            "properties": {
                "the_temperature_in_degrees_celsius": {"enum": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]},
                "the_condition_of_the_sky_right_now": {"enum": ["sunny", "cloudy"]},
                "a_short_name": {"type": "string", "maxLength": 6},
            },
            "required": [
                "the_temperature_in_degrees_celsius",
                "the_condition_of_the_sky_right_now",
                "a_short_name",
            ],
            "additionalProperties": False,
        },
    },
    {
        "prompt": "x",
        "schema": {"type": "array", "items": {"enum": ["north", "south"]}, "maxItems": 3},
    },
]


@pytest.mark.parametrize("dtype", ["fp32", "q4f16"])
def test_page_and_cpython_give_the_same_constrained_answers(page: Page, dtype: str) -> None:
    pytest.importorskip("onnxruntime")
    answers = page_constrained_answers(page, FIXTURE, dtype, CONSTRAINED_CASES)
    assert answers == cpython_constrained_answers(FIXTURE, dtype, CONSTRAINED_CASES)
    assert answers[:4] == [
        'call get_weather {"location":"Paris"}',
        "Hello! How can I help you today?",
        "Hello! How can I help you today?",
        "The capital of France is Paris.",
    ]


@pytest.mark.parametrize("jspi", ["auto", "off"])
def test_webgpu_reads_external_data_and_answers_as_cpython(
    browser_type: BrowserType, tmp_path: Path, jspi: str
) -> None:
    """On WebGPU, ORT's JSPI build (where the browser has JSPI) reads a model's external
    data from a Blob of its cached copy, as on wasm; without JSPI the asyncify build gets
    the bytes. Either way the fixture, its weights as external data, answers as CPython."""
    import onnx

    folder = tmp_path / "fixture-external"
    shutil.copytree(FIXTURE, folder)
    for extra in (folder / "onnx").iterdir():
        if extra.name != "model.onnx":
            extra.unlink()
    graph = onnx.load(str(folder / "onnx" / "model.onnx"))
    onnx.save(graph, str(folder / "onnx" / "model.onnx"), save_as_external_data=True,
              location="model.onnx_data", size_threshold=0)  # fmt: skip
    browser = browser_type.launch(**launch_args(WEBGPU_ARGS))
    try:
        page = browser.new_page()
        fetched: list[str] = []
        page.on("request", lambda request: fetched.append(request.url.rsplit("/", 1)[-1]))
        attributes = f'data-device="webgpu" data-jspi="{jspi}"'
        answers = page_answers(page, folder, "fp32", PROMPTS[:2], attributes)
    finally:
        browser.close()
    assert answers == cpython_answers(folder, "fp32", PROMPTS[:2])
    build = "ort.jspi.min.mjs" if jspi == "auto" else "ort.webgpu.min.mjs"
    assert build in fetched and "model.onnx_data" in fetched
