"""Prefill and decode speed round by round in one page of ours, in headless Chromium.

Each round is one ``promptAPIRuntime.benchmark()`` (a prompt of ``--prompt-tokens``,
then ``--decode-tokens`` greedy steps) in the same page, after the machine settles: a
speed that changes from round to round in one page shows here, where medians hide it.
With it, the share of a decode step spent outside ONNX Runtime's ``run()``.

    python3 bench/prefill_rounds.py [--model smollm2|DIR] [--dtype fp32] [--rounds 10]
        [--threads 2] [--jspi auto|off] [--dist DIR]

Prints a line per round; needs dist/ (or ``--dist``: another build of it).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from py_runtime.devtools import models  # noqa: E402
from py_runtime.devtools.bench.compare import settle  # noqa: E402
from py_runtime.devtools.bench.pages import launch, mounts, page_path  # noqa: E402
from py_runtime.devtools.server import StaticServer  # noqa: E402


def main() -> int:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--dtype", default="fp32")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--prompt-tokens", type=int, default=256)
    parser.add_argument("--decode-tokens", type=int, default=8)
    parser.add_argument("--jspi", choices=["auto", "off"], default="auto")
    parser.add_argument("--dist", type=Path, default=ROOT / "dist")
    args = parser.parse_args()
    folder = Path(models.resolve(args.model) or args.model)
    query = {"data-model": "/_model/", "data-dtype": args.dtype, "data-threads": args.threads}
    query |= {"data-jspi": "off"} if args.jspi == "off" else {}
    options = {"promptTokens": args.prompt_tokens, "decodeTokens": args.decode_tokens}
    with StaticServer(mounts(args.dist, folder)) as server, sync_playwright() as playwright:
        browser, _ = launch(playwright)
        page = browser.new_page()
        page.goto(server.url + page_path("ours-speed.html", query))
        print("| round | prefill tok/s | decode tok/s | decode outside run() |")
        print("| ---: | ---: | ---: | ---: |")
        for number in range(args.rounds):
            settle()
            speed = page.evaluate("(o) => promptAPIRuntime.benchmark(o)", options)
            prefill, decode = speed["prefillTokensPerSecond"], speed["decodeTokensPerSecond"]
            outside = 100 * speed["outsideRunShare"]
            print(f"| {number} | {prefill:.0f} | {decode:.1f} | {outside:.1f} % |", flush=True)
        browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
