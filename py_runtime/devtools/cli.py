"""The main job: ``python -m py_runtime prompt TEXT``, ``serve`` and ``models``.

``prompt`` runs the real product: it serves ``dist/``, starts headless Chromium,
loads the script, creates a session (after a real click, for user activation)
and streams the answer to stdout; the model is SmolLM2 unless ``--model`` says
otherwise (``echo``, a named model, a folder or a URL). ``serve`` serves ``dist/``
and its demo page. ``models prepare|evaluate NAME`` makes a named model's folder and
measures its dtypes.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

from ..engine.vocabulary import DTYPES, SAMPLING_MODE_NAMES
from . import models

DIST = Path(__file__).resolve().parents[2] / "dist"
PAGES = Path(__file__).resolve().parent / "pages"


def model_attributes(args: argparse.Namespace) -> tuple[dict[str, str], dict[str, Path]]:
    """The runtime script tag's data- attributes, and a mount for a local model folder."""
    mounts: dict[str, Path] = {}
    dtype = args.dtype or models.default_dtype(args.model)
    model = models.resolve(args.model) or "echo"
    if Path(model).is_dir():
        mounts[f"/_models/{Path(model).resolve().name}/"] = Path(model).resolve()
        model = f"/_models/{Path(model).resolve().name}/"
    values = {"model": model, "dtype": dtype, "device": args.device}
    return {f"data-{key}": value for key, value in values.items() if value}, mounts


def prompt(args: argparse.Namespace) -> int:
    """Answer ``args.text`` through pages/prompt.html, streaming the chunks to stdout."""
    from playwright.sync_api import sync_playwright

    from .browser import WEBGPU_ARGS, launch_args
    from .server import StaticServer

    attributes, mounts = model_attributes(args)
    options = {"samplingMode": args.sampling_mode} if args.sampling_mode else {}
    query = urlencode({**attributes, "text": args.text, "options": json.dumps(options)})
    with (
        StaticServer({"/": args.dist, "/_pages/": PAGES, **mounts}) as server,
        sync_playwright() as playwright,
    ):
        extra = WEBGPU_ARGS if args.device == "webgpu" else None
        browser = playwright.chromium.launch(**launch_args(extra))
        page = browser.new_page()
        page.expose_function("emitChunk", lambda chunk: print(chunk, end="", flush=True))
        page.goto(f"{server.url}/_pages/prompt.html?{query}")
        page.click("#go")
        deadline = time.monotonic() + args.timeout
        while time.monotonic() < deadline:
            result = page.evaluate("window.promptResult ?? null")
            if result is not None:
                break
            page.wait_for_timeout(50)
        else:
            result = {"ok": False, "error": f"TimeoutError: no answer in {args.timeout} s"}
        browser.close()
    print()
    if not result["ok"]:
        print(result["error"], file=sys.stderr)
        return 1
    return 0


def serve(args: argparse.Namespace) -> int:
    """Serve ``args.dist`` (and a model folder, when one is named) until interrupted."""
    from .server import StaticServer

    attributes, mounts = model_attributes(args)
    query = {key.removeprefix("data-"): value for key, value in attributes.items()}
    with StaticServer({"/": args.dist, **mounts}, port=args.port) as server:
        demo = f"{server.url}/" + (f"?{urlencode(query)}" if args.model != "echo" else "")
        print(f"Serving {args.dist}: the demo is at {demo} (Ctrl+C to stop)", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            return 0


def models_command(args: argparse.Namespace) -> int:
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
        help=f"{default} (default), echo, {', '.join(models.MODELS)}, a model folder or URL",
    )
    parser.add_argument("--dtype", choices=DTYPES, help="default: the named model's, else q8")
    parser.add_argument("--device", choices=("wasm", "webgpu"))


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m py_runtime", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--dist", type=Path, default=DIST, help="the built dist/ folder")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("prompt", help="answer TEXT in headless Chromium, streamed")
    run.add_argument("text")
    add_model_arguments(run)
    run.add_argument(
        "--sampling-mode",
        choices=SAMPLING_MODE_NAMES,
        help="the session's samplingMode (default: balanced)",
    )
    run.add_argument("--timeout", type=float, default=300)
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
    named.set_defaults(handler=models_command)
    args = parser.parse_args(argv)
    if args.command == "models":
        return models_command(args)
    if not (args.dist / "language-model.js").is_file():
        parser.error(f"{args.dist} has no build: run `python3 build/build.py` first")
    return args.handler(args)
