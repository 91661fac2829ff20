"""The closed loop's cost in headless Chromium (docs/tools.md).

1. The scheduler alone (web/src/tool-scheduler.js, loaded as a module): batches of
   calls whose tool settles at once, parallel-safe or exclusive, in microseconds per
   call: dispatch, grouping, the cap and the ordered commit, with nothing else.
2. End to end on the echo model: a closed-loop ``prompt()`` against the same exchange
   done by hand in the open loop (``prompt()``, build the responses, ``prompt()``
   again), both through the worker; the difference per call is what the loop adds.

    python3 bench/tool_loop_page.py [--repeats N]

Needs dist/ (python3 build/build.py). Prints markdown.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from py_runtime.devtools.browser import launch_args  # noqa: E402
from py_runtime.devtools.server import StaticServer  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    scheduler = [
        {"calls": n, "readOnly": ro, "maxParallel": 4, "repeats": max(1, 20000 // n)}
        for n in (1, 10, 100, 1000)
        for ro in (True, False)
    ]
    loop = [{"calls": n, "repeats": args.repeats} for n in (1, 4, 8)]
    mounts = {"/": ROOT / "bench" / "pages", "/_lm/": ROOT / "dist", "/src/": ROOT / "web" / "src"}
    with StaticServer(mounts, {}) as server, sync_playwright() as playwright:
        browser = playwright.chromium.launch(**launch_args())
        try:
            page = browser.new_page()
            page.goto(f"{server.url}/tool-loop.html")
            page.click("body")  # user activation: the first create() downloads
            result = page.evaluate("(job) => measure(job)", {"scheduler": scheduler, "loop": loop})
        finally:
            browser.close()
    print("## The scheduler alone (tools settle at once), per call\n")
    print("| calls per batch | class | us per call |\n| ---: | --- | ---: |")
    for row in result["scheduler"]:
        kind = "parallel-safe (cap 4)" if row["readOnly"] else "exclusive"
        print(f"| {row['calls']} | {kind} | {row['usPerCall']:.2f} |")
    print("\n## End to end on the echo model, per prompt\n")
    print("| calls | closed loop ms | open loop by hand ms | difference per call ms |")
    print("| ---: | ---: | ---: | ---: |")
    for row in result["loop"]:
        diff = (row["closedMs"] - row["openMs"]) / row["calls"]
        print(f"| {row['calls']} | {row['closedMs']:.2f} | {row['openMs']:.2f} | {diff:+.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
