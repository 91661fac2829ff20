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
The arguments are checked in ``cli_inputs.py``; ``prompt_page.py`` drives the page.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn
from urllib.parse import urlencode

from ..engine.vocabulary import DTYPES, SAMPLING_MODE_NAMES
from . import models
from .cli_inputs import UsageError, build_request, model_attributes
from .prompt_page import Output, PageError, run_page

DIST = Path(__file__).resolve().parents[2] / "dist"
PROG = "python -m py_runtime"


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
