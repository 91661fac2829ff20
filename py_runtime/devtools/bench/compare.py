"""``bench compare``: ours, Transformers.js, native onnxruntime and (for SmolLM2, on the
same weights at Q8_0) wllama, run by run."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

from .. import engine
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


def cpu_busy(seconds: float = 0.5) -> float:
    """The machine's busy share of CPU time over ``seconds`` (/proc/stat)."""

    def sample() -> tuple[int, int]:
        fields = [int(v) for v in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
        idle = fields[3] + fields[4]  # idle, iowait
        return sum(fields) - idle, sum(fields)

    busy, total = sample()
    time.sleep(seconds)
    busy2, total2 = sample()
    return (busy2 - busy) / max(total2 - total, 1)


def settle(limit: float = 60.0, threshold: float = 0.1) -> None:
    """Wait (up to ``limit`` seconds) for the machine to fall idle: the browsers left
    open for the other systems compile and tier up their wasm in the background for
    seconds after their pages load, which would slow whichever system runs then."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and cpu_busy() > threshold:
        pass


def llama_server_speed(url: str, runs: Iterator[int], prompt: int, decode: int) -> dict[str, Any]:
    """Native llama.cpp's own timings for one completion (as ``benchmarkWllama``)."""
    run = next(runs)
    words = " ".join(["the", "fox", "runs"][i % 3] for i in range(prompt - 2))
    body = {
        "prompt": f"Run {run}: {words}",
        "n_predict": decode,
        "temperature": 0,
        "ignore_eos": True,
        "cache_prompt": False,
    }
    request = urllib.request.Request(
        url.removesuffix("/v1") + "/completion",
        json.dumps(body).encode(),
        {"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=600) as response:  # noqa: S310
        timings = json.load(response)["timings"]
    return {
        "prefillTokensPerSecond": timings["prompt_per_second"],
        "decodeTokensPerSecond": timings["predicted_per_second"],
    }


def compare(
    model: Path,
    dtype: str,
    threads: list[int],
    runs: int,
    prompt: int,
    decode: int,
    dist: Path,
    gguf: Path | None = None,
    history_turns: int = 6,
    tjs_model: Path | None = None,
) -> Results:
    """Ours in the page, Transformers.js in the page and onnxruntime in CPython (and,
    when ``gguf`` holds the same weights, wllama in the page and native llama.cpp),
    alternating run by run, on the same model files, dtype and thread count; each page
    in a browser of its own, so that its peak memory is its own. ``tjs_model``: another
    export of the same weights (the one a user would download for Transformers.js),
    which Transformers.js also runs."""
    from playwright.sync_api import sync_playwright

    from ...hosts.cpython import local_model

    results: Results = {}

    def alternate(measures: dict[str, Callable[[], dict[str, Any]]]) -> None:
        """``runs`` rounds of each system's measure in turn, after a warm-up round."""
        for run in range(runs + 1):
            samples = {}
            for system, measure in measures.items():
                settle()
                samples[system] = measure()
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
        StaticServer(mounts(dist, model, gguf, tjs_model)) as server,
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
            turn = [history, "And now?"]
            speed = {
                ours_name: partial(ours.evaluate, "(o) => promptAPIRuntime.benchmark(o)", options),
            }
            second = {
                ours_name: partial(ours.evaluate, "([h, q]) => secondTurn(h, q)", turn),
            }
            pages = [(ours_name, ours_browser, ours, ours_pid)]
            tjs_folders = {"": "_model"}
            if tjs_model:
                tjs_folders[", Optimum's export"] = "_tjs_model"
            for label, folder in tjs_folders.items():
                tjs_name = f"Transformers.js{label} (page, wasm), {count} thread(s)"
                tjs_browser, tjs_pid = launch(playwright)
                tjs = tjs_browser.new_page()
                query = {"dtype": dtype, "threads": count, "model": folder}
                tjs.goto(server.url + page_path("tjs-speed.html", query))
                tjs.wait_for_function("window.tjsReady === true")
                benchmark = "(o) => benchmarkTransformersJs(o)"
                speed[tjs_name] = partial(tjs.evaluate, benchmark, options)
                second[tjs_name] = partial(
                    tjs.evaluate, "([h, q]) => secondTurnTransformersJs(h, q)", turn
                )
                pages.append((tjs_name, tjs_browser, tjs, tjs_pid))
            speed[f"onnxruntime (CPython), {count} thread(s)"] = partial(native_speed, native)
            if gguf is not None:
                quant = gguf.stem.rsplit("-", 1)[-1]
                wllama_name = f"wllama {quant} (page, wasm), {count} thread(s)"
                wllama_browser, wllama_pid = launch(playwright)
                wllama = wllama_browser.new_page()
                query = {"threads": count, "gguf": gguf.name}
                wllama.goto(server.url + page_path("wllama-speed.html", query))
                wllama.wait_for_function("window.wllamaReady === true", timeout=300_000)
                speed[wllama_name] = partial(wllama.evaluate, "(o) => benchmarkWllama(o)", options)
                second[wllama_name] = partial(
                    wllama.evaluate, "([h, q]) => secondTurnWllama(h, q)", turn
                )
                pages.append((wllama_name, wllama_browser, wllama, wllama_pid))
            with contextlib.ExitStack() as native_engine:
                if gguf is not None:
                    url = native_engine.enter_context(engine.serve(threads=count, model=gguf))
                    name = f"llama.cpp {quant} (native llama-server), {count} thread(s)"
                    counter = itertools.count()
                    speed[name] = partial(llama_server_speed, url, counter, prompt, decode)
                alternate(speed)
            alternate(second)
            for name, browser, page, pid in pages:
                record_page(results, name, page, pid)
                browser.close()
    return results
