"""``bench compare``: ours, Transformers.js and native onnxruntime, run by run."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

from ..server import StaticServer
from .pages import launch, mounts, page_path, record_page
from .report import Results, record


def chat_history(turns: int) -> list[dict[str, str]]:
    """A conversation of ``turns`` user/assistant pairs of filler text."""
    filler = "The quick brown fox jumps over the lazy dog while the sun sets slowly. "
    history = [{"role": "system", "content": "You are a helpful assistant."}]
    for turn in range(turns):
        history.append({"role": "user", "content": f"Question {turn}: " + filler * 2})
        history.append({"role": "assistant", "content": f"Answer {turn}: " + filler * 3})
    return history


def compare(
    model: Path,
    dtype: str,
    threads: list[int],
    runs: int,
    prompt: int,
    decode: int,
    dist: Path,
    history_turns: int = 6,
) -> Results:
    """Ours in the page, Transformers.js in the page and onnxruntime in CPython,
    alternating run by run, on the same model files, dtype and thread count; each page
    in a browser of its own, so that its peak memory is its own."""
    from playwright.sync_api import sync_playwright

    from ...hosts.cpython import local_model

    results: Results = {}

    def alternate(measures: dict[str, Callable[[], dict[str, Any]]]) -> None:
        """``runs`` rounds of each system's measure in turn, after a warm-up round."""
        for run in range(runs + 1):
            samples = {system: measure() for system, measure in measures.items()}
            if not run:
                continue  # the warm-up round
            for system, sample in samples.items():
                record(
                    results,
                    system,
                    prefill=sample.get("prefillTokensPerSecond"),
                    decode=sample.get("decodeTokensPerSecond"),
                    outside=sample.get("outsideRunShare"),
                    ttft=sample.get("ttftMs"),
                    history=sample.get("historyTokens"),
                )

    history = chat_history(history_turns)
    options = {"promptTokens": prompt, "decodeTokens": decode}
    with (
        StaticServer(mounts(dist, model)) as server,
        sync_playwright() as playwright,
        ThreadPoolExecutor(1) as pool,  # Playwright's sync API keeps an event loop here
    ):

        def native_speed(lm: Any) -> dict[str, Any]:
            return pool.submit(asyncio.run, lm.benchmark(prompt, decode)).result()

        for count in threads:
            ours_name = f"ours (page, wasm), {count} thread(s)"
            tjs_name = f"Transformers.js (page, wasm), {count} thread(s)"
            native = local_model(model, dtype, threads=count)
            pool.submit(asyncio.run, native.load(lambda _: None, lambda: False)).result()
            ours_browser, ours_pid = launch(playwright)
            ours = ours_browser.new_page()
            ours_query = {"data-model": "/_model/", "data-dtype": dtype, "data-threads": count}
            ours.goto(server.url + page_path("ours-speed.html", ours_query))
            tjs_browser, tjs_pid = launch(playwright)
            tjs = tjs_browser.new_page()
            tjs.goto(server.url + page_path("tjs-speed.html", {"dtype": dtype, "threads": count}))
            tjs.wait_for_function("window.tjsReady === true")
            turn = [history, "And now?"]
            alternate(
                {
                    ours_name: partial(
                        ours.evaluate, "(o) => promptAPIRuntime.benchmark(o)", options
                    ),
                    tjs_name: partial(tjs.evaluate, "(o) => benchmarkTransformersJs(o)", options),
                    f"onnxruntime (CPython), {count} thread(s)": partial(native_speed, native),
                }
            )
            alternate(
                {
                    ours_name: partial(ours.evaluate, "([h, q]) => secondTurn(h, q)", turn),
                    tjs_name: partial(
                        tjs.evaluate, "([h, q]) => secondTurnTransformersJs(h, q)", turn
                    ),
                }
            )
            record_page(results, ours_name, ours, ours_pid)
            record_page(results, tjs_name, tjs, tjs_pid)
            ours_browser.close()
            tjs_browser.close()
    return results
