"""Constrained answers as properties, on SmolLM2 under CPython (onnxruntime + llguidance):
a CI slice of ``bench/constraint_properties.py``.

The known broken cases and every fourth constraint of ``bench/constraint_corpus.py``
answered once greedily, and the known cases sampled too (the session's default
sampling), under a 128-token cap: answers that run on end through the budget's
shortest valid ending, which this exercises.
Each answer must satisfy its constraint by a validator that is not ours (``jsonschema``,
Draft 2020-12 with formats; JavaScript's RegExp in Node), and must end by itself before
the token cap; nothing is refused but what the corpus marks ``expect_refused``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("llguidance")
pytest.importorskip("jsonschema")

from bench.constraint_corpus import Constraint  # noqa: E402
from bench.constraint_hosts import run_cpython  # noqa: E402
from bench.constraint_properties import listing, report, summarize  # noqa: E402
from bench.constraint_runs import Run, interleaved, known_cases, slice_plan  # noqa: E402
from py_runtime.devtools import models  # noqa: E402

FOLDER: Path = models.folder("smollm2")
#: Sampled answers per sampled constraint.
SAMPLES = 1
#: The response's token cap in the slice (the product's is 512).
CAP = 128

pytestmark = [
    pytest.mark.skipif(
        not (FOLDER / "onnx" / "model.onnx").is_file(),
        reason="SmolLM2 is missing: python3 -m py_runtime models prepare smollm2",
    ),
    pytest.mark.skipif(shutil.which("node") is None, reason="needs Node (JavaScript's RegExp)"),
]


def greedy() -> list[Constraint]:
    """The known broken cases, and every fourth constraint of the rest."""
    known = known_cases()
    rest = [c for c in interleaved() if c not in known]
    return known + rest[::4]


@pytest.fixture(scope="module")
def run() -> Run:
    jobs = slice_plan(greedy(), known_cases(), SAMPLES)
    result = run_cpython(FOLDER, jobs, threads=2, cap=CAP, progress=print)
    print(report(result))  # shown with a failure (captured during setup)
    return result


def test_nothing_is_refused_but_what_the_corpus_expects(run: Run) -> None:
    summary = summarize(run)
    assert not summary.refused_unexpected, summary.refused_unexpected
    assert not summary.failed, [(a.constraint, a.error) for a in summary.failed]


def test_no_answer_violates_its_constraint(run: Run) -> None:
    violations = summarize(run).violations
    assert not violations, f"{len(violations)} violation(s):\n{listing(violations)}"


def test_no_answer_is_cut_invalid_at_the_token_cap(run: Run) -> None:
    incomplete = summarize(run).incomplete
    assert not incomplete, f"{len(incomplete)} incomplete answer(s):\n{listing(incomplete)}"
