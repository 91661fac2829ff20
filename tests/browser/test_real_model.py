"""The fixture model behind LanguageModel in Chromium, on ONNX Runtime Web (wasm).

Runs tests/wpt-models/ with the fixture as the page's model in every dtype, and
checks that the page and CPython's onnxruntime, running the same generation loop,
give the same answers (greedy) for the same conversations.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from playwright.sync_api import BrowserType, Page

from py_runtime.devtools.browser import WEBGPU_ARGS, launch_args
from py_runtime.devtools.wpt import run_wpt_file
from py_runtime.devtools.wpt_host import WptHost

REPO_ROOT = Path(__file__).resolve().parents[2]
DIST = REPO_ROOT / "dist"
FIXTURE = REPO_ROOT / "tests" / "fixtures" / "tiny-qwen2-toolcall"
WPT_FILE = (
    REPO_ROOT
    / "tests"
    / "wpt-models"
    / "ai"
    / "language-model"
    / ("tiny-qwen2-toolcall.tentative.https.window.js")
)
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


def cpython_answers(dtype: str, folder: Path = FIXTURE) -> list[str]:
    """The same prompts through the engine and onnxruntime under CPython."""
    pytest.importorskip("onnxruntime")
    from py_runtime.engine.runtime import Runtime
    from py_runtime.hosts.cpython import local_model

    async def run() -> list[str]:
        runtime = Runtime(local_model(folder, dtype))  # type: ignore[arg-type]
        answers = []
        for prompt in PROMPTS:
            info = await runtime.create(
                {"samplingMode": "most-predictable"}, True, lambda _: None, lambda: False
            )
            chunks: list[dict] = []

            async def keep(_: object) -> bool:
                return True

            await runtime.prompt(
                info["session"], prompt, None, False, chunks.append, keep, lambda: False
            )
            answers.append("".join(c["text"] for c in chunks if c["kind"] == "text"))
        return answers

    # A thread of its own: pytest-playwright keeps an event loop running here.
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, run()).result()


def page_answers(page: Page, folder: Path, dtype: str) -> list[str]:
    """The page's greedy answers to PROMPTS, with ``folder`` as its model."""
    page_html = f"""<!doctype html><meta charset=utf-8>
    <script src="/_lm/language-model.js" data-model="/_models/{folder.name}/"
            data-dtype="{dtype}"></script><button id=go>go</button>"""
    with WptHost(DIST, model=str(folder), dtype=dtype) as host:
        server = host.server_for(folder.parent)
        server.add_file("/parity.html", page_html.encode())
        page.goto(f"{server.url}/parity.html")
        page.click("#go")
        answers: list[str] = page.evaluate(
            """async (prompts) => {
              const answers = [];
              for (const prompt of prompts) {
                const session = await LanguageModel.create({samplingMode: 'most-predictable'});
                answers.push(await session.prompt(prompt));
              }
              return answers;
            }""",
            PROMPTS,
        )
    return answers


@pytest.mark.parametrize("dtype", DTYPES)
def test_page_and_cpython_give_the_same_answers(page: Page, dtype: str) -> None:
    assert page_answers(page, FIXTURE, dtype) == cpython_answers(dtype)


def test_page_and_cpython_apply_the_same_repetition_penalty(page: Page, tmp_path: Path) -> None:
    """generation_config.json's repetition_penalty, in ort-backend.mjs and in NumPy."""
    folder = tmp_path / "fixture-penalty"
    shutil.copytree(FIXTURE, folder)
    config = json.loads((folder / "generation_config.json").read_text())
    config["repetition_penalty"] = 5.0
    (folder / "generation_config.json").write_text(json.dumps(config))
    answers = page_answers(page, folder, "fp32")
    assert answers == cpython_answers("fp32", folder)
    assert answers != cpython_answers("fp32"), "the penalty changed the answers"


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
