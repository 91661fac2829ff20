"""Greedy answers from a model folder, in the page and under CPython, for parity tests.

Both run the same engine and generation loop; only the backend differs (ONNX Runtime
Web in the page, onnxruntime in CPython). Imported by the browser test modules.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from playwright.sync_api import Page

from py_runtime.devtools.wpt_host import WptHost

DIST = Path(__file__).resolve().parents[2] / "dist"


def page_answers(page: Page, folder: Path, dtype: str, prompts: list[str]) -> list[str]:
    """The page's greedy answers to ``prompts``, with ``folder`` as its model."""
    page_html = f"""<!doctype html><meta charset=utf-8>
    <script src="/_lm/language-model.js" data-model="/_models/{folder.name}/"
            data-dtype="{dtype}"></script><button id=go>go</button>"""
    with WptHost(DIST, model=str(folder), dtype=dtype) as host:
        server = host.server_for(folder.parent)
        server.add_file("/parity.html", page_html.encode())
        page.goto(f"{server.url}/parity.html")
        page.click("#go")  # user activation: the model is downloadable until created
        answers: list[str] = page.evaluate(
            """async (prompts) => {
              const answers = [];
              for (const prompt of prompts) {
                const session = await LanguageModel.create({samplingMode: 'most-predictable'});
                answers.push(await session.prompt(prompt));
              }
              return answers;
            }""",
            prompts,
        )
    return answers


def cpython_answers(folder: Path, dtype: str, prompts: list[str]) -> list[str]:
    """The same prompts through the engine and onnxruntime under CPython."""
    from py_runtime.engine.runtime import Runtime
    from py_runtime.hosts.cpython import local_model

    async def run() -> list[str]:
        runtime = Runtime(local_model(folder, dtype))  # type: ignore[arg-type]
        answers = []
        for prompt in prompts:
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
