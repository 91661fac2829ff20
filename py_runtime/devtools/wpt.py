"""Run WPT-style ``.window.js`` tests in headless Chromium against the shim.

Usage::

    python -m py_runtime.wpt [--dist DIR] [--model M] [--dtype D]
        [--device wasm|webgpu] [--timeout SECONDS] [--headed] [--via-extension] PATH...

Each test file is served inside a generated wrapper page, the way WPT's
server does, with ``/_lm/language-model.js`` (from ``dist/``) loaded first.
Prints ``PASS name`` / ``FAIL name: message`` / ``TIMEOUT name`` /
``NOTRUN name`` per subtest, a ``HARNESS <status> <path>: <message>`` line
for a harness that did not end OK, and finally ``N passed, N failed``.
``// META: variant=`` lines are ignored (the file runs once, unvaried).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO
from urllib.parse import unquote

from ..engine.vocabulary import TOOL_CALL_RESULTS
from . import models
from .browser import WEBGPU_ARGS, launch_args
from .wpt_host import DEFAULT_DIST, DEFAULT_TESTHARNESS, TEST_SUFFIXES, WptHost

if TYPE_CHECKING:
    from playwright.sync_api import ConsoleMessage, Page, Playwright
    from playwright.sync_api import Error as PlaywrightError

DEFAULT_TIMEOUT_S = 120.0

# Page -> runner messages, logged with console.debug (see wpt_resources/).
_RESULTS_PREFIX = "__wptresults__"
_DRIVER_PREFIX = "__testdriver__"

_DONE_JS = "([id, error]) => window.__testdriverDone && window.__testdriverDone(id, error)"
_SNAPSHOT_JS = "() => (window.__wptSnapshot ? window.__wptSnapshot() : [])"

_CLICK_TIMEOUT_MS = 5_000.0


# Results ------------------------------------------------------------------


@dataclass(frozen=True)
class SubtestResult:
    """One testharness subtest; status is PASS/FAIL/TIMEOUT/NOTRUN/..."""

    name: str
    status: str
    message: str = ""


@dataclass
class FileResult:
    """The outcome of one test file; harness_status is OK/ERROR/TIMEOUT/..."""

    path: Path
    harness_status: str
    harness_message: str = ""
    subtests: list[SubtestResult] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when the harness ended OK and every subtest passed."""
        return self.harness_status == "OK" and all(s.status == "PASS" for s in self.subtests)

    def failures(self) -> list[str]:
        """Human-readable lines for the harness error and non-PASS subtests."""
        return [line for line in format_result(self) if not line.startswith("PASS ")]


def _one_line(text: str) -> str:
    """Keep a result on one output line."""
    return text.replace("\r", "").replace("\n", "\\n")


def format_result(result: FileResult) -> list[str]:
    """Format a file's results as runner output lines."""
    lines: list[str] = []
    for sub in result.subtests:
        line = f"{sub.status} {_one_line(sub.name)}"
        if sub.status != "PASS" and sub.message:
            line += f": {_one_line(sub.message)}"
        lines.append(line)
    if result.harness_status != "OK":
        line = f"HARNESS {result.harness_status} {result.path}"
        if result.harness_message:
            line += f": {_one_line(result.harness_message)}"
        lines.append(line)
    return lines


def count_results(results: Iterable[FileResult]) -> tuple[int, int]:
    """Return (passed, failed): harness errors count as failures."""
    passed = failed = 0
    for result in results:
        for sub in result.subtests:
            if sub.status == "PASS":
                passed += 1
            else:
                failed += 1
        if result.harness_status != "OK":
            failed += 1
    return passed, failed


# Running ------------------------------------------------------------------


def _subtests(raw: Any) -> list[SubtestResult]:
    """Convert the page's JSON test list."""
    return [
        SubtestResult(str(t.get("name", "")), str(t.get("status", "")), str(t.get("message", "")))
        for t in raw or []
    ]


