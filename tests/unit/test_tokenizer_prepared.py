"""A BPE tokenizer read through its prepared form (py_runtime/tokenizer/prepared.py)
encodes and decodes as the one read from tokenizer.json; a form made from another
text, or damaged, is not used; the engine keeps the form where its files can."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_tokenizer import TEXTS

from py_runtime.devtools import models
from py_runtime.hosts.cpython import FolderFiles
from py_runtime.models.causal_lm import CausalLM
from py_runtime.tokenizer import Tokenizer

HERE = Path(__file__).resolve().parent
FIXTURE = HERE.parent / "fixtures" / "tiny-qwen2-toolcall" / "tokenizer.json"
GEMMA = models.folder("gemma3-270m") / "tokenizer.json"


def pair(path: Path) -> tuple[Tokenizer, Tokenizer, str, bytes]:
    text = path.read_text()
    plain, blob = Tokenizer.from_json_prepared(text, None)
    assert blob is not None
    prepared, again = Tokenizer.from_json_prepared(text, blob)
    assert again is None  # read through the form: nothing new to keep
    return plain, prepared, text, blob


FIXTURE_PAIR = pair(FIXTURE)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_prepared_fixture_tokenizer_is_the_same(text: str) -> None:
    plain, prepared, _, _ = FIXTURE_PAIR
    ids = plain.encode(text)
    assert prepared.encode(text) == ids
    assert prepared.decode(ids) == plain.decode(ids)


def test_prepared_gemma_tokenizer_is_the_same() -> None:
    if not GEMMA.is_file():
        pytest.skip("Gemma 3 270M is missing: python -m py_runtime models prepare gemma3-270m")
    plain, prepared, _, blob = pair(GEMMA)
    assert len(blob) < GEMMA.stat().st_size / 2
    for text in [*TEXTS.values(), "a  b\n\n\tc <start_of_turn>user\nx<end_of_turn>"]:
        ids = plain.encode(text)
        assert prepared.encode(text) == ids and prepared.decode(ids) == plain.decode(ids)
    assert prepared.vocab_size == plain.vocab_size


def test_a_form_of_another_text_or_a_damaged_one_is_not_used() -> None:
    _, _, text, blob = FIXTURE_PAIR
    spec = json.loads(text)
    spec["model"]["merges"] = spec["model"]["merges"][:-1]
    other = json.dumps(spec)
    tokenizer, fresh = Tokenizer.from_json_prepared(other, blob)
    assert fresh is not None and fresh != blob
    assert tokenizer.encode("hello world") == Tokenizer.from_json(other).encode("hello world")
    for damaged in (blob[:100], blob[:-8], b"", blob[:8] + bytes(32) + blob[40:]):
        _, fresh = Tokenizer.from_json_prepared(text, damaged)
        assert fresh == blob


class KeepingFiles(FolderFiles):
    """A folder whose prepared forms are kept in memory, as the page's cache keeps them."""

    def __init__(self, folder: Path) -> None:
        super().__init__(folder)
        self.kept: dict[str, bytes] = {}
        self.read: list[bytes | None] = []

    async def read_prepared(self, name: str) -> bytes | None:
        self.read.append(self.kept.get(name))
        return self.kept.get(name)

    async def keep_prepared(self, name: str, data: bytes) -> None:
        self.kept[name] = data


def test_the_engine_keeps_a_big_tokenizers_form_and_reads_it_next_load(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import py_runtime.models.causal_lm as causal_lm

    monkeypatch.setattr(causal_lm, "PREPARE_FROM", 1000)  # the fixture's counts as big
    files = KeepingFiles(FIXTURE.parent)
    first = asyncio.run(CausalLM(files, None)._tokenizer(FIXTURE.read_text()))  # type: ignore[arg-type]
    assert files.read == [None] and "tokenizer.json" in files.kept
    second = asyncio.run(CausalLM(files, None)._tokenizer(FIXTURE.read_text()))  # type: ignore[arg-type]
    assert files.read[-1] == files.kept["tokenizer.json"]
    assert second.encode("What is 2+2?") == first.encode("What is 2+2?")
