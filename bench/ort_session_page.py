"""ONNX Runtime Web's session creation, option by option, in headless Chromium (wasm,
cross-origin isolated, every core): the time of ``InferenceSession.create()`` on the
model's bytes (already in memory), of a decode step after it, and of a 128-position
prefill chunk on an empty cache and after 128 cached positions, per variant, so that what
an option (or another graph of the same model) saves at start is weighed against what it
costs per token.

    python3 bench/ort_session_page.py [--model smollm2|DIR] [--dtype fp32] [--steps 16]
        [--only WORDS...] [--runs N]

``--only`` keeps the variants whose name holds one of the words; ``--runs`` repeats the
chosen variants, alternating them, each in a fresh page.

Needs dist/ (its ORT files). Prints markdown.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from py_runtime.devtools import models  # noqa: E402
from py_runtime.devtools.browser import launch_args  # noqa: E402
from py_runtime.devtools.server import StaticServer  # noqa: E402
from py_runtime.engine.vocabulary import model_file  # noqa: E402

FOLD = {"session": {"disable_quant_qdq": "1"}}
ORT_FORMAT = {
    "session": {"use_ort_model_bytes_directly": "1", "use_ort_model_bytes_for_initializers": "1"}
}
VARIANTS = [
    (
        "ORT format, bytes used in place",
        {"graphOptimizationLevel": "disabled", "extra": ORT_FORMAT},
    ),
    (
        "the product's: all optimizations, QDQ fold",
        {"graphOptimizationLevel": "all", "extra": FOLD},
    ),
    (
        "all optimizations, no prepacking",
        {
            "graphOptimizationLevel": "all",
            "extra": {"session": {"disable_quant_qdq": "1", "disable_prepacking": "1"}},
        },
    ),
    ("extended", {"graphOptimizationLevel": "extended", "extra": FOLD}),
    ("basic", {"graphOptimizationLevel": "basic", "extra": FOLD}),
    ("disabled", {"graphOptimizationLevel": "disabled"}),
    (
        "all, no memory pattern, no arena",
        {
            "graphOptimizationLevel": "all",
            "extra": FOLD,
            "enableMemPattern": False,
            "enableCpuMemArena": False,
        },
    ),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--dtype", default="fp32")
    parser.add_argument("--steps", type=int, default=16)
    parser.add_argument("--file", help="the model file in the folder (default: the dtype's)")
    parser.add_argument("--only", nargs="+", help="variants whose name holds one of these")
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    folder = Path(models.resolve(args.model) or args.model)
    config = json.loads((folder / "config.json").read_text())
    heads = config["num_attention_heads"]
    dim = config.get("head_dim") or config["hidden_size"] // heads
    kv = {"heads": config.get("num_key_value_heads", heads), "dim": dim}
    from playwright.sync_api import sync_playwright

    mounts = {"/dist/": ROOT / "dist", "/model/": folder, "/": ROOT / "bench" / "pages"}
    with StaticServer(mounts) as server, sync_playwright() as playwright:
        browser = playwright.chromium.launch(**launch_args())
        rows = []
        chosen = [v for v in VARIANTS if not args.only or any(w in v[0] for w in args.only)]
        for name, options in chosen * args.runs:  # a fresh page each: a fresh wasm memory
            page = browser.new_page()
            page.goto(f"{server.url}/ort-session.html")
            page.wait_for_function("() => window.ready === true")
            page.evaluate("(kv) => { window.kvShape = kv; }", kv)
            job = {
                "url": f"/model/{args.file or model_file(args.dtype)}",
                "variants": [{"name": name, "options": options}],
                "decodeSteps": args.steps,
            }
            rows += page.evaluate("(job) => measure(job)", job)
            page.close()
        browser.close()
    print(f"## {folder.name} {args.dtype}: InferenceSession.create(), a decode step, prefill\n")
    print(
        "| variant | create ms | decode step ms | 128 positions ms | 128 after 128 ms |\n"
        "| --- | ---: | ---: | ---: | ---: |"
    )
    for row in rows:
        print(
            f"| {row['name']} | {row['createMs']:.0f} | {row['stepMs']:.1f}"
            f" | {row['chunkMs']:.0f} | {row['laterChunkMs']:.0f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
