"""Constrained answers as properties, on SmolLM2 in the page (the built product in
headless Chromium: ONNX Runtime Web, wasm, and XGrammar's web build): a CI slice of
``bench/constraint_properties.py``, smaller than the CPython one (wasm is slower).

The known broken cases greedy and sampled, and a spread of the corpus greedy, each in a
fresh ``LanguageModel.create()`` session through ``prompt(text, {responseConstraint})``.
Each answer must satisfy its constraint by a validator that is not ours (``jsonschema``,
JavaScript's RegExp in Node) and end by itself before the token cap; nothing is refused
but what the corpus marks ``expect_refused``.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.constraint_corpus import Constraint
from bench.constraint_hosts import run_page
from bench.constraint_properties import listing, report, summarize
from bench.constraint_runs import Run, interleaved, known_cases, slice_plan
from py_runtime.devtools import models

REPO_ROOT = Path(__file__).resolve().parents[2]
FOLDER: Path = models.folder("smollm2")
#: The response's token cap in the slice (the product's is 512): answers that run on
#: end through the budget's shortest valid ending.
CAP = 128

pytestmark = [
    pytest.mark.needs_files(
        REPO_ROOT / "dist" / "language-model.js",
        FOLDER / "onnx" / "model.onnx",
        reason="dist/ or SmolLM2 is missing: run `bash scripts/setup.sh`",
    ),
    pytest.mark.skipif(shutil.which("node") is None, reason="needs Node (JavaScript's RegExp)"),
]


def greedy() -> list[Constraint]:
    """The known broken cases, and every tenth constraint of the rest."""
    known = known_cases()
    return known + [c for c in interleaved() if c not in known][::10]


@pytest.fixture(scope="module")
def run(browser: Any) -> Iterator[Run]:
    page = browser.new_page()
    try:
        jobs = slice_plan(greedy(), known_cases(), 1)
        dtype = models.default_dtype("smollm2") or "fp32"
        result = run_page(page, FOLDER, jobs, dtype=dtype, cap=CAP, progress=print)
        print(report(result))  # shown with a failure (captured during setup)
        yield result
    finally:
        page.close()


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
