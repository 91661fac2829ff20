"""The main job: ``python -m py_runtime prompt TEXT``, ``serve`` and ``models``.

``prompt`` runs the real product: it serves ``dist/``, starts headless Chromium,
loads the script, creates a session (after a real click, for user activation)
and streams the answer to stdout; the model is SmolLM2 unless ``--model`` says
otherwise (``echo``, a named model, a folder or a URL). TEXT ``-`` reads the prompt
from stdin (its trailing newlines dropped). Options:

- ``--system TEXT``: the session's system message (``initialPrompts[0]``);
- ``--schema FILE`` (a JSON Schema) or ``--regex PATTERN`` (a RegExp's source, or
  ``/source/flags``): the prompt's ``responseConstraint``;
- ``--tools FILE``: a JSON list of tool declarations ``{name, description,
  inputSchema}``; the session expects tool calls and responses (the open loop), and
  each call the model makes is printed as one JSON line ``{"type": "tool-call",
  "callId": ..., "name": ..., "arguments": {...}}``;
- ``--json``: print one JSON object at the end instead of streaming: ``{"text": the
  answer's text, "toolCalls": [{"callId", "name", "arguments"}...], "contextUsage": N,
  "contextWindow": N}`` (``contextWindow`` is null when unbounded).

An error is one line on stderr, ``error: WHAT: what is wrong``, naming the argument,
file or folder to fix (the page's errors as ``error: NAME: message``); with ``--json``
stdout also gets ``{"error": {"name": ..., "message": ...}}``. Exit status: 0 on
success, 1 when the page or the model fails, 2 for a bad argument, file or folder
(checked before the browser starts). ``serve`` serves ``dist/`` and its demo page
(its first line on stdout names the URL). ``models prepare|evaluate NAME`` makes a
named model's folder and measures its dtypes. ``engine prepare|serve`` builds llama.cpp's
server and serves SmolLM2 with it, for ``--model openai:URL`` (the server backend).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn, cast
from urllib.parse import urlencode

from ..engine.vocabulary import DTYPES, SAMPLING_MODE_NAMES, Dtype, model_file
from . import models

DIST = Path(__file__).resolve().parents[2] / "dist"
PAGES = Path(__file__).resolve().parent / "pages"
PROG = "python -m py_runtime"
#: What a model folder must hold (besides ``onnx/model{suffix}.onnx`` for the dtype).
MODEL_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json")
FOLDER_HINT = "a model folder holds config.json, tokenizer.json and onnx/model*.onnx"
#: ``/source/flags``: a RegExp literal as ``--regex`` also takes it.
REGEX_LITERAL = re.compile(r"/(?P<source>.+)/(?P<flags>[dgimsuvy]*)", re.DOTALL)
#: Where a page error's message sends the reader; the CLI shows that line instead.
CONSOLE_HINT = "the console has the details."
#: Console lines that are not the error's own: resources the runtime probes for, traceback heads.
CONSOLE_NOISE = ("Failed to load resource", "Traceback")
TOOL_INPUTS = [{"type": "tool-call"}, {"type": "tool-response"}]
TOOL_OUTPUTS = [{"type": "text"}, {"type": "tool-call"}]


class UsageError(Exception):
    """A bad argument, file or folder: one line, exit status 2."""


class PageError(Exception):
    """The page, the browser or the model failed: ``error: NAME: message``, status 1."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(f"{name}: {message}")
        self.name = name
        self.message = message


class Parser(argparse.ArgumentParser):
    """argparse, with its errors raised as one-line :class:`UsageError`s (not printed
    as a usage block and exited)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")


def positive(text: str) -> float:
    """A positive number of seconds (``--timeout``)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0 or math.isinf(value):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {text}")
    return value


def effective_dtype(args: argparse.Namespace) -> Dtype:
    """The dtype the runtime will load: ``--dtype``, the named model's, else its default."""
    dtype = args.dtype or models.default_dtype(args.model)
    return cast(Dtype, dtype or ("fp32" if args.device == "webgpu" else "q8"))


def is_url(model: str) -> bool:
    return model.startswith(("http://", "https://"))


