"""Page-level fuzzing of the shim in Chromium, on the echo model (``page_fuzz.js``).

Random page values (throwing getters, Proxies, cycles, Symbols, huge strings, odd
numbers, random messages, tool declarations, constraints, options) go through
``LanguageModel.create``/``availability``/``prompt``/``promptStreaming``/``append``/
``measureContextUsage``/``clone``/``destroy`` and the tool classes' constructors. Every
rejection must be a TypeError/RangeError, a DOMException with a spec name, or exactly the
value the page threw, of the page's realm (an iframe's runtime: of the iframe's); no call
hangs; no engine traceback reaches the console; a plain create() + prompt() still
answers. ``PROMPT_API_FUZZ_PAGE_CASES`` cases (default 100; the full run 1,000); the
seed is printed, and ``PROMPT_API_FUZZ_SEED`` replays it.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fuzz_support import env_int
from playwright.sync_api import ConsoleMessage, Page

from py_runtime.devtools.server import StaticServer

HERE = Path(__file__).resolve().parent
DIST = HERE.parents[1] / "dist"
SHIM = DIST / "language-model.js"
PAGE = b"""<!doctype html><meta charset=utf-8>
<script src="/_lm/language-model.js"></script>
<script src="/page_fuzz.js"></script>
<body style="min-height: 200px">fuzz</body>
"""

CI_SEED = 20250601

pytestmark = pytest.mark.skipif(
    not SHIM.is_file() and not os.environ.get("CI"), reason="dist/ is missing: build it first"
)


@pytest.fixture(scope="module")
def server() -> Iterator[StaticServer]:
    files: dict[str, Path | bytes] = {"/fuzz.html": PAGE, "/page_fuzz.js": HERE / "page_fuzz.js"}
    with StaticServer({"/_lm/": DIST}, files) as running:
        yield running


def test_random_page_values_give_only_spec_errors(page: Page, server: StaticServer) -> None:
    cases = env_int("PROMPT_API_FUZZ_PAGE_CASES", 100)
    # CI replays one seed (a failure there is never chance); elsewhere a new one each run.
    seed = env_int(
        "PROMPT_API_FUZZ_SEED", CI_SEED if os.environ.get("CI") else random.randrange(1, 2**31)
    )
    print(f"\n[page fuzz] seed {seed}, {cases} cases (PROMPT_API_FUZZ_SEED={seed} replays it)")
    console: list[str] = []
    errors: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        console.append(message.text)

    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", on_console)
    page.goto(f"{server.url}/fuzz.html")
    page.click("body")  # the echo model's first create() needs user activation
    started = time.monotonic()
    result: dict[str, Any] = page.evaluate("([s, n]) => runPageFuzz(s, n)", [seed, cases])
    page.evaluate("openFrame()")
    page.frame_locator("iframe").locator("body").click()
    realm: dict[str, Any] = page.evaluate("runRealmChecks()")
    elapsed = time.monotonic() - started
    # Uncaught page errors are the page's own (a throwing event listener, a rejected
    # promise nobody awaited): reported, not judged.
    print(f"[page fuzz] {elapsed:.1f} s, {len(errors)} uncaught page errors: {result['counts']}")
    if os.environ.get("PROMPT_API_FUZZ_VERBOSE"):
        for message, count in sorted(result["messages"].items(), key=lambda item: -item[1]):
            print(f"  {count:5} {message}")
    failures = result["failures"] + realm["failures"]
    assert not failures, f"seed {seed}: {len(failures)} failure(s): {failures[:20]}"
    assert result["answer"].endswith("the end")
    tracebacks = [text for text in console if "Traceback" in text or "internal error" in text]
    assert not tracebacks, f"seed {seed}: engine errors in the console: {tracebacks[:5]}"
