"""Each common family's graph, driven under CPython, answers as transformers does.

The models are small random ones of each family's real shape, exported as
onnx-community's folders are (``python -m py_runtime models prepare families``,
``py_runtime/devtools/models/make_families.py``), with transformers' own rendered
prompt ids and greedy answer ids beside them. Through the engine (chat template,
tokenizer, generation loop, onnxruntime), the same prompt gives the same ids, token for
token. Skipped without the prepared models.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from py_runtime.devtools import models
from py_runtime.engine.errors import PromptAPIError
from py_runtime.engine.runtime import Runtime
from py_runtime.hosts.cpython import local_model
from py_runtime.hosts.graph_signature import read_signature
from py_runtime.hosts.onnxruntime_backend import OnnxRuntimeBackend
from py_runtime.models import chat_template

pytest.importorskip("onnxruntime")
ROOT = models.folder("families")
FAMILIES = ["llama3.2", "qwen3", "gemma3", "phi3", "qwen2-gqa", "llama-plain", "lfm2"]


def family(name: str) -> Path:
    folder = ROOT / name
    if not (folder / "expected.json").is_file():
        pytest.skip("the family models are missing: python -m py_runtime models prepare families")
    return folder


async def answer(folder: Path, prompt: str) -> tuple[str, list[int]]:
    """The engine's greedy answer, and the ids its cache holds after it."""
    model = local_model(folder)
    runtime = Runtime(model)  # type: ignore[arg-type]
    info = await runtime.create(
        {"samplingMode": "most-predictable"}, True, lambda _: None, lambda: False
    )
    chunks: list[dict[str, Any]] = []

    async def keep(_: object) -> bool:
        return True

    await runtime.prompt(info["session"], prompt, None, False, chunks.append, keep, lambda: False)
    backend = model.backend
    assert isinstance(backend, OnnxRuntimeBackend)
    (ids,) = [cache.ids for cache in backend._caches.values() if cache.ids]
    return "".join(c["text"] for c in chunks if c["kind"] == "text"), ids


@contextlib.contextmanager
def on_day(day: str | None) -> Iterator[None]:
    """Chat templates' ``strftime_now`` reads ``day`` (the day transformers rendered the
    expected prompt on), not today; the clock as it is where ``day`` is None."""
    if day is None:
        yield
        return

    class Clock(datetime.datetime):
        @classmethod
        def now(cls, tz: datetime.tzinfo | None = None) -> Clock:
            return cls.fromisoformat(day)

    with mock.patch.object(chat_template, "datetime", Clock):
        yield


def assert_answers_as_transformers(folder: Path) -> None:
    """The engine's greedy answers to ``expected.json``'s prompts are transformers' ids,
    token for token, and their text is those ids decoded by ``tokenizers``."""
    from tokenizers import Tokenizer

    reference = Tokenizer.from_file(str(folder / "tokenizer.json"))
    eos = json.loads((folder / "generation_config.json").read_text())["eos_token_id"]
    for case in json.loads((folder / "expected.json").read_text()):
        with on_day(case.get("rendered_on")):
            text, ids = asyncio.run(answer(folder, case["prompt"]))
        prompt_ids, answer_ids = case["prompt_ids"], case["answer_ids"]
        assert ids[: len(prompt_ids)] == prompt_ids, "the rendered prompt differs"
        ran = ids[len(prompt_ids) :]
        # The last token chosen is not run (a stop token, or the cap's last).
        assert ran == answer_ids[: len(ran)] and len(ran) >= len(answer_ids) - 1
        words = [i for i in answer_ids if i not in eos]
        assert text == reference.decode(words, skip_special_tokens=False)


@pytest.mark.parametrize("name", FAMILIES)
def test_family_answers_as_transformers_does(name: str) -> None:
    assert_answers_as_transformers(family(name))


def backend(name: str) -> OnnxRuntimeBackend:
    folder = family(name)
    config = json.loads((folder / "config.json").read_text())
    return OnnxRuntimeBackend(folder / "onnx" / "model.onnx", 1, config)


def test_gemma_graph_has_no_position_ids_and_lfm2_has_recurrent_states() -> None:
    """The two signatures beside Optimum's usual one (what the test above drives)."""
    gemma = backend("gemma3").signature
    assert "position_ids" not in gemma.inputs and not gemma.recurrent
    lfm2 = backend("lfm2").signature
    conv = [s for s in lfm2.states if s.axis is None]
    assert conv and all(s.input.startswith("past_conv.") for s in conv) and lfm2.recurrent
    llama = backend("llama3.2").signature
    assert llama.keep_input == "logits_to_keep"


def test_recurrent_state_truncation_runs_the_kept_tokens_again() -> None:
    """LFM2's convolution states cannot be cut back: a truncated cache gives the logits
    a fresh one does."""
    lfm2 = backend("lfm2")
    ids = [5, 17, 300, 41, 9, 77]

    async def run() -> tuple[Any, Any]:
        cut = lfm2.new_cache()
        await lfm2.forward(cut, ids)
        lfm2.truncate(cut, 3)
        await lfm2.forward(cut, ids[3:5])
        fresh = lfm2.new_cache()
        await lfm2.forward(fresh, ids[:5])
        return lfm2._caches[cut].logits, lfm2._caches[fresh].logits

    cut, fresh = asyncio.run(run())
    assert cut is not None and fresh is not None
    assert abs(cut - fresh).max() < 1e-4


@pytest.mark.parametrize(
    ("inputs", "outputs", "named"),
    [
        (
            [
                ("input_ids", ["b", "s"], "tensor(int64)"),
                ("pixel_values", ["b", 3], "tensor(float)"),
            ],
            ["logits"],
            "pixel_values",
        ),
        ([("input_ids", ["b", "s"], "tensor(int64)")], ["last_hidden_state"], "logits"),
        ([("attention_mask", ["b", "s"], "tensor(int64)")], ["logits"], "input_ids"),
        (
            [
                ("input_ids", ["b", "s"], "tensor(int64)"),
                ("past_key_values.0.key", ["b", 2, "p", 16], "tensor(float)"),
            ],
            ["logits"],
            "present.0.key",
        ),
    ],
)
def test_a_graph_the_runtime_cannot_drive_is_an_operation_error_naming_it(
    inputs: list[tuple[str, list[Any], str]], outputs: list[str], named: str
) -> None:
    with pytest.raises(PromptAPIError) as raised:
        read_signature(inputs, outputs, {"num_attention_heads": 4, "hidden_size": 64})
    assert raised.value.name == "OperationError" and named in str(raised.value)