def check_model_folder(option: str, folder: Path, dtype: Dtype) -> None:
    """Raise a :class:`UsageError` naming what the model folder lacks."""
    if not folder.exists():
        raise UsageError(f"--model {option}: no such folder ({FOLDER_HINT})")
    if not folder.is_dir():
        raise UsageError(f"--model {option}: not a folder ({FOLDER_HINT})")
    for name in MODEL_FILES:
        if not (folder / name).is_file():
            raise UsageError(f"--model {option}: {folder / name} is missing ({FOLDER_HINT})")
    weights = model_file(dtype)
    if not (folder / weights).is_file():
        present = [d for d in DTYPES if (folder / model_file(d)).is_file()]
        has = f"it has --dtype {', '.join(present)}" if present else FOLDER_HINT
        raise UsageError(
            f"--model {option}: {folder / weights} is missing for dtype {dtype} ({has})"
        )


def model_attributes(args: argparse.Namespace) -> tuple[dict[str, str], dict[str, Path]]:
    """The runtime script tag's data- attributes, and a mount for a local model folder.

    A model that is neither ``echo``, a named model nor an http(s) URL is a folder, and
    is checked here (a :class:`UsageError` names what is missing)."""
    mounts: dict[str, Path] = {}
    dtype = args.dtype or models.default_dtype(args.model)
    model = models.resolve(args.model) or "echo"
    if model != "echo" and not is_url(model) and not model.startswith("openai:"):
        check_model_folder(args.model, Path(model), effective_dtype(args))
        folder = Path(model).resolve()
        mounts[f"/_models/{folder.name}/"] = folder
        model = f"/_models/{folder.name}/"
    values = {"model": model, "dtype": dtype, "device": args.device}
    return {f"data-{key}": value for key, value in values.items() if value}, mounts


def read_json(option: str, path: Path) -> Any:
    """A JSON file's value; a :class:`UsageError` naming the file if it is unreadable."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{option} {path}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{option} {path}: is a folder, not a JSON file") from None
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) else "not UTF-8 text"
        raise UsageError(f"{option} {path}: cannot be read ({reason})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise UsageError(f"{option} {path}: not JSON ({error})") from None


def json_type(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    return "null" if value is None else names.get(type(value), "a number")


def read_schema(path: Path) -> dict[str, Any]:
    schema = read_json("--schema", path)
    if not isinstance(schema, dict):
        raise UsageError(
            f"--schema {path}: a JSON Schema must be a JSON object, not {json_type(schema)}"
        )
    return schema


def read_tools(path: Path) -> list[dict[str, Any]]:
    """The declarations in ``path``: a list of objects, each with a string ``name``."""
    tools = read_json("--tools", path)
    if not isinstance(tools, list) or not tools:
        what = "an empty list" if tools == [] else json_type(tools)
        raise UsageError(
            f"--tools {path}: must hold a list of tool declarations "
            f"({{name, description, inputSchema}}), not {what}"
        )
    for index, tool in enumerate(tools):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            raise UsageError(
                f"--tools {path}: item {index} is not a tool declaration "
                "(an object with a string name, a description and an inputSchema)"
            )
    return tools


def parse_regex(pattern: str) -> dict[str, str]:
    """``--regex``: a RegExp's source, or ``/source/flags``."""
    literal = REGEX_LITERAL.fullmatch(pattern)
    if literal:
        return {"source": literal["source"], "flags": literal["flags"]}
    return {"source": pattern, "flags": ""}


def prompt_text(text: str) -> str:
    """TEXT, or stdin's text (without its trailing newlines) when TEXT is ``-``."""
    if text != "-":
        return text
    try:
        read = sys.stdin.buffer.read().decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError("the prompt on stdin (TEXT is -) is not UTF-8 text") from None
    read = read.rstrip("\r\n")
    if not read:
        raise UsageError("the prompt on stdin (TEXT is -) is empty")
    return read


