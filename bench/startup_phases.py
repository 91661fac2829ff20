"""Where a warm start goes: a real model loaded from the model cache (a second visit, the
same on-disk profile), from navigation to the first streamed token, cut at the worker's
marks (``performance.mark('prompt-api:…')`` in web/worker/): Pyodide booted, the engine
started, the session's load begun (the engine has read config.json, the tokenizer and
the template), its files in hand, ONNX Runtime's session created, the first token.

    python3 bench/startup_phases.py [--model smollm2|DIR] [--dtype fp32] [--runs 3]
        [--jspi auto|off]

Prints markdown (medians), and how many visits never reached their first token within
two minutes; needs dist/.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from py_runtime.devtools import models  # noqa: E402
from py_runtime.devtools.bench.pages import launch_profile, mounts, page_path  # noqa: E402
from py_runtime.devtools.server import StaticServer  # noqa: E402

PHASES = [
    ("pyodide-ready", "Pyodide booted (snapshot, wheels)"),
    ("engine-ready", "engine started"),
    ("session-load", "create(): config, tokenizer, template read"),
    ("session-files", "the model's files in hand (cache)"),
    ("session-created", "ONNX Runtime's session created"),
    ("first", "first token (prefill of the prompt)"),
]
#: True once the model's files (graph and weights) are in the model cache.
CACHED = """async () => (await promptAPIRuntime.cache.list())
  .filter((f) => /[.]onnx(_data)?$/.test(f.url)).length >= 2"""
#: The worker's marks, as times since the page's navigation (ms).
MARKS = """(origin) => performance.getEntriesByType('mark')
  .filter((m) => m.name.startsWith('prompt-api:'))
  .map((m) => [m.name.slice('prompt-api:'.length),
                performance.timeOrigin + m.startTime - origin])"""


def visit(context: object, url: str) -> dict[str, float] | None:
    """Load ``url``, create at the click, wait for the first token and for the model
    cache to hold the model; the marks (None: no first token within two minutes)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page = context.new_page()  # type: ignore[attr-defined]
    try:
        with page.expect_console_message(
            lambda m: m.text.startswith("coldstart "), timeout=120_000
        ) as message:
            page.goto(url)
            page.click("#go")
    except PlaywrightTimeout:
        page.close()
        return None
    times = json.loads(message.value.text.removeprefix("coldstart "))
    origin = page.evaluate("performance.timeOrigin")
    worker = next(w for w in page.workers if w.url.endswith("/worker.mjs"))
    marks = dict(worker.evaluate(MARKS, origin))
    marks["first"] = times["first"]
    page.wait_for_function(CACHED, timeout=300_000)
    page.close()
    return marks


def main() -> int:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--dtype", default="fp32")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--jspi", choices=["auto", "off"], default="auto")
    args = parser.parse_args()
    folder = Path(models.resolve(args.model) or args.model)
    query = {"data-model": "/_model/", "data-dtype": args.dtype, "data-jspi": args.jspi}
    path = page_path("ours-cold.html", query)
    runs: list[dict[str, float]] = []
    hung = 0
    with (
        StaticServer(mounts(ROOT / "dist", folder)) as server,
        sync_playwright() as playwright,
    ):
        while len(runs) < args.runs:
            with tempfile.TemporaryDirectory() as profile:
                context, _pid = launch_profile(playwright, Path(profile))
                # The first visit fills the cache; the second is measured.
                marks = visit(context, server.url + path) and visit(context, server.url + path)
                context.close()
            if marks is None:
                hung += 1
            else:
                runs.append(marks)
    print(
        f"## {folder.name} {args.dtype}, warm model cache, JSPI {args.jspi}: "
        f"medians of {len(runs)} runs\n"
    )
    print("| phase ends | at (ms since navigation) | phase (ms) |\n| --- | ---: | ---: |")
    before = 0.0
    for key, label in PHASES:
        at = statistics.median(run[key] for run in runs)
        print(f"| {label} | {at:,.0f} | {at - before:,.0f} |")
        before = at
    print(f"\nvisits with no first token within 2 minutes: {hung}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
