"""The browser extension (dist/extension/), loaded into headless Chromium.

Every WPT-style file passes through it on pages that never load our script; one
engine serves every tab (one download per model); a page can reach only its own
sessions, and a closed tab's sessions are destroyed; the extension-only members
work in its own pages; the settings decide where the API is installed.
"""

from __future__ import annotations

import json
import re
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from playwright.sync_api import Page, Playwright

from py_runtime.devtools.extension import DEFAULT_EXTENSION, ExtensionBrowser, extension_browser
from py_runtime.devtools.server import StaticServer
from py_runtime.devtools.wpt import run_wpt_file_via_extension
from py_runtime.devtools.wpt_host import DEFAULT_TESTHARNESS, WptHost
from py_runtime.engine.vocabulary import PARAMS

REPO_ROOT = Path(__file__).resolve().parents[2]
DIST = REPO_ROOT / "dist"
FIXTURE = REPO_ROOT / "tests" / "fixtures" / "tiny-qwen2-toolcall"
WPT_DIRS = [REPO_ROOT / "tests" / "wpt", REPO_ROOT.parent / "shared" / "wpt"]
WPT_FILES = [p for d in WPT_DIRS if d.is_dir() for p in sorted(d.rglob("*.window.js"))]
FIXTURE_FILE = (
    REPO_ROOT / "tests/wpt-models/ai/language-model/tiny-qwen2-toolcall.tentative.https.window.js"
)

pytestmark = [
    pytest.mark.needs_files(
        DEFAULT_EXTENSION / "manifest.json", reason="dist/extension is missing: build dist/"
    ),
    pytest.mark.needs_files(DEFAULT_TESTHARNESS, reason="run `npm install`"),
]

PAGE = b"<!doctype html><meta charset=utf-8><title>a page</title><body>a page</body>"


def _id(path: Path) -> str:
    base = REPO_ROOT if path.is_relative_to(REPO_ROOT) else REPO_ROOT.parent
    return path.relative_to(base).as_posix()


@pytest.fixture(scope="module")
def echo_host() -> Iterator[WptHost]:
    with WptHost(DIST, via_extension=True) as host:
        yield host


@pytest.fixture
def extension(playwright: Playwright) -> Iterator[ExtensionBrowser]:
    with extension_browser(playwright) as browser:
        yield browser


@pytest.fixture
def site() -> Iterator[StaticServer]:
    """Plain pages that load nothing of ours, and the fixture model."""
    files = {f"/{name}.html": PAGE for name in ("a", "b")}
    with StaticServer({"/model/": FIXTURE}, files) as server:
        yield server


def _bless(page: Page) -> None:
    page.click("body")  # user activation: the first create() of a model downloads it


@pytest.mark.parametrize("path", WPT_FILES, ids=[_id(p) for p in WPT_FILES])
def test_wpt_file_passes_via_extension(playwright: Playwright, echo_host: WptHost, path: Path):
    result = run_wpt_file_via_extension(playwright, echo_host, path)
    assert result.harness_status == "OK", result.harness_message
    assert result.subtests and not result.failures(), result.failures()


def test_the_fixture_wpt_file_passes_via_extension(playwright: Playwright):
    with WptHost(DIST, model=str(FIXTURE), dtype="q4", via_extension=True) as host:
        result = run_wpt_file_via_extension(playwright, host, FIXTURE_FILE)
    assert result.harness_status == "OK", result.harness_message
    assert result.subtests and not result.failures(), result.failures()


def test_auto_mode_installs_where_the_native_api_is_unavailable(extension, site):
    status = extension.status()
    # Debian's Chromium has a LanguageModel, which answers "unavailable" (no model).
    assert status["native"] == "unavailable"
    assert status["installs"] is True
    page = extension.context.new_page()
    page.goto(f"{site.url}/a.html")
    assert page.evaluate("typeof promptAPIRuntime === 'object'")
    assert page.evaluate("'params' in LanguageModel") is False, "params() is extension-only"
    assert page.evaluate("typeof LanguageModelToolCall === 'function'")


def test_a_blocked_site_gets_nothing(extension, site):
    extension.configure({"blocked": [site.url]})
    page = extension.context.new_page()
    page.goto(f"{site.url}/a.html")
    assert page.evaluate("typeof promptAPIRuntime") == "undefined"
    extension.configure({"blocked": []})
    page.reload()
    assert page.evaluate("typeof promptAPIRuntime") == "object"