def build_request(args: argparse.Namespace) -> dict[str, Any]:
    """What pages/prompt.html is given: the text, create() and prompt() options, regex."""
    if args.schema is not None and args.regex is not None:
        raise UsageError("--schema and --regex cannot be used together: choose one constraint")
    create: dict[str, Any] = {}
    if args.sampling_mode:
        create["samplingMode"] = args.sampling_mode
    if args.system is not None:
        create["initialPrompts"] = [{"role": "system", "content": args.system}]
    if args.tools is not None:
        create["tools"] = read_tools(args.tools)
        create["expectedInputs"] = TOOL_INPUTS
        create["expectedOutputs"] = TOOL_OUTPUTS
    options: dict[str, Any] = {}
    if args.schema is not None:
        options["responseConstraint"] = read_schema(args.schema)
    regex = parse_regex(args.regex) if args.regex is not None else None
    return {"text": prompt_text(args.text), "create": create, "prompt": options, "regex": regex}


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


def report(error: Exception, as_json: bool) -> None:
    """One line on stderr; with ``--json``, the error object on stdout too."""
    if isinstance(error, PageError):
        name, message, line = error.name, error.message, f"{error.name}: {error.message}"
    else:
        name, message, line = "UsageError", str(error), str(error)
    print(f"error: {line}", file=sys.stderr, flush=True)
    if as_json:
        print(json.dumps({"error": {"name": name, "message": message}}, ensure_ascii=False))


def prompt(args: argparse.Namespace) -> int:
    """Answer the prompt through pages/prompt.html, streaming the chunks to stdout."""
    attributes, mounts = model_attributes(args)
    request = build_request(args)
    output = Output(args.json)
    result = run_page(args, attributes, mounts, request, output)
    if not result["ok"]:
        error = result["error"]
        if error["where"] == "regex":
            raise UsageError(f"--regex {args.regex}: {error['name']}: {error['message']}")
        output.write("" if output.at_line_start else "\n")
        raise PageError(error["name"], error["message"])
    output.finish(result)
    return 0


def serve(args: argparse.Namespace) -> int:
    """Serve ``args.dist`` (and a model folder, when one is named) until interrupted."""
    from .server import StaticServer

    attributes, mounts = model_attributes(args)
    query = {key.removeprefix("data-"): value for key, value in attributes.items()}
    try:
        server = StaticServer({"/": args.dist, **mounts}, port=args.port)
        server.start()
    except OSError as error:
        raise UsageError(f"--port {args.port}: cannot listen there ({error.strerror})") from None
    with server:
        demo = f"{server.url}/" + (f"?{urlencode(query)}" if args.model != "echo" else "")
        print(f"Serving {args.dist}: the demo is at {demo} (Ctrl+C to stop)", flush=True)
        return wait_for_interrupt()


def wait_for_interrupt() -> int:
    """Sleep until Ctrl+C (a server's foreground); the exit status."""
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        return 0


def engine_command(args: argparse.Namespace) -> int:
    from . import engine

    if args.action == "prepare":
        engine.prepare()
        print(engine.binary())
        return 0
    with engine.serve(args.port, args.threads) as url:
        print(f'llama-server serves SmolLM2 at {url}: data-model="openai:{url}"', flush=True)
        return wait_for_interrupt()


def models_command(args: argparse.Namespace) -> int:
    if args.action == "evaluate" and args.folder:
        folder = Path(args.folder).expanduser()
    else:
        folder = models.prepare(args.name, force=args.force)
    if args.action == "evaluate":
        from .models.evaluate import evaluate

        evaluate(folder, args.dtypes, args.dist)
    else:
        print(folder)
    return 0


def add_model_arguments(parser: argparse.ArgumentParser, default: str = "smollm2") -> None:
    parser.add_argument(
        "--model",
        default=default,
        help=f"{default} (default), {', '.join(sorted({'echo', *models.MODELS} - {default}))}, "
        "a model folder or an http(s) URL",
    )
    parser.add_argument("--dtype", choices=DTYPES, help="default: the named model's, else q8")
    parser.add_argument("--device", choices=("wasm", "webgpu"))


