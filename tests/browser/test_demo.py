"""The chat demo (web/demo/, the page `python -m py_runtime serve` shows).

dist/ is served with web/demo's files over it (the build copies them into dist/'s
root), under the page's own strict CSP. On the echo model: the calculator's parser,
the stop button, tool calls inline, errors, the meters. On SmolLM2: a real
conversation (a question, a calculator call, a structured answer, a schema the
runtime cannot hold, a stop mid-answer), and the screenshot docs/demo.md shows, docs/demo.png.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest
from playwright.sync_api import ConsoleMessage, Locator, Page, Route, expect

from py_runtime.devtools import models
from py_runtime.devtools.server import StaticServer

REPO_ROOT = Path(__file__).resolve().parents[2]
DIST = REPO_ROOT / "dist"
DEMO = REPO_ROOT / "web" / "demo"
FOLDER = models.folder("smollm2")
SCREENSHOT = REPO_ROOT / "docs" / "demo.png"
#: Long enough for SmolLM2 on a 2-core machine (a create, or an answer with a tool call).
SLOW = 300_000

pytestmark = pytest.mark.needs_files(
    DIST / "language-model.js", reason="dist/ is missing: run `bash scripts/setup.sh`"
)
needs_smollm2 = pytest.mark.needs_files(
    FOLDER / "onnx" / "model.onnx", reason="SmolLM2 is missing: run `bash scripts/setup.sh`"
)


@pytest.fixture
def server() -> Iterator[StaticServer]:
    """dist/ at /, web/demo's files over it, SmolLM2's folder at /_models/smollm2/."""
    files: dict[str, Path | bytes] = {f"/{p.name}": p for p in DEMO.iterdir() if p.is_file()}
    files["/"] = DEMO / "index.html"
    with StaticServer({"/": DIST, "/_models/smollm2/": FOLDER}, files) as static:
        yield static


@pytest.fixture
def violations(page: Page) -> list[str]:
    """The page's CSP violations and uncaught exceptions."""
    found: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        if "Content Security Policy" in message.text:
            found.append(message.text)

    page.on("console", on_console)
    page.on("pageerror", lambda error: found.append(str(error)))
    return found


def turns(page: Page, role: str) -> Locator:
    return page.locator(f"#conversation .turn.{role}")


def send(page: Page, text: str) -> Locator:
    """Type and send `text`; the new assistant turn's body (still streaming)."""
    count = turns(page, "assistant").count()
    page.fill("#prompt", text)
    page.click("#send")
    expect(turns(page, "assistant")).to_have_count(count + 1)
    return turns(page, "assistant").nth(count).locator(".body")


def ask(page: Page, text: str, timeout: float = 30_000) -> Locator:
    """Send `text` and wait for the whole answer; the answer's turn body."""
    body = send(page, text)
    expect(body.locator("xpath=..")).not_to_have_class(re.compile("streaming"), timeout=timeout)
    return body


def context_usage(page: Page, window: int) -> int:
    """The context meter's number, checked against its text and the window."""
    text = page.inner_text("#context-text")
    match = re.fullmatch(rf"(\d+) / {window} tokens", text)
    assert match, text
    assert float(page.get_attribute("#context", "value") or 0) == int(match[1])
    return int(match[1])


# The echo model ------------------------------------------------------------------


def test_calculator_parses_arithmetic_only(page: Page, server: StaticServer) -> None:
    page.goto(f"{server.url}/")
    results = page.evaluate(
        """async (cases) => {
          const { calculate } = await import('/demo-tools.js');
          return cases.map((text) => {
            try { return calculate(text); } catch (error) { return error.name; }
          });
        }""",
        [
            "2 * (3 + 4)", "1 - 2 - 3", "8 / 4 / 2", "-3 + +4", " 0.1 + 0.2 ", "1.5e3 / 3",
            "17*23", "alert(1)", "2 ** 3", "1 / 0", "(1 + 2", "1 + 2)", "", "2 3", "0x10",
        ],
    )  # fmt: skip
    assert results == [
        14, -4, 1, 1, 0.3, 500, 391, "SyntaxError", "SyntaxError", "RangeError",
        "SyntaxError", "SyntaxError", "SyntaxError", "SyntaxError", "SyntaxError",
    ]  # fmt: skip


