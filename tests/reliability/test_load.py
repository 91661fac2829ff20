"""Load: many prompts at once, a share of them aborted at random moments, on one session
of the real fixture model and across many sessions (``load_page.js``). Every promise
settles (an answer or an AbortError of the page's realm); each session's kept answers
equal its kept prompts replayed one by one on a fresh session (greedy), and so do its
``contextUsage`` and ``measureContextUsage()`` afterwards; the engine holds no session,
KV cache or tensor beyond those of live sessions at the end.

Sizes: ``PROMPT_API_LOAD_PROMPTS`` (default 100) prompts over 1 session and over
``PROMPT_API_LOAD_SESSIONS`` (default 20) sessions; ``PROMPT_API_FUZZ_SEED`` replays.
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
from playwright.sync_api import Page

from py_runtime.devtools.server import StaticServer

HERE = Path(__file__).resolve().parent
DIST = HERE.parents[1] / "dist"
FIXTURE = HERE.parents[1] / "tests" / "fixtures" / "tiny-qwen2-toolcall"
PAGE = b"""<!doctype html><meta charset=utf-8>
<script src="/_lm/language-model.js" data-model="/model/" data-dtype="q4"></script>
<script src="/load_page.js"></script><button id=go>go</button>
"""

pytestmark = pytest.mark.skipif(
    not (DIST / "language-model.js").is_file(), reason="dist/ is missing: build it first"
)


@pytest.fixture(scope="module")
def site() -> Iterator[StaticServer]:
    files: dict[str, Path | bytes] = {"/load.html": PAGE, "/load_page.js": HERE / "load_page.js"}
    with StaticServer({"/_lm/": DIST, "/model/": FIXTURE}, files) as server:
        yield server


def seed_of() -> int:
    seed = env_int("PROMPT_API_FUZZ_SEED", 20251201 if os.environ.get("CI") else 0)
    return seed or random.randrange(1, 2**31)


@pytest.mark.parametrize("sessions", [1, env_int("PROMPT_API_LOAD_SESSIONS", 20)])
def test_concurrent_prompts_with_random_aborts_all_settle_and_match_a_replay(
    page: Page, site: StaticServer, sessions: int
) -> None:
    prompts = env_int("PROMPT_API_LOAD_PROMPTS", 100)
    seed = seed_of()
    page.goto(f"{site.url}/load.html")
    page.click("#go")  # the model is downloadable: the first create() needs activation
    started = time.monotonic()
    result: dict[str, Any] = page.evaluate(
        "(o) => runLoad(o)",
        {"sessions": sessions, "prompts": prompts, "abortShare": 0.3, "seed": seed},
    )
    elapsed = time.monotonic() - started
    kept = sum(len(r["kept"]) for r in result["report"])
    print(
        f"\n[load] seed {seed}: {prompts} prompts over {sessions} session(s) in {elapsed:.1f} s:"
        f" {kept} answered, {result['aborted']} aborted"
    )
    assert set(result["errors"]) <= {"AbortError"}, f"seed {seed}: {set(result['errors'])}"
    assert kept + result["aborted"] == prompts
    assert 0 < result["aborted"] < prompts, "the aborts hit some prompts and not all"
    for index, report in enumerate(result["report"]):
        assert report["kept"] == report["replay"], f"seed {seed}: session {index}'s answers"
        assert report["usage"] == report["replayUsage"], f"seed {seed}: session {index}'s usage"
        assert report["measured"] == report["replayMeasured"]
    stats = page.evaluate("promptAPIRuntime.stats()")
    assert stats == {"sessions": 0, "caches": 0, "tensors": 0, "matchers": 0}, stats
