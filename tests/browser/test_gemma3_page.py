"""Gemma 3 270M (base) in the page (ONNX Runtime Web, wasm; 1.07 GB of float32 weights
read from the model cache as external data) answers as under CPython, which answers as
transformers does (tests/unit/test_gemma3.py). Answers are capped at 12 tokens (a copy
of the folder), as there: a base model does not stop by itself.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from model_pages import cpython_answers, page_answers, page_create_error
from playwright.sync_api import Page

from py_runtime.devtools import models
from py_runtime.tokenizer import Tokenizer

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


def test_gemma3_as_one_file_of_1_7_gb_loads_where_onnx_runtime_reads_blobs(
    page: Page, tmp_path: Path
) -> None:
    """Optimum's own export (the LM head stored a second time, 1.74 GB, weights inside
    the graph) cannot be parsed in the wasm heap at once (std::bad_alloc). With JSPI the
    page splits the graph from its weights, which ONNX Runtime then reads from the file
    itself a weight at a time (web/worker/onnx-split.mjs): it answers as transformers
    does. Without JSPI, create() says to store the weights as external data."""
    import onnx
    from onnx import numpy_helper

    cases = json.loads((FOLDER / "expected.json").read_text())
    folder = models.capped_copy(FOLDER, tmp_path / "gemma3-one-file", len(cases[0]["answer_ids"]))
    for link in (folder / "onnx").iterdir():
        link.unlink()
    model = onnx.load(str(FOLDER / "onnx" / "model.onnx"))
    (tie,) = [n for n in model.graph.node if n.op_type == "Transpose" and "embed" in n.input[0]]
    (embed,) = [i for i in model.graph.initializer if i.name == tie.input[0]]
    head = numpy_helper.to_array(embed).T.copy()
    model.graph.initializer.append(numpy_helper.from_array(head, tie.output[0]))
    model.graph.node.remove(tie)
    onnx.save(model, str(folder / "onnx" / "model.onnx"))
    del model, head
    tokenizer = Tokenizer.from_json((FOLDER / "tokenizer.json").read_text())
    expected = tokenizer.decode([i for i in cases[0]["answer_ids"] if i not in (1, 106)])
    try:
        (answer,) = page_answers(page, folder, "fp32", [cases[0]["prompt"]])
        error = page_create_error(page, folder, 'data-jspi="off"')
    finally:
        (folder / "onnx" / "model.onnx").unlink()
    assert answer == expected
    assert error.startswith("OperationError: ") and "external data" in error, error