def test_time_tool_finds_a_citys_time_zone(page: Page, server: StaticServer) -> None:
    page.goto(f"{server.url}/")
    results = page.evaluate(
        """async (cities) => {
          const { localTime, timeZoneOf } = await import('/demo-tools.js');
          const local = Intl.DateTimeFormat().resolvedOptions().timeZone;
          return cities.map((city) => {
            try { return timeZoneOf(city) === local ? 'here' : localTime(city); }
            catch (error) { return error.name; }
          });
        }""",
        ["Tokyo", "new york", "here", "", "Atlantis", "York"],
    )
    assert re.fullmatch(r"\w+day, \d+ \w+ \d{4} at \d\d:\d\d \(Asia/Tokyo\)", results[0])
    assert results[1].endswith("(America/New_York)")
    assert results[2:] == ["here", "here", "RangeError", "RangeError"]


def test_echo_demo_stops_shows_tools_and_errors(
    page: Page, server: StaticServer, violations: list[str]
) -> None:
    # Hold the worker's script: the first create() waits for the boot, so Stop aborts it.
    held: list[Route] = []
    page.context.route("**/worker.mjs", lambda route: held.append(route))
    page.goto(f"{server.url}/")
    expect(page.locator("#model-name")).to_have_text("echo")
    stopped = send(page, "Hello")
    expect(page.locator("#stop")).to_be_enabled()
    page.click("#stop")
    expect(stopped.locator(".error")).to_have_text("AbortError: Stopped by the user.")
    expect(page.locator("#stop")).to_be_disabled()
    for route in held:
        route.continue_()
    page.context.unroute("**/worker.mjs")

    answer = ask(page, "Hello again")
    expect(answer).to_contain_text("echoing back the input:\nHello again")
    expect(page.locator("#download-text")).to_have_text("100 %")
    assert 0 < context_usage(page, 1000)

    # Tools on: the echo model calls every tool on its trigger, with no arguments.
    page.check("#tools")
    expect(page.locator(".note.divider")).to_have_text("New session: balanced, tools on.")
    answer = ask(page, "<GenerateSimpleToolCalls> now")
    tools = answer.locator(".tool")
    expect(tools).to_have_count(2)
    expect(tools.nth(0).locator(".tool-name")).to_have_text("calculator")
    expect(tools.nth(0).locator(".tool-result.failed")).to_contain_text("must be a string")
    expect(tools.nth(1).locator(".tool-name")).to_have_text("local_time")
    expect(tools.nth(1).locator(".tool-result")).to_contain_text(re.compile(r"\d\d:\d\d"))
    # The model got both results (the echo model echoes them back).
    expect(answer.locator(".text").last).to_contain_text('"name":"local_time"')

    # A prompt longer than the window: QuotaExceededError, inline.
    answer = ask(page, "x" * 1200)
    expect(answer.locator(".error")).to_contain_text("QuotaExceededError: ")

    # Two long turns overflow the echo model's 1000-byte window.
    page.uncheck("#tools")
    overflows = page.locator(".note.overflow")
    before = overflows.count()  # the tool turn may have overflowed already
    ask(page, "a" * 450)
    expect(overflows).to_have_count(before)
    ask(page, "b" * 450)
    expect(overflows).to_have_count(before + 1)
    expect(page.locator("#context")).to_have_class(re.compile("overflowed"))

    # Structured output with a schema that is not JSON: a SyntaxError, nothing sent.
    page.check("#structured")
    expect(page.locator("#schema")).to_have_value(re.compile('"confidence"'))
    page.fill("#schema", "{not json")
    answer = ask(page, "Anything")
    expect(answer.locator(".error")).to_contain_text("SyntaxError: The JSON Schema is not JSON")
    # The echo model ignores constraints: its answer is shown, said not to be JSON.
    page.fill("#schema", '{"type": "object"}')
    answer = ask(page, "Anything")
    expect(answer.locator(".note")).to_contain_text("Not JSON")
    assert violations == []


