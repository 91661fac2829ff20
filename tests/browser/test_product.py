"""The built product in headless Chromium: offline, off the main thread, failing loudly."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page

from py_runtime.devtools.server import StaticServer

REPO_ROOT = Path(__file__).resolve().parents[2]
DIST = REPO_ROOT / "dist"

pytestmark = pytest.mark.needs_files(
    DIST / "language-model.js", reason="dist/ is missing: run `python3 build/build.py`"
)

CLASSIC_PAGE = b"""<!doctype html><meta charset=utf-8>
<script>
  window.longTasks = [];
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) longTasks.push(entry.duration);
  }).observe({ type: 'longtask', buffered: true });
</script>
<script src="/language-model.js"></script>
<button id=go>go</button>
"""

MODULE_PAGE = b"""<!doctype html><meta charset=utf-8>
<button id=go>go</button>
<script type=module>
  import { LanguageModel as Exported } from '/language-model.mjs';
  window.exportedIsGlobal = Exported === globalThis.LanguageModel;
</script>
"""

CREATE_AND_PROMPT = """async (text) => {
  const session = await LanguageModel.create();
  const answer = await session.prompt(text);
  return { answer, usage: session.contextUsage };
}"""


@pytest.fixture(scope="module")
def server() -> Iterator[StaticServer]:
    files = {"/classic.html": CLASSIC_PAGE, "/module.html": MODULE_PAGE}
    with StaticServer({"/": DIST}, files) as running:
        yield running


def test_page_makes_no_request_outside_its_origin(page: Page, server: StaticServer) -> None:
    requests: list[str] = []
    page.context.on("request", lambda request: requests.append(request.url))
    page.goto(f"{server.url}/classic.html")
    page.click("#go")
    result = page.evaluate(CREATE_AND_PROMPT, "offline?")
    assert result["answer"].endswith("offline?")
    # The worker's own loads are seen too (Pyodide's wasm, the engine's wheel).
    assert any(url.endswith("pyodide.asm.wasm") for url in requests)
    assert any(url.endswith(".whl") for url in requests)
    outside = [url for url in requests if not url.startswith(server.url + "/")]
    assert outside == []


def test_main_thread_has_no_long_task_during_boot_and_prompt(
    page: Page, server: StaticServer
) -> None:
    page.goto(f"{server.url}/classic.html")
    page.click("#go")
    page.evaluate(CREATE_AND_PROMPT, "Hello")
    assert page.evaluate("longTasks") == []


def test_es_module_build_installs_the_same_globals(page: Page, server: StaticServer) -> None:
    page.goto(f"{server.url}/module.html")
    page.wait_for_function("window.exportedIsGlobal !== undefined")
    assert page.evaluate("window.exportedIsGlobal") is True
    page.click("#go")
    assert page.evaluate(CREATE_AND_PROMPT, "module")["answer"].endswith("module")


def test_boot_failure_rejects_create_with_a_clear_message(page: Page) -> None:
    broken = {
        "/classic.html": CLASSIC_PAGE,
        "/pyodide/pyodide.asm.wasm": b"not wasm",
    }
    with StaticServer({"/": DIST}, broken) as running:
        page.goto(f"{running.url}/classic.html")
        page.click("#go")
        error = page.evaluate(
            """async () => {
              try { await LanguageModel.create(); return null; }
              catch (e) {
                const isDOMException = e instanceof DOMException;
                return { name: e.name, message: e.message, isDOMException };
              }
            }"""
        )
    assert error is not None
    assert error["name"] == "OperationError"
    assert error["isDOMException"] is True
    assert "failed to start" in error["message"]


def test_main_job_streams_the_echoed_answer() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "py_runtime", "prompt", "--model", "echo", "Hi from pytest"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=180,
        check=True,
    )
    assert completed.stdout.startswith("On-device model is not available in Chromium")
    assert completed.stdout.rstrip().endswith("Hi from pytest")
