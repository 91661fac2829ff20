"""Run WPT-style ``.window.js`` tests in headless Chromium against the shim.

Usage::

    python -m py_runtime.wpt [--dist DIR] [--model M] [--dtype D]
        [--device wasm|webgpu] [--timeout SECONDS] [--headed] PATH...

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
import html
import json
import re
import sys
import time
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, TextIO
from urllib.parse import quote, unquote

from py_runtime.host.browser import WEBGPU_ARGS, launch_args
from py_runtime.host.server import StaticServer

if TYPE_CHECKING:
    from playwright.sync_api import ConsoleMessage, Page
    from playwright.sync_api import Error as PlaywrightError

REPO_ROOT = Path(__file__).resolve().parent.parent
RESOURCES_DIR = Path(__file__).resolve().parent / "host" / "wpt_resources"
DEFAULT_DIST = REPO_ROOT / "dist"
DEFAULT_TESTHARNESS = REPO_ROOT / "node_modules" / "wpt-runner" / "testharness" / "testharness.js"
DEFAULT_TIMEOUT_S = 120.0
TEST_SUFFIXES = (".window.js", ".any.js")

_META_RE = re.compile(r"^//\s*META:\s*(\w+)=(.*)$")

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


# Serving ------------------------------------------------------------------


@dataclass(frozen=True)
class TestMetadata:
    """The ``// META:`` header of a test file."""

    title: str | None = None
    scripts: tuple[str, ...] = ()
    timeout_long: bool = False


def read_metadata(source: str) -> TestMetadata:
    """Parse leading ``// META: key=value`` lines as WPT does."""
    title: str | None = None
    scripts: list[str] = []
    timeout_long = False
    for line in source.splitlines():
        if not line.startswith("//"):
            break
        match = _META_RE.match(line.strip())
        if match is None:
            continue
        key, value = match.group(1), match.group(2).strip()
        if key == "title":
            title = value
        elif key == "script":
            scripts.append(value)
        elif key == "timeout":
            timeout_long = value == "long"
    return TestMetadata(title=title, scripts=tuple(scripts), timeout_long=timeout_long)


def find_wpt_root(path: Path) -> Path:
    """Pick the directory served at ``/`` for a test file."""
    path = path.resolve()
    parents = list(path.parents)
    for parent in parents:
        if parent.name == "wpt":
            return parent
    for parent in parents:
        if parent.name == "ai":
            return parent.parent
    return path.parent.parent


def wrapper_name(test_file_name: str) -> str:
    """Map ``x.window.js`` / ``x.any.js`` to the wrapper page's file name."""
    for suffix in TEST_SUFFIXES:
        if test_file_name.endswith(suffix):
            return test_file_name[: -len(".js")] + ".html"
    return test_file_name.removesuffix(".js") + ".window.html"


_ANY_GLOBAL = """<script>
self.GLOBAL = {
  isWindow: function() { return true; },
  isWorker: function() { return false; },
  isShadowRealm: function() { return false; },
};
</script>"""


def shim_script(shim_attrs: dict[str, str]) -> str:
    """The script tag that loads the product, with its configuration."""
    attrs = "".join(f' data-{name}="{html.escape(value)}"' for name, value in shim_attrs.items())
    return f'<script src="/_lm/language-model.js"{attrs}></script>'


def render_wrapper(
    test_file_name: str,
    meta: TestMetadata,
    shim_attrs: dict[str, str],
    timeout_multiplier: float = 1,
) -> bytes:
    """Build the HTML page that runs one test file, like WPT's wrapper."""
    esc = html.escape
    parts = ["<!doctype html>", "<meta charset=utf-8>"]
    if meta.title is not None:
        parts.append(f"<title>{esc(meta.title, quote=False)}</title>")
    if meta.timeout_long:
        parts.append('<meta name="timeout" content="long">')
    parts.append(shim_script(shim_attrs))
    if test_file_name.endswith(".any.js"):
        parts.append(_ANY_GLOBAL)
    parts.append('<script src="/resources/testharness.js"></script>')
    parts.append('<script src="/resources/testharnessreport.js"></script>')
    if timeout_multiplier != 1:  # as wptrunner's --timeout-multiplier
        parts.append(f"<script>setup({{timeout_multiplier: {timeout_multiplier:g}}});</script>")
    parts.extend(f'<script src="{esc(src)}"></script>' for src in meta.scripts)
    # As in WPT, the log div comes first, so the test runs with a document.body.
    parts.append("<div id=log></div>")
    parts.append(f'<script src="{esc(quote(test_file_name))}"></script>')
    return ("\n".join(parts) + "\n").encode()


