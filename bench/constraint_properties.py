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
import asyncio
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.constraint_corpus import (  # noqa: E402
    CORPUS,
    KNOWN_CASES,
    REGEXPS,
    SCHEMAS,
    Constraint,
    judge,
)
from py_runtime.devtools import models  # noqa: E402

GREEDY = "greedy"
SAMPLED = "sampled"
#: The samplingMode of sampled answers.
SAMPLED_MODE = "most-creative"


def page_cut_at(cap: int) -> int:
    """In the page, an answer re-encoded into at least this many tokens is counted as
    cut at ``cap``: it was generated as more tokens than its canonical encoding
    (jump-forward encodes forced text piece by piece; sampled tokens need not be
    canonical): up to 9 % more under CPython (the quoted word list at 128 tokens)."""
    return cap - max(16, cap // 8)


Progress = Callable[[str], None]


@dataclass(frozen=True)
class Job:
    constraint: Constraint
    mode: str  # GREEDY or SAMPLED


@dataclass
class Answer:
    constraint: str
    kind: str  # "regexp" or "json-schema"
    mode: str
    text: str
    seconds: float
    error: str = ""  # "Name: message" when prompt() threw
    tokens: int = 0  # answer tokens (CPython: as generated; page: re-encoded)
    cut: bool = False  # ended at the token cap
    why: str = ""  # why the validator rejects it ("" when valid)

    @property
    def refused(self) -> bool:
        return self.error.startswith("NotSupportedError")

    @property
    def answered(self) -> bool:
        return not self.error


@dataclass
class Costs:
    """What the backend spent (CPython only)."""

    masked_steps: int = 0
    mask_ms: float = 0.0
    steps: int = 0  # one-token forward calls under a grammar
    step_ms: float = 0.0
    compile_ms: list[float] = field(default_factory=list)


@dataclass
class Run:
    host: str
    model: str
    cap: int
    sampling: str
    answers: list[Answer]
    seconds: float
    load_seconds: float = 0.0
    costs: Costs | None = None
    tokens_exact: bool = True
    refused_expected: set[str] = field(default_factory=set)


# -- plans ---------------------------------------------------------------------------------


def interleaved() -> list[Constraint]:
    """RegExps and schemas alternately: any prefix (``--limit``) holds both kinds."""
    out: list[Constraint] = []
    for index in range(max(len(REGEXPS), len(SCHEMAS))):
        out += [kind[index] for kind in (REGEXPS, SCHEMAS) if index < len(kind)]
    return out


def plan(constraints: list[Constraint], samples: int, greedy: bool = True) -> list[Job]:
    """Per constraint: a greedy answer, then ``samples`` sampled ones."""
    jobs: list[Job] = []
    for constraint in constraints:
        jobs += [Job(constraint, GREEDY)] if greedy else []
        jobs += [Job(constraint, SAMPLED) for _ in range(samples)]
    return jobs


def slice_plan(greedy: list[Constraint], sampled: list[Constraint], samples: int) -> list[Job]:
    """CI slices: a greedy answer for each of ``greedy``, ``samples`` sampled answers for
    each of ``sampled``."""
    jobs = [Job(c, GREEDY) for c in greedy]
    return jobs + [Job(c, SAMPLED) for c in sampled for _ in range(samples)]


def known_cases() -> list[Constraint]:
    by_name = {c.name: c for c in CORPUS}
    return [by_name[name] for name in KNOWN_CASES]


# -- CPython ---------------------------------------------------------------------------


class CPythonHost:
    """A Runtime over a CausalLM on onnxruntime + llguidance, with the backend's calls
    counted (as ``bench/constrained.py`` does)."""

    def __init__(self, folder: Path, dtype: str, threads: int, cap: int | None) -> None:
        from py_runtime.engine.runtime import Runtime
        from py_runtime.hosts.cpython import local_model

        self.loop = asyncio.new_event_loop()
        started = time.perf_counter()
        self.model = local_model(folder, dtype, threads=threads)  # type: ignore[arg-type]
        self.runtime = Runtime(self.model)
        self.loop.run_until_complete(self.model.load(lambda _: None, lambda: False))
        self.load_seconds = time.perf_counter() - started
        if cap is not None:
            self.model.max_response_tokens = cap
        self.costs = Costs()
        self.tokens: int | None = None  # answer tokens run since the grammar was set
        self._instrument()

    def _instrument(self) -> None:
        backend = self.model.backend
        assert backend is not None
        constrain, forward, next_token = backend.constrain, backend.forward, backend.next_token
        held: set[int] = set()

        async def timed_constrain(cache: int, grammar: Any) -> None:
            if grammar is None:
                held.discard(cache)
                await constrain(cache, None)
                return
            started = time.perf_counter()
            await constrain(cache, grammar)
            self.costs.compile_ms.append((time.perf_counter() - started) * 1000)
            held.add(cache)
            self.tokens = 0

        async def counted_forward(cache: int, ids: list[int]) -> None:
            before = backend.run_ms
            await forward(cache, ids)
            if cache in held:
                assert self.tokens is not None
                self.tokens += len(ids)
                if len(ids) == 1:
                    self.costs.steps += 1
                    self.costs.step_ms += backend.run_ms - before

        async def counted_next_token(cache: int, sampling: Any) -> int:
            before = backend.mask_ms
            token = int(await next_token(cache, sampling))
            if cache in held:
                self.costs.masked_steps += 1
                self.costs.mask_ms += backend.mask_ms - before
            return token

        backend.constrain = timed_constrain  # type: ignore[method-assign]
        backend.forward = counted_forward  # type: ignore[method-assign]
        backend.next_token = counted_next_token  # type: ignore[method-assign]

    def answer(self, job: Job, sampling_mode: str | None) -> Answer:
        from py_runtime.engine.errors import PromptAPIError

        options: dict[str, Any] = {}
        if job.mode == GREEDY:
            options = {"samplingMode": "most-predictable"}
        elif sampling_mode:
            options = {"samplingMode": sampling_mode}
        chunks: list[dict[str, Any]] = []

        async def settle(_: Any) -> bool:
            return True

        async def ask() -> None:
            info = await self.runtime.create(options, True, lambda _: None, lambda: False)
            try:
                await self.runtime.prompt(
                    info["session"],
                    job.constraint.prompt,
                    job.constraint.wire(),  # type: ignore[arg-type]
                    False,
                    chunks.append,  # type: ignore[arg-type]
                    settle,
                    lambda: False,
                )
            finally:
                self.runtime.destroy(info["session"])

        self.tokens = None
        started = time.perf_counter()
        error = ""
        try:
            self.loop.run_until_complete(ask())
        except PromptAPIError as failure:
            error = str(failure)
            error = error if error.startswith(failure.name) else f"{failure.name}: {error}"
        except Exception as failure:  # a crash is a result here: count it, go on
            error = f"{type(failure).__name__}: {failure}"
        seconds = time.perf_counter() - started
        text = "".join(c["text"] for c in chunks if c["kind"] == "text")
        tokens = self.tokens or 0
        cut = not error and tokens >= self.model.max_response_tokens
        c = job.constraint
        return Answer(c.name, c.kind, job.mode, text, seconds, error, tokens, cut)


def run_cpython(
    folder: Path,
    jobs: list[Job],
    dtype: str = "fp32",
    threads: int = 2,
    sampling_mode: str = SAMPLED_MODE,
    cap: int | None = None,
    progress: Progress | None = None,
) -> Run:
    host = CPythonHost(folder, dtype, threads, cap)
    started = time.perf_counter()
    answers = []
    for job in jobs:
        answer = host.answer(job, sampling_mode)
        answers.append(answer)
        if progress:
            progress(line(job, answer))
    run = Run(
        "cpython (onnxruntime + llguidance)",
        f"{folder.name} ({dtype}, {threads} threads)",
        host.model.max_response_tokens,
        sampling_mode,
        answers,
        time.perf_counter() - started,
        host.load_seconds,
        host.costs,
    )
    validate(run)
    return run


# -- the page --------------------------------------------------------------------------

PAGE = """<!doctype html><meta charset=utf-8>
<script src="/_lm/language-model.js" data-model="/model/" data-dtype="{dtype}"></script>
<button id=go>go</button>"""

#: One constraint's answers, each in a fresh session.
PAGE_ANSWERS = """async (jobs) => {
  const out = [];
  for (const job of jobs) {
    const started = performance.now();
    let session = null;
    try {
      session = await LanguageModel.create(job.options);
      const constraint = job.regexp ? new RegExp(job.regexp.source, job.regexp.flags)
                                    : job.schema;
      const text = await session.prompt(job.prompt, {responseConstraint: constraint});
      out.push({text, error: '', ms: performance.now() - started});
    } catch (e) {
      out.push({text: '', error: `${e.name}: ${e.message}`, ms: performance.now() - started});
    } finally {
      session?.destroy();
    }
  }
  return out;
}"""


@dataclass
class PageHost:
    """The product in a Playwright page, serving ``dist/`` and the model folder."""

    page: Any
    folder: Path
    dtype: str
    cap: int | None = None

    def __post_init__(self) -> None:
        from py_runtime.devtools.server import StaticServer
        from py_runtime.tokenizer.tokenizer import Tokenizer

        config = json.loads((self.folder / "generation_config.json").read_text())
        files: dict[str, Path | bytes] = {"/run.html": PAGE.format(dtype=self.dtype).encode()}
        if self.cap is not None:
            config["max_new_tokens"] = self.cap
            files["/model/generation_config.json"] = json.dumps(config).encode()
        self.model_cap = int(config.get("max_new_tokens") or 512)
        self.tokenizer = Tokenizer.from_json((self.folder / "tokenizer.json").read_text())
        mounts = {"/_lm/": ROOT / "dist", "/model/": self.folder}
        self.server = StaticServer(mounts, files).start()
        started = time.perf_counter()
        self.page.goto(f"{self.server.url}/run.html")
        self.page.click("#go")  # user activation: the model is downloadable until created
        self.page.evaluate(
            "async () => (await LanguageModel.create()).destroy()"
        )  # loads the model
        self.load_seconds = time.perf_counter() - started

    def close(self) -> None:
        self.server.stop()

    def answers(self, jobs: list[Job], sampling_mode: str | None) -> list[Answer]:
        payload = []
        for job in jobs:
            options: dict[str, Any] = {}
            if job.mode == GREEDY:
                options = {"samplingMode": "most-predictable"}
            elif sampling_mode:
                options = {"samplingMode": sampling_mode}
            payload.append({"prompt": job.constraint.prompt, "options": options})
            payload[-1].update(job.constraint.page())
        results = self.page.evaluate(PAGE_ANSWERS, payload)
        out = []
        for job, result in zip(jobs, results, strict=True):
            text, error = result["text"], result["error"]
            tokens = len(self.tokenizer.encode(text)) if text else 0
            cut = not error and tokens >= page_cut_at(self.model_cap)
            c = job.constraint
            out.append(
                Answer(c.name, c.kind, job.mode, text, result["ms"] / 1000, error, tokens, cut)
            )
        return out


def groups(jobs: list[Job]) -> Iterator[list[Job]]:
    """Consecutive jobs of one constraint: one page.evaluate() each."""
    batch: list[Job] = []
    for job in jobs:
        if batch and job.constraint is not batch[0].constraint:
            yield batch
            batch = []
        batch.append(job)
    if batch:
        yield batch


def run_page(
    page: Any,
    folder: Path,
    jobs: list[Job],
    dtype: str = "fp32",
    sampling_mode: str = SAMPLED_MODE,
    cap: int | None = None,
    progress: Progress | None = None,
) -> Run:
    host = PageHost(page, folder, dtype, cap)
    try:
        started = time.perf_counter()
        answers: list[Answer] = []
        for batch in groups(jobs):
            for job, answer in zip(batch, host.answers(batch, sampling_mode), strict=True):
                answers.append(answer)
                if progress:
                    progress(line(job, answer))
        seconds = time.perf_counter() - started
    finally:
        host.close()
    run = Run(
        "page (Chromium, ONNX Runtime Web wasm + XGrammar)",
        f"{folder.name} ({dtype})",
        host.model_cap,
        sampling_mode,
        answers,
        seconds,
        host.load_seconds,
        None,
        tokens_exact=False,
    )
    validate(run)
    return run


def run_page_headless(folder: Path, jobs: list[Job], **kwargs: Any) -> Run:
    """``run_page`` in a headless Chromium of its own, launched as the project's browser
    helpers launch it."""
    from playwright.sync_api import sync_playwright

    from py_runtime.devtools.browser import launch_args

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(**launch_args())
        try:
            return run_page(browser.new_page(), folder, jobs, **kwargs)
        finally:
            browser.close()


# -- judging and reporting ----------------------------------------------------------------


def validate(run: Run) -> None:
    """Judge every answered prompt with the validators (one Node call for the RegExps)."""
    by_name = {c.name: c for c in CORPUS}
    answered = [a for a in run.answers if a.answered]
    verdicts = judge([(by_name[a.constraint], a.text) for a in answered])
    for answer, why in zip(answered, verdicts, strict=True):
        answer.why = why
    run.refused_expected = {c.name for c in CORPUS if c.expect_refused}


def line(job: Job, answer: Answer) -> str:
    shown = answer.error or answer.text
    shown = shown if len(shown) <= 90 else shown[:80] + f"… ({len(shown)} chars)"
    cut = f", CUT at {answer.tokens} tokens" if answer.cut else ""
    return f"  {job.constraint.name[:50]:50} {job.mode:7} {answer.seconds:5.1f}s{cut} {shown!r}"


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
