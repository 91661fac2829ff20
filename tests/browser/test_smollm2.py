"""SmolLM2-135M-Instruct, a real instruct model, through the whole product.

The model is prepared by setup (``python -m py_runtime models prepare smollm2``); the
tests run its WPT-style file in the page, compare the page's greedy answers with
CPython's onnxruntime for every shipped dtype, and run the README's main job.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from model_pages import (
    cpython_answers,
    cpython_constrained_answers,
    page_answers,
    page_constrained_answers,
)
from playwright.sync_api import Page, Playwright

from py_runtime.devtools import models
from py_runtime.devtools.browser import launch_args
from py_runtime.devtools.memory import chromium_browsers, page_rss_mib
from py_runtime.devtools.server import StaticServer
from py_runtime.devtools.wpt import run_wpt_file
from py_runtime.devtools.wpt_host import WptHost

REPO_ROOT = Path(__file__).resolve().parents[2]
DIST = REPO_ROOT / "dist"
FOLDER = models.folder("smollm2")
WPT_DIR = REPO_ROOT / "tests" / "wpt-models" / "ai" / "language-model"
WPT_FILES = [
    "smollm2.tentative.https.window.js",
    "smollm2-response-constraint.tentative.https.window.js",
    "smollm2-tool-choice.tentative.https.window.js",
]
#: The weight-only dtypes, whose page and native kernels agree exactly; fp32 is the
#: default on wasm (docs/models.md). int8 (dynamic, activations quantized at run
#: time) is shipped for comparison only: ORT Web's and native int8 kernels round
#: differently, so their greedy answers can part (e.g. "3" vs "three").
DTYPES = ["fp32", "q8"]
PROMPTS = ["What is the capital of France?", "What is 2+2?", "Name three colors."]

pytestmark = pytest.mark.needs_files(
    DIST / "language-model.js",
    FOLDER / "onnx" / "model.onnx",
    reason="dist/ or SmolLM2 is missing: run `bash scripts/setup.sh`",
)


@pytest.mark.parametrize("name", WPT_FILES)
def test_smollm2_wpt_file_passes(page: Page, name: str) -> None:
    # The constrained file holds ~30 answers: 90 s at SmolLM2's speed on wasm, past
    # testharness's 60 s for a long test.
    with WptHost(
        DIST, model=str(FOLDER), dtype=models.default_dtype("smollm2"), timeout_multiplier=5
    ) as host:
        result = run_wpt_file(page, host, WPT_DIR / name, timeout=600)
    assert result.harness_status == "OK", result.harness_message
    assert result.subtests and not result.failures(), result.failures()


@pytest.mark.parametrize(
    ("dtype", "jspi"), [*((dtype, "auto") for dtype in DTYPES), ("fp32", "off")]
)
def test_page_and_cpython_give_the_same_answers(page: Page, dtype: str, jspi: str) -> None:
    """fp32's weights are external data: ORT's JSPI build reads them from a Blob of the
    cached file (Chromium has JSPI); with data-jspi="off", as in browsers without
    JSPI, the plain build reads them as bytes. The answers are the same."""
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    answers = page_answers(page, FOLDER, dtype, PROMPTS, f'data-jspi="{jspi}"')
    assert answers == cpython_answers(FOLDER, dtype, PROMPTS)
    assert "Paris" in answers[0]
    builds = {url.rsplit("/", 1)[-1] for url in requested if url.endswith(".wasm")}
    jspi_build = "ort-wasm-simd-threaded.jspi.wasm"
    assert (jspi_build in builds) == (jspi == "auto"), builds


#: Greedy constrained answers (the schema's text in the prompt, as by default): long keys
#: the grammar forces are drafts the model verifies (jump-forward, ort-backend.mjs's
#: speculate in the page: SmolLM2's graph gives the logits of each draft position).
#: With the schema left out, SmolLM2 would rather start with "{" than "{\"", which
#: XGrammar allows and llguidance does not (inside forced text it allows only the
#: tokenizer's own tokens): the hosts' answers then part, with jump-forward or without.
CONSTRAINED_CASES: list[dict[str, Any]] = [
    {
        "prompt": "Describe the weather in Paris today.",
        "omit": False,
        "schema": {
            "type": "object",
            "properties": {
                "the_temperature_in_degrees_celsius": {"enum": list(range(-5, 31))},
                "the_condition_of_the_sky_right_now": {"enum": ["sunny", "cloudy", "rainy"]},
                "is_it_a_good_day_for_a_walk_outside": {"type": "boolean"},
            },
            "required": [
                "the_temperature_in_degrees_celsius",
                "the_condition_of_the_sky_right_now",
                "is_it_a_good_day_for_a_walk_outside",
            ],
            "additionalProperties": False,
        },
    },
    {
        "prompt": "Tell me about the novel Moby-Dick.",
        "omit": False,
        "schema": {
            "type": "object",
            "properties": {
                "the_full_title_of_the_book": {"type": "string", "maxLength": 40},
                "the_name_of_the_author_of_the_book": {"type": "string", "maxLength": 40},
            },
            "required": ["the_full_title_of_the_book", "the_name_of_the_author_of_the_book"],
            "additionalProperties": False,
        },
    },
    {"prompt": "What is the weather like in Paris today?", "tools": True},
]


def test_page_and_cpython_give_the_same_constrained_answers(page: Page) -> None:
    dtype = models.default_dtype("smollm2") or "fp32"
    answers = page_constrained_answers(page, FOLDER, dtype, CONSTRAINED_CASES)
    assert answers == cpython_constrained_answers(FOLDER, dtype, CONSTRAINED_CASES)


def test_main_job_answers_with_smollm2() -> None:
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "py_runtime",
            "prompt",
            "--sampling-mode",
            "most-predictable",
            "What is the capital of France?",
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert "Paris" in completed.stdout


def test_smollm2_answers_through_the_extension(playwright: Playwright) -> None:
    """The extension's engine (offscreen document, cross-origin isolated) runs SmolLM2
    for a page that loads nothing of ours, and answers as CPython does."""
    from py_runtime.devtools.extension import DEFAULT_EXTENSION, extension_browser

    if not (DEFAULT_EXTENSION / "manifest.json").is_file():
        pytest.skip("dist/extension is missing: build dist/")
    dtype = models.default_dtype("smollm2")
    page_html = b"<!doctype html><meta charset=utf-8><body>a page</body>"
    with StaticServer({"/model/": FOLDER}, {"/a.html": page_html}) as site:
        settings = {"model": f"{site.url}/model/", "dtype": dtype}
        with extension_browser(playwright, settings=settings) as browser:
            page = browser.context.new_page()
            page.goto(f"{site.url}/a.html")
            page.click("body")
            answer = page.evaluate(
                """async (prompt) => {
                  const session = await LanguageModel.create({samplingMode: 'most-predictable'});
                  return session.prompt(prompt);
                }""",
                PROMPTS[0],
            )
    assert answer == cpython_answers(FOLDER, dtype, PROMPTS[:1])[0]
    assert "Paris" in answer


LONG_DECODE = """async () => {
  const session = await LanguageModel.create({samplingMode: 'most-predictable'});
  await session.prompt('hi');
  const before = await window.rss();
  let most = before, chunks = 0;
  await session.append('the quick brown fox jumps over the lazy dog and runs away '.repeat(100));
  for await (const chunk of session.promptStreaming('Write a long story about a dragon.')) {
    if (++chunks % 16 === 0) most = Math.max(most, await window.rss());
  }
  return [before, most, chunks];
}"""


def test_a_long_context_decode_does_not_pile_up_replaced_kv_caches(playwright: Playwright) -> None:
    """Every pass replaces the KV caches (30 layers x 2 tensors, near 1 MiB each on a
    context of 1,000 positions): the replaced tensors' bytes are given back at once,
    not left to a garbage collection (the page's resident memory grew by hundreds of
    MiB over one long answer)."""
    page_html = b"""<!doctype html><meta charset=utf-8>
