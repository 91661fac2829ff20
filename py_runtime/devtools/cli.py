"""The main job: ``python -m py_runtime prompt TEXT`` and ``python -m py_runtime serve``.

``prompt`` runs the real product: it serves ``dist/``, starts headless Chromium,
loads the script, creates a session (after a real click, for user activation)
and streams the answer to stdout. ``serve`` serves ``dist/`` and its demo page.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

from ..engine.vocabulary import DTYPES, SAMPLING_MODE_NAMES

DIST = Path(__file__).resolve().parents[2] / "dist"
PAGES = Path(__file__).resolve().parent / "pages"


def model_attributes(args: argparse.Namespace) -> tuple[dict[str, str], dict[str, Path]]:
    """The runtime script tag's data- attributes, and a mount for a local model folder."""
    mounts: dict[str, Path] = {}
    model = args.model
    if Path(model).is_dir():
        mounts[f"/_models/{Path(model).resolve().name}/"] = Path(model).resolve()
        model = f"/_models/{Path(model).resolve().name}/"
    values = {"model": model, "dtype": args.dtype, "device": args.device}
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
    """Serve ``args.dist`` until interrupted."""
    from .server import StaticServer

    with StaticServer({"/": args.dist}, port=args.port) as server:
        print(f"Serving {args.dist} at {server.url}/ (Ctrl+C to stop)", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            return 0


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m py_runtime", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--dist", type=Path, default=DIST, help="the built dist/ folder")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("prompt", help="answer TEXT in headless Chromium, streamed")
    run.add_argument("text")
    run.add_argument("--model", default="echo", help="echo (default), a model URL or folder")
    run.add_argument("--dtype", choices=DTYPES)
    run.add_argument("--device", choices=("wasm", "webgpu"))
    run.add_argument(
        "--sampling-mode",
        choices=SAMPLING_MODE_NAMES,
        help="the session's samplingMode (default: balanced)",
    )
    run.add_argument("--timeout", type=float, default=300)
    run.set_defaults(handler=prompt)
    demo = commands.add_parser("serve", help="serve dist/ and its demo page")
    demo.add_argument("--port", type=int, default=8000)
    demo.set_defaults(handler=serve)
    args = parser.parse_args(argv)
    if not (args.dist / "language-model.js").is_file():
        parser.error(f"{args.dist} has no build: run `python3 build/build.py` first")
    return args.handler(args)