class _PageChannel:
    """Collects what one test page reports through its console."""

    def __init__(self, path: Path, url: str, log: TextIO | None) -> None:
        self.path = path
        self.url = _normalize_url(url)
        self.log = log
        self.clicks: deque[dict[str, Any]] = deque()
        self.results: dict[str, Any] | None = None
        self.crashed = False

    def _payload(self, text: str, prefix: str) -> dict[str, Any] | None:
        """Decode a message meant for us from this very page, else None."""
        try:
            payload = json.loads(text[len(prefix) :])
        except ValueError:
            return None
        if not isinstance(payload, dict) or _normalize_url(str(payload.get("url"))) != self.url:
            return None
        return payload

    def on_console(self, message: ConsoleMessage) -> None:
        """Route a console message: results, click requests or a log line."""
        text = message.text
        if text.startswith(_RESULTS_PREFIX):
            if (payload := self._payload(text, _RESULTS_PREFIX)) is not None:
                self.results = payload
        elif text.startswith(_DRIVER_PREFIX):
            if (payload := self._payload(text, _DRIVER_PREFIX)) is not None:
                self.clicks.append(payload)
        elif message.type == "error":
            source = message.location.get("url", "")
            if text.startswith("Failed to load resource"):
                if source.endswith("/favicon.ico"):
                    return
                text = f"{text}: {source}"
            self.print(f"[console.error] {text}")

    def on_page_error(self, error: PlaywrightError) -> None:
        """Log an uncaught exception of the page."""
        self.print(f"[pageerror] {error.stack or error.message}")

    def on_crash(self, _page: Page) -> None:
        """Note that the renderer crashed."""
        self.crashed = True

    def print(self, line: str) -> None:
        """Write a diagnostic line to the log, if any."""
        if self.log is not None:
            print(f"{self.path.name}: {line}", file=self.log, flush=True)


def _normalize_url(url: str) -> str:
    """Compare URLs without fragment and percent-encoding differences."""
    return unquote(url.split("#", 1)[0])


def _click(page: Page, channel: _PageChannel, request: dict[str, Any], deadline: float) -> None:
    """Perform one test_driver click with real Playwright input."""
    remaining_ms = max(1.0, (deadline - time.monotonic()) * 1000)
    try:
        page.click(str(request["selector"]), timeout=min(_CLICK_TIMEOUT_MS, remaining_ms))
    except Exception as exc:  # noqa: BLE001 - reported to the page instead
        error = (str(exc).splitlines() or [type(exc).__name__])[0]
        channel.print(f"[testdriver] click on {request['selector']} failed: {error}")
        # Only on failure: evaluating script gives the page a user gesture.
        with contextlib.suppress(Exception):
            page.evaluate(_DONE_JS, [request.get("id"), error])


def run_wpt_file(
    page: Page,
    host: WptHost,
    path: Path,
    timeout: float = DEFAULT_TIMEOUT_S,
    log: TextIO | None = sys.stderr,
) -> FileResult:
    """Load one test file in ``page`` and collect its testharness results.

    The runner never evaluates script in the page while the tests run
    (Playwright evaluates with a user gesture, which would give the page
    activation); it only reads console messages and clicks.
    """
    from playwright.sync_api import Error as PlaywrightError

    path = Path(path)
    url = host.url_for(path)
    channel = _PageChannel(path, url, log)
    page.on("console", channel.on_console)
    page.on("pageerror", channel.on_page_error)
    page.on("crash", channel.on_crash)
    deadline = time.monotonic() + timeout
    try:
        page.goto(url, wait_until="commit", timeout=timeout * 1000)
        while channel.results is None:
            if channel.crashed:
                return FileResult(path, "ERROR", "the page crashed", [])
            while channel.clicks:
                _click(page, channel, channel.clicks.popleft(), deadline)
            remaining_ms = (deadline - time.monotonic()) * 1000
            if remaining_ms <= 0:
                message = f"no harness results after {timeout:g} s"
                return FileResult(path, "TIMEOUT", message, _snapshot(page))
            page.wait_for_timeout(min(50.0, remaining_ms))
    except PlaywrightError as exc:
        return FileResult(path, "ERROR", f"browser error: {exc.message}", _snapshot(page))
    finally:
        page.remove_listener("console", channel.on_console)
        page.remove_listener("pageerror", channel.on_page_error)
        page.remove_listener("crash", channel.on_crash)
    raw = channel.results
    return FileResult(
        path, str(raw.get("status", "")), str(raw.get("message", "")), _subtests(raw.get("tests"))
    )


def run_wpt_file_via_extension(
    playwright: Playwright,
    host: WptHost,
    path: Path,
    timeout: float = DEFAULT_TIMEOUT_S,
    extension: Path | None = None,
    headless: bool = True,
    extra_args: list[str] | None = None,
    log: TextIO | None = sys.stderr,
) -> FileResult:
    """Run one file in a fresh Chromium with the extension installed and configured
    for ``host``'s model; ``host`` must serve pages without our script."""
    from .extension import DEFAULT_EXTENSION, extension_browser

    if not host.via_extension:
        raise ValueError("the host must be made with via_extension=True")
    settings = {**host.extension_settings(path), "install": "force"}
    with extension_browser(
        playwright, extension or DEFAULT_EXTENSION, settings, headless, extra_args
    ) as browser:
        return run_wpt_file(browser.context.new_page(), host, path, timeout, log)


