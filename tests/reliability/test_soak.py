"""Soak: prompts one after another on one session of the real fixture model, with a
context window small enough that it evicts all along, then create/append/clone/
prompt/destroy cycles (``load_page.js``). Memory is sampled as it goes: the page's
renderer RSS (page and worker: JS heaps, Pyodide's and ONNX Runtime's wasm memories)
and ``performance.measureUserAgentSpecificMemory()`` (which never answers while ONNX
Runtime Web's thread pool lives, whose workers block in Atomics.wait: the page runs
it on one thread); after the warm-up it stays flat
within 10 %, and the engine holds no session, KV cache, tensor or grammar matcher
once every session is destroyed.

Sizes: ``PROMPT_API_SOAK_PROMPTS`` (default 200; the full run 1,000) and
``PROMPT_API_SOAK_CYCLES`` (default 100; the full run 500).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from statistics import mean
from typing import Any

import pytest
from fuzz_support import env_int
from playwright.sync_api import Playwright

from py_runtime.devtools.browser import launch_args
from py_runtime.devtools.memory import chromium_browsers, page_rss_mib
from py_runtime.devtools.server import StaticServer

HERE = Path(__file__).resolve().parent
DIST = HERE.parents[1] / "dist"
FIXTURE = HERE.parents[1] / "tests" / "fixtures" / "tiny-qwen2-toolcall"
PAGE = b"""<!doctype html><meta charset=utf-8>
<script src="/_lm/language-model.js" data-model="/model/" data-dtype="q4"
  data-context-window="256" data-threads="1"></script>
<script src="/load_page.js"></script><button id=go>go</button>
"""
SAMPLE = """async () => ({
  ua: (await performance.measureUserAgentSpecificMemory()).bytes / 2 ** 20,
  ...await promptAPIRuntime.stats(),
})"""
#: Memory is sampled after each of this many steps of each phase.
STEPS = 10
#: Lets measureUserAgentSpecificMemory() answer at once instead of at the next GC.
EAGER_MEMORY = "--enable-blink-features=ForceEagerMeasureMemory"

pytestmark = pytest.mark.skipif(
    not (DIST / "language-model.js").is_file(), reason="dist/ is missing: build it first"
)


@pytest.fixture(scope="module")
def site() -> Iterator[StaticServer]:
    files: dict[str, Path | bytes] = {"/soak.html": PAGE, "/load_page.js": HERE / "load_page.js"}
    with StaticServer({"/_lm/": DIST, "/model/": FIXTURE}, files) as server:
        yield server


def growth(samples: list[dict[str, Any]], key: str) -> float:
    """The last three samples' mean over the first three's after the warm-up (the
    first fifth of the samples), minus 1."""
    settled = samples[len(samples) // 5 :]
    first, last = mean(s[key] for s in settled[:3]), mean(s[key] for s in settled[-3:])
    return last / first - 1


def test_memory_stays_flat_over_prompts_with_eviction_and_session_cycles(
    playwright: Playwright, site: StaticServer
) -> None:
    prompts = env_int("PROMPT_API_SOAK_PROMPTS", 200)
    cycles = env_int("PROMPT_API_SOAK_CYCLES", 100)
    before = chromium_browsers()
    browser = playwright.chromium.launch(**launch_args([EAGER_MEMORY]))
    try:
        (pid,) = chromium_browsers() - before
        page = browser.new_page()
        page.goto(f"{site.url}/soak.html")
        page.click("#go")
        started = time.monotonic()
        samples: list[dict[str, Any]] = []

        def sample(phase: str) -> None:
            samples.append({"label": phase, "rss": page_rss_mib(pid), **page.evaluate(SAMPLE)})

        for _ in range(STEPS):
            result = page.evaluate("(n) => soakPrompts(n)", max(1, prompts // STEPS))
            sample("prompt")
        for _ in range(STEPS):
            page.evaluate("(n) => soakCycles(n)", max(1, cycles // STEPS))
            sample("cycle")
        elapsed = time.monotonic() - started
        final = page.evaluate("promptAPIRuntime.stats()")
    finally:
        browser.close()
    by_phase = {phase: [s for s in samples if s["label"] == phase] for phase in ("prompt", "cycle")}
    print(
        f"\n[soak] {prompts} prompts ({result['overflows']} context overflows, window"
        f" {result['window']}) and {cycles} cycles in {elapsed:.0f} s"
    )
    for phase, rows in by_phase.items():
        print(
            f"[soak] {phase}s: RSS {rows[0]['rss']:.0f} -> {rows[-1]['rss']:.0f} MiB"
            f" ({growth(rows, 'rss'):+.1%} after warm-up), UA memory {rows[0]['ua']:.1f} ->"
            f" {rows[-1]['ua']:.1f} MiB ({growth(rows, 'ua'):+.1%})"
        )
    assert result["overflows"] > 0, "the window is small enough to evict"
    for phase, rows in by_phase.items():
        assert growth(rows, "rss") < 0.10, f"{phase}s: renderer memory grew"
        assert growth(rows, "ua") < 0.10, f"{phase}s: measured memory grew"
    # While prompting, one session and its one cache; between cycles, none.
    assert {(s["sessions"], s["caches"]) for s in by_phase["prompt"]} == {(1, 1)}
    assert {(s["sessions"], s["caches"]) for s in by_phase["cycle"]} == {(0, 0)}
    assert final == {"sessions": 0, "caches": 0, "tensors": 0, "matchers": 0}, final
