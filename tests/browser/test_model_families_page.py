"""Each common family's graph, driven in the page (ONNX Runtime Web, wasm), answers as
under CPython, which answers as transformers does (tests/unit/test_model_families.py):
Optimum's Llama 3.2 / Qwen3 / Gemma 3 / Phi-3 exports and onnxruntime-genai's
GroupQueryAttention and LFM2 graphs, as small random models of each family's shape
(``python -m py_runtime models prepare families``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from model_pages import cpython_answers, page_answers, page_create_error
from playwright.sync_api import Page

from py_runtime.devtools import models

REPO_ROOT = Path(__file__).resolve().parents[2]
DIST = REPO_ROOT / "dist"
ROOT = models.folder("families")
FAMILIES = ["llama3.2", "qwen3", "gemma3", "phi3", "qwen2-gqa", "llama-plain", "lfm2"]
PROMPTS = ["Hello!", "What is the capital of France? Answer in one word, please."]

pytestmark = pytest.mark.needs_files(
    DIST / "language-model.js",
    *(ROOT / family / "onnx" / "model.onnx" for family in FAMILIES),
    reason="dist/ or the family models are missing: run `bash scripts/setup.sh`",
)


@pytest.mark.parametrize("family", FAMILIES)
def test_family_answers_in_the_page_as_under_cpython(page: Page, family: str) -> None:
    pytest.importorskip("onnxruntime")
    folder = ROOT / family
    answers = page_answers(page, folder, "fp32", PROMPTS)
    assert answers == cpython_answers(folder, "fp32", PROMPTS)
    assert all(answers)


def test_a_graph_with_an_input_the_runtime_cannot_feed_is_an_operation_error(
    page: Page, tmp_path: Path
) -> None:
    """The fixture's graph given one more input (as a vision model's): create() rejects
    with an OperationError naming it, not an internal error."""
    import shutil

    import onnx
    from onnx import TensorProto, helper

    folder = tmp_path / "fixture-extra-input"
    shutil.copytree(REPO_ROOT / "tests" / "fixtures" / "tiny-qwen2-toolcall", folder)
    for extra in (folder / "onnx").iterdir():
        if extra.name != "model.onnx":
            extra.unlink()
    model = onnx.load(str(folder / "onnx" / "model.onnx"))
    pixels = helper.make_tensor_value_info("pixel_values", TensorProto.FLOAT, ["batch", 3])
    model.graph.input.append(pixels)
    onnx.save(model, str(folder / "onnx" / "model.onnx"))
    error = page_create_error(page, folder)
    assert error.startswith("OperationError: ") and "'pixel_values'" in error, error
