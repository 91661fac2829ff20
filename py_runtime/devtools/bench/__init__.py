"""Benchmarks, run in headless Chromium against the built ``dist/``.

``python -m py_runtime.bench startup [--model DIR] [--dtype q8]`` measures cold
start in a fresh browser each run: from navigation to ``create()`` resolved and to
the first streamed token, for the echo model (booted at script load and at the first
call) and for a model folder (default: the fixture), with Transformers.js loading
and answering from the same folder beside it (and, for ``smollm2``, wllama from the
same weights as a Q8_0 GGUF).

``python -m py_runtime.bench compare --model DIR [--dtype q4] [--threads 1 2]``
measures, alternating the systems run by run on the same files, dtype and threads:
prefill and decode tokens/s of ours (``promptAPIRuntime.benchmark()``), of
Transformers.js through its public API and of native onnxruntime under CPython
(the same ``py_runtime.models.speed`` code as ours), and for ``smollm2`` of wllama
(llama.cpp in wasm, npm ``@wllama/wllama``) on the same weights as a Q8_0 GGUF; the
share of a decode step spent outside the runtime's ``run()``; second-turn time to first
token on a ~1,000-token chat; and for each page its peak memory and its main-thread
tasks over 50 ms.

Both print tables (medians with min-max) and ``--json FILE`` writes the raw numbers.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from .. import engine, models
from .compare import compare
from .pages import DIST, FIXTURE
from .report import print_table, write_json
from .startup import startup


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m py_runtime.bench", description=__doc__)
    parser.add_argument("--dist", type=Path, default=DIST)
    commands = parser.add_subparsers(dest="command", required=True)
    cold = commands.add_parser(
        "startup", help="cold start: page load to ready and to a first token"
    )
    cold.add_argument("--model", default=str(FIXTURE), help="a model folder or smollm2")
    cold.add_argument("--dtype", default="q8")
    cold.add_argument("--runs", type=int, default=5)
    cold.add_argument("--json", type=Path, help="also write the raw numbers here")
    command = commands.add_parser("compare", help="ours vs Transformers.js vs native onnxruntime")
    command.add_argument("--model", required=True, help="a model folder or smollm2")
    command.add_argument("--dtype", default="q4")
    command.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    command.add_argument("--runs", type=int, default=5)
    command.add_argument("--prompt-tokens", type=int, default=512)
    command.add_argument("--decode-tokens", type=int, default=128)
    command.add_argument("--json", type=Path, help="also write the raw numbers here")
    command.add_argument(
        "--tjs-model", type=Path, help="another export of the weights for Transformers.js too"
    )
    args = parser.parse_args(argv)
    model = Path(models.resolve(args.model) or args.model).resolve()
    if args.command == "compare":
        results = compare(
            model,
            args.dtype,
            args.threads,
            args.runs,
            args.prompt_tokens,
            args.decode_tokens,
            args.dist,
            engine.gguf_q8() if args.model == "smollm2" else None,
            tjs_model=args.tjs_model,
        )
        print(
            f"{model.name} {args.dtype}, wasm: prefill {args.prompt_tokens} tokens, decode "
            f"{args.decode_tokens} (greedy, eos ignored); second turn on a chat history\n"
        )
        print_table(results, ["prefill", "decode", "outside"])
        print_table(results, ["ttft", "history"])
        print_table(results, ["peak_mib", "long_tasks", "longest_task_ms"])
    else:
        gguf = engine.gguf_q8() if args.model == "smollm2" else None
        results = startup(args.runs, args.dist, model, args.dtype, gguf)
        print(
            f"cold start in a fresh headless Chromium: echo and {model.name} {args.dtype}, wasm\n"
        )
        print_table(
            results, ["ready_ms", "first_token_ms", "peak_mib", "long_tasks", "longest_task_ms"]
        )
    print(f"medians of {args.runs} runs (min-max); {os.cpu_count()} cores")
    if args.json:
        write_json(args.json, vars(args) | {"model": str(model)}, results)
    return 0
