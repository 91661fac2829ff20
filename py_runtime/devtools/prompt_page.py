"""``prompt``'s page: pages/prompt.html in headless Chromium, the answer's chunks
streamed to stdout (or kept for ``--json``), and a failure of the page, the browser
or the model as a :class:`PageError`, with the console's detail.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

PAGES = Path(__file__).resolve().parent / "pages"
#: Where a page error's message sends the reader; the CLI shows that line instead.
CONSOLE_HINT = "the console has the details."
#: Console lines that are not the error's own: resources the runtime probes for, traceback heads.
CONSOLE_NOISE = ("Failed to load resource", "Traceback")


class PageError(Exception):
    """The page, the browser or the model failed: ``error: NAME: message``, status 1."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(f"{name}: {message}")
        self.name = name
        self.message = message


class Output:
    """Where the page's chunks go: streamed to stdout, or kept for ``--json``."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        self.text: list[str] = []
        self.tool_calls: list[dict[str, Any]] = []
        self.at_line_start = True

    def write(self, text: str) -> None:
        if text:
            sys.stdout.write(text)
            sys.stdout.flush()
            self.at_line_start = text.endswith("\n")

    def emit(self, chunk: dict[str, Any]) -> None:
        if chunk["type"] == "text":
            self.text.append(chunk["text"])
            if not self.as_json:
                self.write(chunk["text"])
            return
        call = {key: chunk[key] for key in ("callId", "name", "arguments")}
        self.tool_calls.append(call)
        if not self.as_json:
            self.write(
                ("" if self.at_line_start else "\n")
                + json.dumps({"type": "tool-call", **call}, ensure_ascii=False)
                + "\n"
            )

    def finish(self, result: dict[str, Any]) -> None:
        if not self.as_json:
            self.write("" if self.at_line_start else "\n")
            return
        window = result["contextWindow"]
        summary = {
            "text": "".join(self.text),
            "toolCalls": self.tool_calls,
            "contextUsage": result["contextUsage"],
            "contextWindow": window
            if isinstance(window, int | float) and math.isfinite(window)
            else None,
        }
        print(json.dumps(summary, ensure_ascii=False), flush=True)


def console_detail(lines: Sequence[str]) -> str | None:
    """The last line of the last error the page's console (the worker's included)
    showed, such as a Python traceback's exception line."""
    for text in reversed(lines):
        for line in reversed(text.strip().splitlines()):
            if line and not line[0].isspace() and not line.startswith(CONSOLE_NOISE):
                return line.strip()
    return None


def first_line(error: Exception) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def run_page(
    args: argparse.Namespace,
    attributes: dict[str, str],
    mounts: dict[str, Path],
    request: dict[str, Any],
    output: Output,
) -> dict[str, Any]:
    """Load pages/prompt.html in headless Chromium, click, and wait for its result
    (``{ok, contextUsage, contextWindow}`` or ``{ok: false, error}``, see the page)."""
    from playwright.sync_api import ConsoleMessage, sync_playwright
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    from .browser import WEBGPU_ARGS, launch_args
    from .server import StaticServer

    console: list[str] = []

    def keep(message: ConsoleMessage) -> None:
        if message.type in ("error", "warning"):
            console.append(message.text)

    with (
        StaticServer({"/": args.dist, "/_pages/": PAGES, **mounts}) as server,
        sync_playwright() as playwright,
    ):
        extra = WEBGPU_ARGS if args.device == "webgpu" else None
        try:
            browser = playwright.chromium.launch(**launch_args(extra))
        except PlaywrightError as error:
            raise PageError(
                "BrowserError",
                f"Chromium cannot start ({first_line(error)}); install it with scripts/setup.sh",
            ) from None
        try:
            page = browser.new_page()
            page.on("console", keep)
            page.expose_function("emit", output.emit)
            page.goto(f"{server.url}/_pages/prompt.html?{urlencode(attributes)}")
            page.evaluate("request => { window.request = request; }", request)
            page.click("#go")
            page.wait_for_function(
                "window.promptResult !== undefined", polling=50, timeout=args.timeout * 1000
            )
            result: dict[str, Any] = page.evaluate("window.promptResult")
        except PlaywrightTimeout:
            raise PageError(
                "TimeoutError", f"no answer in {args.timeout:g} s (raise --timeout)"
            ) from None
        except PlaywrightError as error:
            raise PageError("BrowserError", first_line(error)) from None
        finally:
            browser.close()
    failure = result.get("error")
    detail = console_detail(console)
    if failure and detail and CONSOLE_HINT in failure["message"]:
        failure["message"] = failure["message"].replace(CONSOLE_HINT, f"the console says: {detail}")
    return result