def test_two_tabs_share_one_engine_and_one_download(extension, site):
    extension.configure({"model": f"{site.url}/model/", "dtype": "q4"})
    answers = []
    for name in ("a", "b"):
        page = extension.context.new_page()
        page.goto(f"{site.url}/{name}.html")
        _bless(page)
        answers.append(
            page.evaluate(
                """async () => {
                  const session = await LanguageModel.create({samplingMode: 'most-predictable'});
                  return [await LanguageModel.availability(), await session.prompt('Hello!')];
                }"""
            )
        )
    assert answers == [["available", "Hello! How can I help you today?"]] * 2
    model_gets = [path for method, path in site.requests if path.startswith("/model/")]
    assert model_gets.count("/model/onnx/model_q4.onnx") == 1, model_gets
    assert model_gets.count("/model/tokenizer.json") == 1, model_gets
    status = extension.offscreen_status()
    assert status["connections"] == 2
    assert status["crossOriginIsolated"] is True, "ORT Web gets its threads"


def test_a_page_cannot_reach_another_tabs_session(extension, site):
    owner = extension.context.new_page()
    owner.goto(f"{site.url}/a.html")
    _bless(owner)
    owner.evaluate("async () => { window.session = await LanguageModel.create(); }")
    other = extension.context.new_page()
    other.goto(f"{site.url}/b.html")
    # The other page speaks the protocol itself, on a channel of its own, naming
    # every session number the engine could have given.
    replies = other.evaluate(
        """() => new Promise((resolve) => {
          const channel = new MessageChannel();
          const replies = [];
          channel.port1.onmessage = ({data}) => {
            replies.push(JSON.parse(data));
            if (replies.length === 6) resolve(replies);
          };
          window.postMessage({'prompt-api-runtime:connect': true}, '*', [channel.port2]);
          let id = 1;
          for (const session of [0, 1, 2]) {
            channel.port1.postMessage(JSON.stringify({kind: 'prompt', id: id++, session,
              input: 'stolen?', constraint: null, omit: false}));
            channel.port1.postMessage(JSON.stringify({kind: 'destroy', id: id++, session}));
          }
        })"""
    )
    assert {r["kind"] for r in replies} == {"throw"}
    assert {r["error"]["name"] for r in replies} == {"InvalidStateError"}
    answer = owner.evaluate("() => session.prompt('still mine')")
    assert answer.endswith("still mine"), "the owner's session is untouched"


def test_a_closed_tab_ends_its_sessions(extension, site):
    page = extension.context.new_page()
    page.goto(f"{site.url}/a.html")
    _bless(page)
    page.evaluate(
        """async () => {
          window.kept = [await LanguageModel.create(), await LanguageModel.create()];
          await kept[0].prompt('hi');
        }"""
    )
    assert extension.offscreen_status()["sessions"] == 2
    page.close()
    deadline = time.monotonic() + 10
    while extension.offscreen_status()["connections"] and time.monotonic() < deadline:
        time.sleep(0.05)
    status = extension.offscreen_status()
    assert (status["connections"], status["sessions"], status["requests"]) == (0, 0, 0)


def test_extension_only_members_in_the_options_page(extension):
    page = extension.context.new_page()
    page.goto(extension.url("options.html"))
    _bless(page)
    result = page.evaluate(
        """async () => {
          const params = await LanguageModel.params();
          const session = await LanguageModel.create({topK: 3, temperature: 0.5});
          const usage = await session.measureInputUsage('hello');
          let overflowed = 0;
          session.onquotaoverflow = () => { overflowed++; };
          const big = 'x'.repeat(600);
          await session.prompt(big);
          await session.prompt(big);
          let combined = null;
          try { await LanguageModel.create({samplingMode: 'balanced', topK: 3}); }
          catch (e) { combined = e.name; }
          const fallback = await LanguageModel.create({temperature: 9});
          return {
            params: {...params, has: 'params' in LanguageModel},
            topK: session.topK, temperature: session.temperature,
            usage, measured: await session.measureContextUsage('hello'),
            inputUsage: session.inputUsage === session.contextUsage,
            inputQuota: session.inputQuota, overflowed, combined,
            clamped: [fallback.topK, fallback.temperature],
          };
        }"""
    )
    assert result["params"] == {
        "has": True,
        "defaultTopK": PARAMS["defaultTopK"],
        "maxTopK": PARAMS["maxTopK"],
        "defaultTemperature": PARAMS["defaultTemperature"],
        "maxTemperature": PARAMS["maxTemperature"],
    }
    assert (result["topK"], result["temperature"]) == (3, 0.5)
    assert result["usage"] == result["measured"] == 5
    assert result["inputUsage"] is True
    assert result["inputQuota"] == 1000
    assert result["overflowed"] >= 1
    assert result["combined"] == "TypeError"
    assert result["clamped"] == [PARAMS["defaultTopK"], PARAMS["maxTemperature"]]


