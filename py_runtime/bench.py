"""Benchmarks, run in headless Chromium against the built ``dist/``.

``python -m py_runtime.bench startup [--runs 5]`` measures cold start: from
navigation start to the first ``create()`` resolving, with the runtime booted
at script load (``eager``, the default) or at the first call (``lazy``), for a
page that creates a session as soon as it can and for one that waits a second.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

DIST = Path(__file__).resolve().parent.parent / "dist"

STARTUP_PAGE = """<!doctype html><meta charset=utf-8>
<script src="/language-model.js" data-boot="{boot}"></script>
<button id=go>go</button>
<script>
  document.getElementById('go').addEventListener('click', () => {{
    setTimeout(async () => {{
      const called = performance.now();
      await LanguageModel.create();
      const resolved = performance.now();
      console.debug('startup ' + JSON.stringify({{ called, resolved }}));
    }}, {delay});
  }});
</script>
"""


def startup(runs: int, dist: Path) -> dict[str, dict[str, list[float]]]:
    """Per boot mode and create() delay: navigation-to-resolved and call-to-resolved times (ms)."""
    from playwright.sync_api import sync_playwright

    from .host.browser import launch_args
    from .host.server import StaticServer

    pages = {
        f"/{boot}-{delay}.html": STARTUP_PAGE.format(boot=boot, delay=delay).encode()
        for boot in ("eager", "lazy")
        for delay in (0, 1000)
    }
    results: dict[str, dict[str, list[float]]] = {}
    with StaticServer({"/": dist}, pages) as server, sync_playwright() as playwright:
        browser = playwright.chromium.launch(**launch_args())
        for _ in range(runs):  # alternate the variants within each round
            for name in pages:
                context = browser.new_context()
                page = context.new_page()
                with page.expect_console_message(
                    lambda m: m.text.startswith("startup "), timeout=120_000
                ) as message:
                    page.goto(server.url + name)
                    page.click("#go")
                times = json.loads(message.value.text.removeprefix("startup "))
                variant = results.setdefault(name.strip("/").removesuffix(".html"), {})
                variant.setdefault("load_to_create_ms", []).append(times["resolved"])
                variant.setdefault("call_to_create_ms", []).append(
                    times["resolved"] - times["called"]
                )
                context.close()
        browser.close()
    return results


def summary(values: list[float]) -> str:
    return f"{statistics.median(values):8.0f} ({min(values):.0f}-{max(values):.0f})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m py_runtime.bench", description=__doc__)
    parser.add_argument("--dist", type=Path, default=DIST)
    commands = parser.add_subparsers(dest="command", required=True)
    cold = commands.add_parser("startup", help="page load to the first create() resolving")
    cold.add_argument("--runs", type=int, default=5)
    cold.add_argument("--json", type=Path, help="also write the raw numbers here")
    args = parser.parse_args(argv)
    results = startup(args.runs, args.dist)
    print(f"{'boot-create delay':<20}{'load to create() ms':>26}{'call to create() ms':>26}")
    for name, variant in results.items():
        load, call = variant["load_to_create_ms"], variant["call_to_create_ms"]
        print(f"{name:<20}{summary(load):>26}{summary(call):>26}")
    print(f"medians of {args.runs} runs (min-max), headless Chromium, echo model")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
