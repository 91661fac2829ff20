"""The product on two ONNX Runtime Web builds, side by side: dist/ as built, and dist/
with its ``ort/`` files replaced by another onnxruntime-web package's (e.g. a newer or
a dev release from npm). Runs alternate the two, each in a fresh browser:
``promptAPIRuntime.benchmark()`` (prefill and decode tokens/s) on each dtype.

    npm pack onnxruntime-web@VERSION && tar xzf onnxruntime-web-VERSION.tgz
    python3 bench/ort_versions.py --other package/dist [--model smollm2] \\
        [--dtypes fp32 int8] [--runs 3]

Prints markdown (medians, min-max).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path
from statistics import median

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from py_runtime.devtools import models  # noqa: E402
from py_runtime.devtools.bench.pages import launch, mounts, page_path  # noqa: E402
from py_runtime.devtools.server import StaticServer  # noqa: E402


def with_other_ort(dist: Path, other: Path, into: Path) -> Path:
    """A copy of dist/ (hard links) whose ort/ files come from ``other``."""
    shutil.copytree(dist, into, copy_function=shutil.copy)
    for old in (into / "ort").iterdir():
        replacement = other / old.name
        if not replacement.is_file():
            raise SystemExit(f"{other} has no {old.name}")
        old.unlink()
        shutil.copy(replacement, old)
    return into


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--other", type=Path, required=True, help="another package's dist/")
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--dtypes", nargs="+", default=["fp32", "int8"])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--prompt-tokens", type=int, default=128)
    parser.add_argument("--decode-tokens", type=int, default=64)
    args = parser.parse_args()
    folder = models.folder(args.model) if args.model in models.MODELS else Path(args.model)
    from playwright.sync_api import sync_playwright

    results: dict[tuple[str, str], list[dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as work:
        builds = {
            "dist/ as built": ROOT / "dist",
            f"ort/ from {args.other}": with_other_ort(ROOT / "dist", args.other, Path(work) / "d"),
        }
        with sync_playwright() as playwright:
            for _ in range(args.runs):
                for dtype in args.dtypes:
                    for name, dist in builds.items():
                        with StaticServer(mounts(dist, folder)) as server:
                            browser, _ = launch(playwright)
                            page = browser.new_page()
                            query = {"data-model": "/_model/", "data-dtype": dtype}
                            page.goto(server.url + page_path("ours-speed.html", query))
                            speed = page.evaluate(
                                "(o) => promptAPIRuntime.benchmark(o)",
                                {
                                    "promptTokens": args.prompt_tokens,
                                    "decodeTokens": args.decode_tokens,
                                },
                            )
                            browser.close()
                        results.setdefault((dtype, name), []).append(speed)
                        print(json.dumps([dtype, name, speed]), file=sys.stderr)
    print("| dtype | ONNX Runtime Web | prefill tok/s | decode tok/s |")
    print("| --- | --- | --- | --- |")
    for (dtype, name), runs in results.items():
        cells = []
        for key in ("prefillTokensPerSecond", "decodeTokensPerSecond"):
            values = [run[key] for run in runs]
            cells.append(f"{median(values):.1f} ({min(values):.1f}-{max(values):.1f})")
        print(f"| {dtype} | {name} | {' | '.join(cells)} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