# SmolLM2 -------------------------------------------------------------------------


@needs_smollm2
def test_smollm2_conversation(page: Page, server: StaticServer, violations: list[str]) -> None:
    dtype = models.default_dtype("smollm2")
    page.goto(f"{server.url}/?model=/_models/smollm2/&dtype={dtype}")
    expect(page.locator("#model-name")).to_have_text(f"/_models/smollm2/ · {dtype}")
    page.select_option("#sampling-mode", "most-predictable")  # greedy: a known answer

    answer = ask(page, "What is the capital of France?", SLOW)
    expect(answer).to_contain_text("Paris")
    expect(page.locator("#download-text")).to_have_text("100 %")
    assert float(page.get_attribute("#download", "value") or 0) == 1
    assert context_usage(page, 8192) > 0

    # The calculator, in a closed loop: the call and its result inline, then the answer.
    page.check("#tools")
    answer = ask(page, "What is 17 * 23?", SLOW)
    tool = answer.locator(".tool")
    expect(tool).to_have_count(1)
    expect(tool.locator(".tool-name")).to_have_text("calculator")
    expect(tool.locator(".tool-arguments")).to_have_text('{"expression":"17 * 23"}')
    expect(tool.locator(".tool-result")).to_have_text("391")
    expect(answer.locator(".text").last).to_contain_text("391")
    # The local time: a tool no worked example shows, chosen by the runtime.
    answer = ask(page, "What time is it in Tokyo?", SLOW)
    expect(answer.locator(".tool .tool-name")).to_have_text("local_time")
    expect(answer.locator(".tool-result")).to_contain_text(re.compile(r"\d\d:\d\d"))

    # Structured output, held to the default schema.
    page.uncheck("#tools")
    page.check("#structured")
    schema_text = page.input_value("#schema")
    schema = json.loads(schema_text)
    answer = ask(page, "What is the capital of France?", SLOW)
    value = json.loads(answer.locator("pre.text").inner_text())
    jsonschema.validate(value, schema)
    assert "Paris" in value["answer"]

    # A keyword the runtime cannot hold: NotSupportedError, shown with a hint.
    unheld = {"type": "number", "not": {"const": 0}}
    page.fill("#schema", json.dumps({"type": "object", "properties": {"confidence": unheld}}))
    answer = ask(page, "How sure are you?", SLOW)
    expect(answer.locator(".error strong")).to_contain_text("NotSupportedError: ")
    expect(answer.locator(".error .hint")).to_contain_text("Constrained decoding")
    page.fill("#schema", schema_text)
    page.focus("#prompt")
    usage = context_usage(page, 8192)
    assert usage > 0

    SCREENSHOT.parent.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOT), full_page=True)
    # What the screenshot shows.
    assert turns(page, "user").all_inner_texts() == [
        "You\nWhat is the capital of France?",
        "You\nWhat is 17 * 23?",
        "You\nWhat time is it in Tokyo?",
        "You\nWhat is the capital of France?",
        "You\nHow sure are you?",
    ]
    shown = turns(page, "assistant").all_inner_texts()
    assert len(shown) == 5
    assert "Paris" in shown[0]
    assert "calculator" in shown[1] and "391" in shown[1]
    assert "local_time" in shown[2]
    assert '"answer": "' in shown[3]
    assert "NotSupportedError" in shown[4]

    # Stop mid-answer: AbortError inline, and the session rolled back.
    page.uncheck("#structured")
    answer = send(page, "Write a long story about a dragon.")
    expect(answer.locator(".text")).to_have_text(re.compile(r"\w"), timeout=SLOW)
    page.click("#stop")
    expect(answer.locator(".error")).to_have_text("AbortError: Stopped by the user.")
    assert context_usage(page, 8192) == usage
    assert violations == []
