"""Gemma 3 270M (base) in the page (ONNX Runtime Web, wasm; 1.07 GB of float32 weights
read from the model cache as external data) answers as under CPython, which answers as
transformers does (tests/unit/test_gemma3.py). Answers are capped at 12 tokens (a copy
of the folder), as there: a base model does not stop by itself.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from model_pages import cpython_answers, page_answers
from playwright.sync_api import Page

from py_runtime.devtools import models

REPO_ROOT = Path(__file__).resolve().parents[2]
DIST = REPO_ROOT / "dist"
FOLDER = models.folder("gemma3-270m")

pytestmark = pytest.mark.needs_files(
    DIST / "language-model.js",
    FOLDER / "expected.json",
    reason="dist/ or Gemma 3 270M is missing: run `bash scripts/setup.sh`",
)


def test_gemma3_answers_in_the_page_as_under_cpython(page: Page, tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime")
    cases = json.loads((FOLDER / "expected.json").read_text())
    folder = models.capped_copy(FOLDER, tmp_path / "gemma3-270m", len(cases[0]["answer_ids"]))
    prompts = [case["prompt"] for case in cases]
    answers = page_answers(page, folder, "fp32", prompts)
    assert answers == cpython_answers(folder, "fp32", prompts)
    assert all(answers)
    # The tokenizer's prepared form (33 MB of tokenizer.json, read in seconds) is kept
    # beside the model, for the next load (tokenizer/prepared.py).
    kept = page.evaluate(
        """async () => (await (await caches.open('prompt-api-runtime-models')).keys())
             .map((request) => request.url).filter((url) => url.endsWith('prompt-api-prepared'))"""
    )
    assert len(kept) == 1 and "tokenizer.json" in kept[0]