class WptHost:
    """Serves test files (one server per WPT root) with our overrides."""

    def __init__(
        self,
        dist: Path | None = None,
        model: str | None = None,
        dtype: str | None = None,
        device: str | None = None,
        testharness: Path | None = None,
        timeout_multiplier: float = 1,
    ) -> None:
        self.timeout_multiplier = timeout_multiplier
        self.dist = Path(dist) if dist is not None else DEFAULT_DIST
        self.testharness = Path(testharness) if testharness is not None else DEFAULT_TESTHARNESS
        if not self.testharness.is_file():
            raise FileNotFoundError(
                f"testharness.js not found at {self.testharness} (run `npm install`)"
            )
        self.model = model
        self.dtype = dtype
        self.device = device
        self._model_dir = Path(model).resolve() if model and Path(model).is_dir() else None
        self._servers: dict[Path, StaticServer] = {}

    def _files(self) -> dict[str, Path | bytes]:
        """The fixed override files every server answers."""
        files: dict[str, Path | bytes] = {
            "/resources/testharness.js": self.testharness,
            "/resources/testharnessreport.js": RESOURCES_DIR / "testharnessreport.js",
            "/resources/testdriver.js": RESOURCES_DIR / "testdriver.js",
            "/resources/testdriver-vendor.js": RESOURCES_DIR / "testdriver-vendor.js",
            "/ai/resources/util.js": RESOURCES_DIR / "ai" / "resources" / "util.js",
        }
        extras = {"idlharness.js": "idlharness.js", "WebIDLParser.js": "webidl2.js"}
        for url_name, file_name in extras.items():
            candidate = self.testharness.parent / file_name
            if candidate.is_file():
                files[f"/resources/{url_name}"] = candidate
        return files

    def server_for(self, root: Path) -> StaticServer:
        """Return the (started) server whose ``/`` is ``root``."""
        root = root.resolve()
        server = self._servers.get(root)
        if server is None:
            mounts = {"/": root, "/_lm/": self.dist}
            # Media the multimodal tests load, where the tree under test has none.
            for folder in ("media", "images"):
                if not (root / folder).is_dir():
                    mounts[f"/{folder}/"] = RESOURCES_DIR / folder
            if self._model_dir is not None:
                mounts[f"/_models/{self._model_dir.name}/"] = self._model_dir
            server = StaticServer(mounts, self._files()).start()
            # Pages of the tree itself (iframes, .html tests) get the shim too.
            server.html_injection = shim_script(self.shim_attrs(server)).encode()
            self._servers[root] = server
        return server

    def shim_attrs(self, server: StaticServer) -> dict[str, str]:
        """The ``data-*`` attributes for the shim's script tag."""
        attrs: dict[str, str] = {}
        if self._model_dir is not None:
            attrs["model"] = f"{server.url}/_models/{quote(self._model_dir.name)}/"
        elif self.model:
            attrs["model"] = self.model
        if self.dtype:
            attrs["dtype"] = self.dtype
        if self.device:
            attrs["device"] = self.device
        return attrs

    def url_for(self, path: Path) -> str:
        """Register the wrapper page for a test file and return its URL."""
        path = Path(path).resolve()
        root = find_wpt_root(path)
        server = self.server_for(root)
        relative_dir = path.parent.relative_to(root).as_posix()
        prefix = "/" if relative_dir == "." else f"/{relative_dir}/"
        page_path = prefix + wrapper_name(path.name)
        meta = read_metadata(path.read_text(encoding="utf-8"))
        page = render_wrapper(path.name, meta, self.shim_attrs(server), self.timeout_multiplier)
        server.add_file(page_path, page)
        return server.url + quote(page_path)

    def close(self) -> None:
        """Stop every server."""
        for server in self._servers.values():
            server.stop()
        self._servers.clear()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


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
        host = WptHost(args.dist, args.model, args.dtype, args.device, args.testharness, multiplier)
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    from playwright.sync_api import sync_playwright

    options = launch_args(WEBGPU_ARGS if args.device == "webgpu" else None)
    options["headless"] = not args.headed
    results: list[FileResult] = []
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


if __name__ == "__main__":
    raise SystemExit(main())
