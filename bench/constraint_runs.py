"""The constraint property runs' data: jobs (a constraint, greedy or sampled), answers,
costs and runs, the plans that make jobs, and the validators' judgement of answers
(``bench/constraint_properties.py`` runs and reports them)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from bench.constraint_corpus import (
    CORPUS,
    KNOWN_CASES,
    REGEXPS,
    SCHEMAS,
    Constraint,
    judge,
)

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


# -- judging ---------------------------------------------------------------------------


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
