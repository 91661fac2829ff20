"""The main job: ``python -m py_runtime prompt TEXT`` and ``python -m py_runtime serve``.

``prompt`` runs the real product: it serves ``dist/``, starts headless Chromium,
loads the script, creates a session (after a real click, for user activation)
and streams the answer to stdout. ``serve`` serves ``dist/`` and its demo page.
"""

from __future__ import annotations

import argparse
import html
import json
import sys
import time
from pathlib import Path

from .options import SAMPLING_MODES

DIST = Path(__file__).resolve().parent.parent / "dist"

PROMPT_PAGE = """<!doctype html>
<meta charset="utf-8">
<script src="/language-model.js" {attributes}></script>
<button id="go">Prompt</button>
<script>
  document.getElementById('go').addEventListener('click', async () => {{
    try {{
      const session = await LanguageModel.create({options});
      for await (const chunk of session.promptStreaming({text})) {{
        const call = chunk.value;
        await window.emitChunk(typeof chunk === 'string' ? chunk
          : `\\n[tool call ${{call.callId}}] ${{call.name}}(${{JSON.stringify(call.arguments)}})`);
      }}
      window.promptResult = {{ ok: true }};
    }} catch (error) {{
      window.promptResult = {{ ok: false, error: `${{error.name}}: ${{error.message}}` }};
    }}
  }});
</script>
"""


def model_attributes(args: argparse.Namespace) -> tuple[str, dict[str, Path]]:
    """The script tag's data- attributes, and a mount for a local model folder."""
    mounts: dict[str, Path] = {}
    model = args.model
    if Path(model).is_dir():
        mounts[f"/_models/{Path(model).resolve().name}/"] = Path(model).resolve()
        model = f"/_models/{Path(model).resolve().name}/"
    values = {"model": model, "dtype": args.dtype, "device": args.device}
    attributes = " ".join(
        f'data-{key}="{html.escape(value)}"' for key, value in values.items() if value
    )
    return attributes, mounts


def prompt(args: argparse.Namespace) -> int:
    from playwright.sync_api import sync_playwright

    from .host.browser import launch_args
    from .host.server import StaticServer

    attributes, mounts = model_attributes(args)
    options = json.dumps({"samplingMode": args.sampling_mode} if args.sampling_mode else {})
    page_html = PROMPT_PAGE.format(
        attributes=attributes, text=json.dumps(args.text), options=options
    )
    with (
        StaticServer({"/": args.dist, **mounts}, {"/_prompt.html": page_html.encode()}) as server,
        sync_playwright() as playwright,
    ):
        extra = ["--enable-unsafe-webgpu"] if args.device == "webgpu" else []
        browser = playwright.chromium.launch(**launch_args(extra))
        page = browser.new_page()
        page.expose_function("emitChunk", lambda chunk: print(chunk, end="", flush=True))
        page.goto(f"{server.url}/_prompt.html")
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
    from .host.server import StaticServer

    with StaticServer({"/": args.dist}, port=args.port) as server:
        print(f"Serving {args.dist} at {server.url}/ (Ctrl+C to stop)", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m py_runtime", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--dist", type=Path, default=DIST, help="the built dist/ folder")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("prompt", help="answer TEXT in headless Chromium, streamed")
    run.add_argument("text")
    run.add_argument("--model", default="echo", help="echo (default), a model URL or folder")
    run.add_argument("--dtype", help="fp32, fp16, q8, int8, q4, q4f16")
    run.add_argument("--device", choices=("wasm", "webgpu"))
    run.add_argument(
        "--sampling-mode",
        choices=SAMPLING_MODES,
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


if __name__ == "__main__":
    raise SystemExit(main())
