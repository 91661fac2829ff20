"""Constrained decoding on real-size models under CPython (onnxruntime + llguidance).

Four parts, per model (SmolLM2-135M-Instruct, a real instruct model, and the
0.5B-size benchmark model with random weights, which writes noise):

1. Validity: JSON schemas and JavaScript regular expressions written here, each
   answered for a topical and a generic prompt, greedily ("most-predictable") and
   sampled (topK 40, temperature 1.0). Every answer is checked: JSON parsed and
   validated with ``jsonschema`` (formats checked), regexes matched whole with
   JavaScript's RegExp (``node``; Python's ``re.fullmatch`` without it). Strings,
   numbers and arrays are bounded: noise never closes an unbounded value within the
   response's token limit.
2. Cost: the one-time vocabulary preparation, each grammar's compile time (what
   ``backend.constrain()`` adds before the first token), the mask per token
   (``backend.mask_ms`` / masked steps) and a decode step (``run_ms`` / one-token
   forward calls under a grammar).
3. Jump-forward (SmolLM2, greedy): a schema with long keys, with
   ``model.jump_forward`` on and off: tokens/s, tokens jumped, the same text.
4. Tool calls (SmolLM2, sampled): the weather tool with its worked example, about
   twenty questions, with the tool-call grammar and without it.

    python3 bench/constrained.py [--model smollm2|random|both] [--quick]
        [--random-dtype auto|q8|fp32]

The tables at the end are markdown. The exit status is 1 when any answer is
invalid, a generation failed, or jump-forward changed an answer.

The constraints are in ``constrained_cases.py``, the runtime's driver in
``constrained_driver.py``, the parts in ``constrained_validity.py``,
``constrained_jump.py`` and ``constrained_tools.py``, the tables in
``constrained_report.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import jsonschema

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.constrained_cases import SCHEMAS, UNSUPPORTED, Case  # noqa: E402
from bench.constrained_driver import SMOLLM2, THREADS, Bench, pick_random_dtype  # noqa: E402
from bench.constrained_jump import JUMP_SCHEMA, jump_timing  # noqa: E402
from bench.constrained_report import (  # noqa: E402
    ModelReport,
    compile_table,
    cost_table,
    dump,
    failure_table,
    failures,
    jump_table,
    table,
    tools_table,
    validity_table,
)
from bench.constrained_tools import WEATHER_SCHEMA, tool_calls  # noqa: E402
from bench.constrained_validity import refusals, validity  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=["smollm2", "random", "both"], default="both")
    parser.add_argument("--quick", action="store_true", help="fewer prompts (a smoke test)")
    parser.add_argument("--random-dtype", choices=["auto", "q8", "fp32"], default="auto")
    parser.add_argument("--answers", type=Path, help="write every answer to this JSON file")
    args = parser.parse_args()
    for case in [*SCHEMAS, JUMP_SCHEMA_CASE, TOOL_SCHEMA_CASE]:
        assert case.schema is not None
        jsonschema.Draft202012Validator.check_schema(case.schema)
    started = time.perf_counter()
    reports: list[ModelReport] = []
    labels = ["smollm2", "random"] if args.model == "both" else [args.model]
    for label in labels:
        print(f"\n## {label} (load average {os.getloadavg()[0]:.1f})", flush=True)
        model_started = time.perf_counter()
        if label == "smollm2":
            bench, note = Bench("smollm2", SMOLLM2, "fp32"), "fp32 (the default dtype)"
        else:
            bench, note = pick_random_dtype(args.random_dtype)
        print(f"  dtype {note}; load {bench.load_s:.1f} s", flush=True)
        vocabulary = bench.vocabulary_ms()
        print(
            f"  vocabulary preparation {vocabulary:.0f} ms; the backend's first constrain() "
            f"{bench.first_constrain_ms:.0f} ms",
            flush=True,
        )
        load = os.getloadavg()[0]
        report = ModelReport(bench, note, vocabulary, validity(bench, args.quick))
        report.load = (load, 0.0)
        report.plain_step_ms = bench.plain_step_ms()
        report.refused = refusals(bench)
        if label == "smollm2":
            report.jump = jump_timing(bench, args.quick)
            report.tools = tool_calls(bench, args.quick)
        reports.append(report)
        report.seconds = time.perf_counter() - model_started
        report.load = (report.load[0], os.getloadavg()[0])
        print(f"  {label}: {report.seconds:.0f} s (load average {report.load[1]:.1f})", flush=True)
        bad = failures([report])
        if bad:
            print("\n".join(bad), flush=True)

    print("\n# Results\n")
    for report in reports:
        print(
            f"- {report.bench.label}: dtype {report.dtype_note}; {THREADS} onnxruntime threads; "
            f"regexes checked with {report.validity.regex_checker}; {report.seconds:.0f} s; "
            f"1-minute load average {report.load[0]:.1f} before, {report.load[1]:.1f} after "
            f"({os.cpu_count()} CPUs)"
        )
    print("\n## 1. Validity (every answer parsed and validated)\n")
    print(validity_table(reports))
    invalid = failure_table(reports)
    if invalid:
        print("\nInvalid answers (listed in full below):\n")
        print(invalid)
    print("\nConstraints the runtime refuses (one greedy prompt each):\n")
    print(
        table(
            ["constraint", *[r.bench.label for r in reports]],
            [[c.name, *[r.refused.get(c.name, "") for r in reports]] for c in UNSUPPORTED],
        )
    )
    print("\n## 2. Cost\n")
    print(cost_table(reports))
    print("\nCompile time per constraint (backend.constrain(), before the first token):\n")
    print(compile_table(reports))
    smol = next((r for r in reports if r.bench.label == "smollm2"), None)
    if smol and smol.jump:
        print("\n## 3. Jump-forward (SmolLM2, greedy, long keys)\n")
        print(jump_table(smol.jump))
    if smol and smol.tools:
        print("\n## 4. Tool calls (SmolLM2, sampled topK 40 / temperature 1.0)\n")
        print(tools_table(smol.tools))
    if args.answers:
        args.answers.write_text(json.dumps(dump(reports), indent=1, ensure_ascii=False))
        print(f"\nEvery answer: {args.answers}")
    bad = failures(reports)
    print(f"\nTotal wall time: {time.perf_counter() - started:.0f} s")
    if bad:
        print(f"\n{len(bad)} FAILURE(S):")
        print("\n".join(bad))
        return 1
    print("\nNo failures: every answer valid.")
    return 0


JUMP_SCHEMA_CASE = Case("jump", "", JUMP_SCHEMA)
TOOL_SCHEMA_CASE = Case("tool", "", WEATHER_SCHEMA)

if __name__ == "__main__":
    raise SystemExit(main())