<script src="/_lm/language-model.js" data-model="/model/" data-dtype="fp32"></script>"""
    before = chromium_browsers()
    browser = playwright.chromium.launch(**launch_args())
    try:
        (pid,) = chromium_browsers() - before
        with StaticServer({"/_lm/": DIST, "/model/": FOLDER}, {"/index.html": page_html}) as site:
            page = browser.new_page()
            page.expose_function("rss", lambda: page_rss_mib(pid))
            page.goto(f"{site.url}/index.html")
            settled, most, chunks = page.evaluate(LONG_DECODE, None)
    finally:
        browser.close()
    config = json.loads((FOLDER / "config.json").read_text())
    heads, layers = config["num_key_value_heads"], config["num_hidden_layers"]
    head_size = config["hidden_size"] // config["num_attention_heads"]
    # The KV caches at the answer's end (about 1,750 positions): 77 MiB. They are in
    # JS memory, and copied into ONNX Runtime's wasm memory and back on each pass.
    kv = layers * 2 * heads * head_size * 4 * 1750 / 2**20
    print(f"resident {settled:.0f} -> at most {most:.0f} MiB ({chunks} chunks, KV {kv:.0f} MiB)")
    assert chunks > 200, "a long answer"
    assert most - settled < 4 * kv, f"the page grew from {settled:.0f} to {most:.0f} MiB"
