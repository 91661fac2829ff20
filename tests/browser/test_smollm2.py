"""SmolLM2-135M-Instruct, a real instruct model, through the whole product.

The model is prepared by setup (``python -m py_runtime models prepare smollm2``); the
tests run its WPT-style file in the page, compare the page's greedy answers with
CPython's onnxruntime for every shipped dtype, and run the README's main job.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from playwright.sync_api import Page

from py_runtime.devtools import models
from py_runtime.devtools.wpt import run_wpt_file
from py_runtime.devtools.wpt_host import WptHost

REPO_ROOT = Path(__file__).resolve().parents[2]
DIST = REPO_ROOT / "dist"
FOLDER = models.folder("smollm2")
WPT_FILE = (
    REPO_ROOT
    / "tests"
    / "wpt-models"
    / "ai"
    / "language-model"
    / "smollm2.tentative.https.window.js"
)
#: The weight-only dtypes, whose page and native kernels agree exactly; fp32 is the
#: default on wasm (README "SmolLM2"). int8 (dynamic, activations quantized at run
#: time) is shipped for comparison only: ORT Web's and native int8 kernels round
#: differently, so their greedy answers can part (e.g. "3" vs "three").
DTYPES = ["fp32", "q8"]
PROMPTS = ["What is the capital of France?", "What is 2+2?", "Name three colors."]

pytestmark = pytest.mark.needs_files(
    DIST / "language-model.js",
    FOLDER / "onnx" / "model.onnx",
    reason="dist/ or SmolLM2 is missing: run `bash scripts/setup.sh`",
)


def test_smollm2_wpt_file_passes(page: Page) -> None:
    with WptHost(DIST, model=str(FOLDER), dtype=models.default_dtype("smollm2")) as host:
        result = run_wpt_file(page, host, WPT_FILE, timeout=600)
    assert result.harness_status == "OK", result.harness_message
    assert result.subtests and not result.failures(), result.failures()


def cpython_answers(dtype: str) -> list[str]:
    from py_runtime.engine.runtime import Runtime
    from py_runtime.hosts.cpython import local_model

    async def run() -> list[str]:
        runtime = Runtime(local_model(FOLDER, dtype))  # type: ignore[arg-type]
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

    with ThreadPoolExecutor(1) as pool:  # pytest-playwright keeps an event loop here
        return pool.submit(asyncio.run, run()).result()


@pytest.mark.parametrize("dtype", DTYPES)
def test_page_and_cpython_give_the_same_answers(page: Page, dtype: str) -> None:
    expected = cpython_answers(dtype)
    page_html = f"""<!doctype html><meta charset=utf-8>
    <script src="/_lm/language-model.js" data-model="/_models/{FOLDER.name}/"
            data-dtype="{dtype}"></script><button id=go>go</button>"""
    with WptHost(DIST, model=str(FOLDER), dtype=dtype) as host:
        server = host.server_for(FOLDER.parent)
        server.add_file("/parity.html", page_html.encode())
        page.goto(f"{server.url}/parity.html")
        page.click("#go")
        answers = page.evaluate(
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
    assert answers == expected
    assert "Paris" in answers[0]


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