def _snapshot(page: Page) -> list[SubtestResult]:
    """Best-effort list of the subtests known to an unfinished harness."""
    try:
        return _subtests(page.evaluate(_SNAPSHOT_JS))
    except Exception:  # noqa: BLE001 - the page may be gone
        return []


def collect_test_files(paths: Iterable[Path]) -> list[Path]:
    """Expand directories into their ``.window.js``/``.any.js`` files."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*.js") if p.name.endswith(TEST_SUFFIXES)))
        else:
            files.append(path)
    return files


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Parse the command line."""
    parser = argparse.ArgumentParser(
        prog="python -m py_runtime.wpt", description=(__doc__ or "").split("\n\n")[0]
    )
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH")
    parser.add_argument("--dist", type=Path, default=DEFAULT_DIST, help="built shim directory")
    parser.add_argument("--model", help="model id, URL or local directory")
    parser.add_argument("--dtype", help="model dtype (e.g. q4, fp32)")
    parser.add_argument("--device", choices=["wasm", "webgpu"], help="execution device")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, help="seconds per file")
    parser.add_argument("--headed", action="store_true", help="show the browser")
    parser.add_argument(
        "--tool-call-results",
        choices=TOOL_CALL_RESULTS,
        default="when-called",
        help="when prompt() returns a list: only for an answer with a tool call (default), "
        "or whenever expectedOutputs lists tool-call (Chromium's newer WPT)",
    )
    parser.add_argument(
        "--via-extension",
        action="store_true",
        help="run the files with the built extension (DIST/extension) loaded, on pages that "
        "never load our script; --model, --dtype and --device become its settings",
    )
    parser.add_argument(
        "--testharness", type=Path, default=DEFAULT_TESTHARNESS, help="testharness.js to serve"
    )
    parser.add_argument(
        "--timeout-multiplier",
        type=float,
        help="scale testharness and per-file timeouts (default 10 with --device webgpu, else 1)",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    args = _parse_args(argv)
    files = collect_test_files(args.paths)
    missing = [f for f in files if not f.is_file()]
    if missing or not files:
        for f in missing:
            print(f"error: no such test file: {f}", file=sys.stderr)
        if not files:
            print("error: no test files found", file=sys.stderr)
        return 2
    if not (args.dist / "language-model.js").is_file():
        print(f"warning: {args.dist / 'language-model.js'} does not exist", file=sys.stderr)
    try:
        multiplier = args.timeout_multiplier or (10 if args.device == "webgpu" else 1)
        model, dtype = models.resolve(args.model), args.dtype or models.default_dtype(args.model)
        host = WptHost(
            args.dist,
            model,
            dtype,
            args.device,
            args.testharness,
            multiplier,
            args.tool_call_results,
            args.via_extension,
        )
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    from playwright.sync_api import sync_playwright

    extra = WEBGPU_ARGS if args.device == "webgpu" else None
    options = launch_args(extra)
    options["headless"] = not args.headed
    results: list[FileResult] = []
    if args.via_extension:
        with host, sync_playwright() as playwright:
            for test_file in files:
                print(f"== {test_file}", file=sys.stderr, flush=True)
                result = run_wpt_file_via_extension(
                    playwright,
                    host,
                    test_file,
                    args.timeout * multiplier,
                    args.dist / "extension",
                    headless=not args.headed,
                    extra_args=extra,
                )
                results.append(result)
                for line in format_result(result):
                    print(line, flush=True)
        passed, failed = count_results(results)
        print(f"{passed} passed, {failed} failed", flush=True)
        return 0 if failed == 0 and passed > 0 else 1
    with host, sync_playwright() as playwright:
        browser = playwright.chromium.launch(**options)
        try:
            for test_file in files:
                print(f"== {test_file}", file=sys.stderr, flush=True)
                context = browser.new_context()
                try:
                    timeout = args.timeout * multiplier
                    result = run_wpt_file(context.new_page(), host, test_file, timeout)
                finally:
                    context.close()
                results.append(result)
                for line in format_result(result):
                    print(line, flush=True)
        finally:
            browser.close()
    passed, failed = count_results(results)
    print(f"{passed} passed, {failed} failed", flush=True)
    return 0 if failed == 0 and passed > 0 else 1