def test_the_options_page_lists_and_clears_the_cache_and_the_sites(extension, site):
    extension.configure({"model": f"{site.url}/model/", "dtype": "q4"})
    page = extension.context.new_page()
    page.goto(f"{site.url}/a.html")
    _bless(page)
    page.evaluate("async () => (await LanguageModel.create()).prompt('a secret prompt')")
    options = extension.context.new_page()
    options.goto(extension.url("options.html"))
    options.wait_for_function("() => document.querySelectorAll('#cache tbody tr').length > 0")
    files = options.eval_on_selector_all(
        "#cache tbody tr td:first-child", "tds => tds.map(t => t.textContent)"
    )
    assert f"{site.url}/model/onnx/model_q4.onnx" in files
    assert options.text_content("#cache-total") != "0 B"
    sites = options.eval_on_selector_all(
        "#sites tbody tr td:first-child", "tds => tds.map(t => t.textContent)"
    )
    assert sites == [site.url]
    stored = extension.service_worker.evaluate("() => chrome.storage.local.get(null)")
    assert "a secret prompt" not in json.dumps(stored), "prompts are never stored"
    options.click("#cache-clear")
    options.wait_for_function("() => !document.querySelector('#cache tbody tr')")
    assert options.text_content("#cache-total") == "0 B"


def test_the_wpt_runner_serves_pages_without_our_script(echo_host):
    path = REPO_ROOT / "tests/wpt/ai/language-model/globals.tentative.https.window.js"
    with urllib.request.urlopen(echo_host.url_for(path)) as response:
        html = response.read().decode()
    assert "testharness.js" in html
    assert "language-model.js" not in html


class _OffMachine(BaseHTTPRequestHandler):
    """A proxy that records every request Chromium sends it and answers none."""

    seen: list[str]

    def _record(self) -> None:
        self.seen.append(f"{self.command} {self.path}")
        self.send_error(502)

    do_GET = do_POST = do_HEAD = do_CONNECT = _record

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


def test_the_extension_sends_nothing_off_the_machine_and_refuses_pages(playwright, site):
    """Every request of Chromium (pages, the extension's service worker and offscreen
    document, their workers) goes through a recording proxy, except loopback, which
    Chromium never proxies: nothing reaches it while pages use the echo model and a
    real model with a constraint. A web page gets no chrome.runtime to message the
    extension with: only its content scripts reach the engine."""
    seen: list[str] = []
    handler = type("_Recording", (_OffMachine,), {"seen": seen})
    proxy = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    try:
        flags = [f"--proxy-server=http://127.0.0.1:{proxy.server_address[1]}"]
        with extension_browser(playwright, extra_args=flags) as browser:
            page = browser.context.new_page()
            page.goto(f"{site.url}/a.html")
            echo = page.evaluate("async () => (await LanguageModel.create()).prompt('hello')")
            assert echo
            assert page.evaluate("typeof globalThis.chrome?.runtime?.connect") == "undefined"
            browser.configure({"model": f"{site.url}/model/", "dtype": "q4"})
            page.goto(f"{site.url}/b.html")
            _bless(page)
            answers = page.evaluate(
                """async () => {
                  const session = await LanguageModel.create({samplingMode: 'most-predictable'});
                  const text = await session.prompt('Hello!');
                  const json = await session.prompt('Hello!', {responseConstraint: {type: 'object',
                    properties: {a: {type: 'boolean'}}, required: ['a'],
                    additionalProperties: false}});
                  return [text, JSON.parse(json).a];
                }"""
            )
            assert answers[0] == "Hello! How can I help you today?"
            assert isinstance(answers[1], bool)
        # Loopback is not proxied: the proxy sees only off-machine requests.
        urllib.request.urlopen(f"{site.url}/a.html").read()
    finally:
        proxy.shutdown()
        proxy.server_close()
    # Chromium's own background requests (its updater, its account service) go through
    # the proxy too, even with its background networking off: told apart by host.
    ours = [line for line in seen if not re.search(CHROMIUM_HOSTS, line)]
    assert ours == [], ours


#: Where Chromium itself talks to (extension update checks, sign-in), not our code.
CHROMIUM_HOSTS = r"\b(update\.googleapis\.com|accounts\.google\.com|[a-z0-9-]+\.gvt1\.com)\b"
