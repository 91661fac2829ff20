"""Constrained answers tested at scale, as properties: every answer to a constraint of
``bench/constraint_corpus.py`` must satisfy it, by a validator that is not ours
(``jsonschema`` for JSON Schemas, JavaScript's ``RegExp`` for RegExps), and must end
by itself, before the response's token cap.

Per constraint: one greedy answer (``samplingMode: "most-predictable"``) and
``--samples`` sampled ones (``most-creative``: a model's default mode may be greedy,
SmolLM2's is; ``--sampling-mode`` picks another; a window cannot set topK or
temperature), each in a fresh session, the constraint's prompt with
``{responseConstraint}``. Hosts:

- ``cpython``: the engine with the CPython host (onnxruntime + llguidance), driven as
  the worker drives it (as ``bench/constrained.py`` does); the backend's counters give
  the mask's cost per token (``mask_ms``), the forward pass's (``run_ms``), each
  grammar's compile time and the exact count of answer tokens;
- ``page``: the built product (``dist/``) in headless Chromium (ONNX Runtime Web, wasm;
  XGrammar's web build): ``LanguageModel.create()`` and ``session.prompt()``. The page
  exposes no counters: tokens are the answer re-encoded with the model's tokenizer.

Counted: answers; refused (NotSupportedError: expected, marked ``expect_refused`` in
the corpus, or not); failed (any other error); violations (an answer its validator
rejects); incomplete (cut at the token cap and invalid), apart from answers that
reached the cap and still validate (the engine wrote their shortest valid ending as
the budget ran out). Every violation and incomplete answer is listed.

    python3 bench/constraint_properties.py --host cpython|page [--model smollm2|FOLDER]
        [--samples 22] [--limit N] [--only TEXT] [--sampling-mode MODE]
        [--max-tokens N] [--dtype fp32] [--threads 2] [--shard K/N] [--json OUT]
    python3 bench/constraint_properties.py --merge OUT1 OUT2 ...

A full run takes hours on two cores (see ``docs/constrained-decoding.md``):
``--shard K/N`` answers every Nth job from the Kth, so that N runs (on other machines,
or one after another) make the whole; ``--merge`` reports their ``--json`` files as one
run.

Needs the model (``python3 -m py_runtime models prepare smollm2``), Node (the RegExp
validator) and, for the page, ``dist/`` (``python3 build/build.py``). The exit status is
1 when an answer is a violation or incomplete, or a constraint was refused unexpectedly.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.constraint_corpus import (  # noqa: E402
    CORPUS,
)
from bench.constraint_hosts import run_cpython, run_page_headless  # noqa: E402
from bench.constraint_runs import (  # noqa: E402
    SAMPLED_MODE,
    Answer,
    Costs,
    Run,
    interleaved,
    known_cases,
    page_cut_at,
    plan,
)
from py_runtime.devtools import models  # noqa: E402


@dataclass
class Summary:
    answers: int
    answered: int
    refused: int
    refused_unexpected: list[str]
    failed: list[Answer]
    violations: list[Answer]
    #: Violations among answers that ended by themselves (not at the cap).
    complete_violations: list[Answer]
    #: Answers cut at the cap that do not validate.
    incomplete: list[Answer]
    #: Answers that reached the cap and still validate: the engine wrote their
    #: shortest valid ending as the budget ran out.
    budget_ended: int


def summarize(run: Run) -> Summary:
    answered = [a for a in run.answers if a.answered]
    refused = [a for a in run.answers if a.refused]
    unexpected = sorted({a.constraint for a in refused} - run.refused_expected)
    failed = [a for a in run.answers if a.error and not a.refused]
    violations = [a for a in answered if a.why]
    incomplete = [a for a in answered if a.cut and a.why]
    return Summary(
        len(run.answers),
        len(answered),
        len(refused),
        unexpected,
        failed,
        violations,
        [a for a in violations if not a.cut],
        incomplete,
        sum(1 for a in answered if a.cut and not a.why),
    )


def table(header: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def shorten(text: str, limit: int = 100) -> str:
    text = repr(text)
    return text if len(text) <= limit else text[: limit - 10] + f"…' ({len(text)} chars)"


def listing(answers: list[Answer]) -> str:
    """One line per answer: its constraint, mode, why it failed, and its text."""
    return "\n".join(
        f"[{a.constraint}] {a.mode}: {a.why or f'cut at {a.tokens} tokens'}: {shorten(a.text)}"
        for a in answers
    )


def report(run: Run) -> str:
    s = summarize(run)
    answered = [a for a in run.answers if a.answered]
    tokens = sum(a.tokens for a in answered)
    per_answer = run.seconds / len(run.answers) if run.answers else 0.0
    c = run.costs
    mask = f"{c.mask_ms / c.masked_steps:.3f}" if c and c.masked_steps else "not exposed"
    step = f"{c.step_ms / c.steps:.1f}" if c and c.steps else "not exposed"
    compile_ms = (
        f"{statistics.median(c.compile_ms):.1f} (max {max(c.compile_ms):.0f})"
        if c and c.compile_ms
        else "not exposed"
    )
    per_token = f"{1000 * sum(a.seconds for a in answered) / tokens:.1f}" if tokens else "–"
    out = [
        f"## {run.host}: {run.model}",
        "",
        f"Token cap {run.cap}; sampled answers: {run.sampling}; model load "
        f"{run.load_seconds:.1f} s; tokens "
        + (
            "as generated"
            if run.tokens_exact
            else f"re-encoded (cut: {page_cut_at(run.cap)} or more)"
        )
        + f"; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}.",
        "",
        table(
            [
                "answers",
                "answered",
                "violations (of complete answers)",
                "incomplete (cut, invalid)",
                "ended by the budget (valid)",
                "refused (unexpected constraints)",
                "other errors",
                "answer tokens, mean",
                "mask ms/token",
                "forward ms/token",
                "compile ms, median",
                "wall ms/answer token",
                "s/answer",
                "wall s",
            ],
            [
                [
                    s.answers,
                    s.answered,
                    f"{len(s.violations)} ({len(s.complete_violations)})",
                    len(s.incomplete),
                    s.budget_ended,
                    f"{s.refused} ({len(s.refused_unexpected)})",
                    len(s.failed),
                    f"{tokens / len(answered):.1f}" if answered else "–",
                    mask,
                    step,
                    compile_ms,
                    per_token,
                    f"{per_answer:.2f}",
                    f"{run.seconds:.0f}",
                ]
            ],
        ),
    ]
    by_constraint: dict[str, list[Answer]] = {}
    for a in run.answers:
        by_constraint.setdefault(a.constraint, []).append(a)
    rows = []
    for name, items in by_constraint.items():
        bad = [a for a in items if a.why or (a.error and not a.refused)]
        refused = [a for a in items if a.refused]
        if not bad and not (refused and name not in run.refused_expected):
            continue
        example = next((a for a in bad), refused[0] if refused else items[0])
        rows.append(
            [
                name,
                len(items),
                sum(1 for a in items if a.why),
                sum(1 for a in items if a.cut and a.why),
                len(refused),
                sum(1 for a in items if a.error and not a.refused),
                shorten(example.error or example.text, 80),
            ]
        )
    if rows:
        out += [
            "",
            "Constraints with failures:",
            "",
            table(
                [
                    "constraint",
                    "answers",
                    "violations",
                    "incomplete",
                    "refused",
                    "errors",
                    "example",
                ],
                rows,
            ),
        ]
    if s.refused_unexpected:
        out += ["", "Refused unexpectedly: " + ", ".join(s.refused_unexpected)]
    listed = [a for a in run.answers if a.why or (a.error and not a.refused)]
    if listed:
        out += ["", "Every violation, incomplete answer and error:", ""]
        for a in listed:
            kind = (
                "error"
                if a.error
                else ("violation" if a.why else "")
                + ((", " if a.why else "") + f"incomplete ({a.tokens} tokens)" if a.cut else "")
            )
            out.append(f"- [{a.constraint}] {a.mode}, {kind}: {a.error or a.why}")
            if a.text:
                out.append(f"    answer: {shorten(a.text, 300)}")
    return "\n".join(out)


def load(paths: list[Path]) -> Run:
    """The runs written by ``--json`` (shards of one plan), as one run."""
    parts = [json.loads(path.read_text()) for path in paths]
    first = parts[0]
    costs = Costs()
    for part in parts:
        for key, value in (part["costs"] or {}).items():
            setattr(costs, key, getattr(costs, key) + value)
    run = Run(
        first["host"],
        first["model"],
        first["cap"],
        first["sampling"],
        [Answer(**a) for part in parts for a in part["answers"]],
        sum(part["seconds"] for part in parts),
        statistics.median(part["load_seconds"] for part in parts),
        costs if first["costs"] else None,
        first.get("tokens_exact", True),
    )
    run.refused_expected = {c.name for c in CORPUS if c.expect_refused}
    return run


def failures(run: Run) -> bool:
    s = summarize(run)
    return bool(s.violations or s.incomplete or s.refused_unexpected or s.failed)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", choices=["cpython", "page"])
    parser.add_argument("--shard", help="K/N: every Nth answer of the plan, from the Kth")
    parser.add_argument("--merge", type=Path, nargs="+", help="report these --json files")
    parser.add_argument("--model", default="smollm2", help="smollm2, or a model folder")
    parser.add_argument("--dtype", default=None, help="default: the model's (fp32)")
    parser.add_argument("--samples", type=int, default=22, help="sampled answers per constraint")
    parser.add_argument("--no-greedy", action="store_true", help="no greedy answer")
    parser.add_argument("--limit", type=int, help="the first N constraints (kinds alternating)")
    parser.add_argument("--only", help="constraints whose name contains this text")
    parser.add_argument("--known", action="store_true", help="only the known broken cases")
    parser.add_argument(
        "--sampling-mode", default=SAMPLED_MODE, help="samplingMode of sampled answers"
    )
    parser.add_argument("--max-tokens", type=int, help="the response's token cap")
    parser.add_argument("--threads", type=int, default=2, help="onnxruntime threads (CPython)")
    parser.add_argument("--json", type=Path, help="write every answer and the summary here")
    parser.add_argument("--quiet", action="store_true", help="no line per answer")
    args = parser.parse_args()
    if args.merge:
        run = load(args.merge)
        print(report(run))
        return 1 if failures(run) else 0
    if not args.host:
        parser.error("--host or --merge is needed")
    folder = Path(models.resolve(args.model) or args.model)
    dtype = args.dtype or models.default_dtype(args.model) or "fp32"
    constraints = known_cases() if args.known else interleaved()
    if args.only:
        constraints = [c for c in constraints if args.only in c.name]
    if args.limit:
        constraints = constraints[: args.limit]
    jobs = plan(constraints, args.samples, greedy=not args.no_greedy)
    if args.shard:
        k, n = (int(part) for part in args.shard.split("/"))
        jobs = jobs[k - 1 :: n]
    print(
        f"# {len(constraints)} constraints, {len(jobs)} answers, host {args.host}, model {folder}",
        flush=True,
    )
    progress = None if args.quiet else (lambda text: print(text, flush=True))
    if args.host == "cpython":
        run = run_cpython(
            folder, jobs, dtype, args.threads, args.sampling_mode, args.max_tokens, progress
        )
    else:
        if not (ROOT / "dist" / "language-model.js").is_file():
            print("dist/ is missing: run python3 build/build.py first.", file=sys.stderr)
            return 2
        run = run_page_headless(
            folder,
            jobs,
            dtype=dtype,
            sampling_mode=args.sampling_mode,
            cap=args.max_tokens,
            progress=progress,
        )
    print()
    print(report(run))
    if args.json:
        s = summarize(run)
        args.json.write_text(
            json.dumps(
                {
                    "host": run.host,
                    "model": run.model,
                    "cap": run.cap,
                    "sampling": run.sampling,
                    "seconds": run.seconds,
                    "load_seconds": run.load_seconds,
                    "costs": asdict(run.costs) if run.costs else None,
                    "tokens_exact": run.tokens_exact,
                    "summary": {
                        "answers": s.answers,
                        "answered": s.answered,
                        "refused": s.refused,
                        "refused_unexpected": s.refused_unexpected,
                        "errors": len(s.failed),
                        "violations": len(s.violations),
                        "complete_violations": len(s.complete_violations),
                        "incomplete": len(s.incomplete),
                        "budget_ended": s.budget_ended,
                    },
                    "answers": [asdict(a) for a in run.answers],
                },
                indent=1,
                ensure_ascii=False,
            )
        )
        print(f"\nEvery answer: {args.json}")
    return 1 if failures(run) else 0


if __name__ == "__main__":
    raise SystemExit(main())