PROMPT_EPILOG = """\
output: the answer's text is streamed to stdout; with --tools, each tool call is one
JSON line {"type": "tool-call", "callId": ..., "name": ..., "arguments": {...}}.
--json prints one object at the end instead: {"text": ..., "toolCalls": [{"callId",
"name", "arguments"}...], "contextUsage": N, "contextWindow": N or null}.

errors: one line on stderr, "error: ...", naming what to fix (with --json also
{"error": {"name": ..., "message": ...}} on stdout); exit status 1 when the page or
the model fails, 2 for a bad argument, file or folder.

examples:
  python -m py_runtime prompt --model echo "Hello"
  echo "Hello!" | python -m py_runtime prompt --model DIR --dtype q4 -
  python -m py_runtime prompt --system "Answer in French." "Hello"
  python -m py_runtime prompt --schema person.json "Describe a person"
  python -m py_runtime prompt --regex "(yes|no)" "Is Paris in France?"
  python -m py_runtime prompt --tools tools.json --json "What is the weather in Paris?"
"""


def build_parser() -> Parser:
    parser = Parser(prog=PROG, description=__doc__.split("\n")[0])
    parser.add_argument("--dist", type=Path, default=DIST, help="the built dist/ folder")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser(
        "prompt",
        help="answer TEXT in headless Chromium, streamed",
        description="Answer TEXT with the runtime in headless Chromium.",
        epilog=PROMPT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("text", metavar="TEXT", help="the prompt; - reads it from stdin")
    add_model_arguments(run)
    run.add_argument(
        "--sampling-mode",
        choices=SAMPLING_MODE_NAMES,
        help="the session's samplingMode (default: balanced)",
    )
    run.add_argument("--system", metavar="TEXT", help="a system message (initialPrompts[0])")
    run.add_argument(
        "--schema", metavar="FILE", type=Path, help="a JSON Schema file: the responseConstraint"
    )
    run.add_argument(
        "--regex",
        metavar="PATTERN",
        help="a RegExp's source (or /source/flags): the responseConstraint",
    )
    run.add_argument(
        "--tools",
        metavar="FILE",
        type=Path,
        help="a JSON file with a list of tool declarations {name, description, inputSchema}",
    )
    run.add_argument("--json", action="store_true", help="print one JSON object at the end")
    run.add_argument(
        "--timeout",
        type=positive,
        default=300,
        metavar="SECONDS",
        help="how long to wait for the answer (default: 300)",
    )
    run.set_defaults(handler=prompt)
    demo = commands.add_parser("serve", help="serve dist/ and its demo page")
    demo.add_argument("--port", type=int, default=8000)
    add_model_arguments(demo, default="echo")
    demo.set_defaults(handler=serve)
    named = commands.add_parser("models", help="prepare or evaluate a named model")
    named.add_argument("action", choices=("prepare", "evaluate"))
    named.add_argument("name", choices=sorted(models.MODELS))
    named.add_argument("--force", action="store_true", help="prepare again")
    named.add_argument("--dtypes", nargs="+", choices=DTYPES, default=["fp32", "q8", "q4", "int8"])
    named.add_argument(
        "--folder", help="evaluate: this model folder instead of the named model's (name unused)"
    )
    named.set_defaults(handler=models_command)
    server = commands.add_parser(
        "engine", help="build llama.cpp's server, or serve SmolLM2 with it (the server backend)"
    )
    server.add_argument("action", choices=("prepare", "serve"))
    server.add_argument("--port", type=int, default=8080)
    server.add_argument("--threads", type=int, default=1)
    server.set_defaults(handler=engine_command)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    as_json = "--json" in arguments  # until parsed: errors in parsing are reported as asked
    try:
        args = build_parser().parse_args(arguments)
        as_json = getattr(args, "json", False)
        needs_dist = args.command not in ("models", "engine")
        if needs_dist and not (args.dist / "language-model.js").is_file():
            raise UsageError(f"--dist {args.dist}: no build there: run `python3 build/build.py`")
        status: int = args.handler(args)
        return status
    except UsageError as error:
        report(error, as_json)
        return 2
    except PageError as error:
        report(error, as_json)
        return 1
    except subprocess.CalledProcessError as error:
        command = " ".join(str(part) for part in error.cmd)
        report(PageError("PrepareError", f"`{command}` exited with {error.returncode}"), as_json)
        return 1
    except BrokenPipeError:  # stdout closed early (`| head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        return 130
