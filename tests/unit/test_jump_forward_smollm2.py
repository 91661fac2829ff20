"""Jump-forward on SmolLM2-135M-Instruct (a real model) under CPython: greedy JSON
answers held to schemas with long keys are the same with it and without, and what it
costs or saves is printed (``pytest -s``): forward passes and time.

Skipped without the prepared model (``python3 -m py_runtime models prepare smollm2``).
A folder from the older conversion (logits for the last position only) judges one
draft token per pass: the answers are the same, nothing is saved.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

pytest.importorskip("onnxruntime")

from py_runtime.devtools import models  # noqa: E402
from py_runtime.engine.runtime import Runtime  # noqa: E402
from py_runtime.hosts.cpython import local_model  # noqa: E402
from py_runtime.hosts.onnxruntime_backend import OnnxRuntimeBackend  # noqa: E402
from py_runtime.models.causal_lm import CausalLM  # noqa: E402

FOLDER = models.folder("smollm2")

pytestmark = pytest.mark.skipif(
    not (FOLDER / "onnx" / "model.onnx").is_file(), reason="SmolLM2 is not prepared"
)


def obj(properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


CASES: list[tuple[str, dict[str, Any]]] = [
    (
        "Describe the weather in Paris today.",
        obj(
            {
                "the_temperature_in_degrees_celsius": {
                    "type": "integer",
                    "minimum": -40,
                    "maximum": 50,
                },
                "the_condition_of_the_sky_right_now": {
                    "enum": ["sunny", "cloudy", "rainy", "snowy"]
                },
                "is_it_a_good_day_for_a_walk_outside": {"type": "boolean"},
            }
        ),
    ),
    (
        "Tell me about the novel Moby-Dick.",
        obj(
            {
                "the_full_title_of_the_book": {"type": "string", "maxLength": 40},
                "the_name_of_the_author_of_the_book": {"type": "string", "maxLength": 40},
                "the_year_the_book_was_first_published": {
                    "type": "integer",
                    "minimum": 1500,
                    "maximum": 2030,
                },
            }
        ),
    ),
    (
        "Give me a recipe for pancakes.",
        obj(
            {
                "name_of_the_recipe": {"type": "string", "maxLength": 30},
                "list_of_the_main_ingredients": {
                    "type": "array",
                    "items": {"type": "string", "maxLength": 20},
                    "maxItems": 4,
                },
                "preparation_time_in_minutes": {"type": "integer", "minimum": 1, "maximum": 120},
            }
        ),
    ),
]


def answer(runtime: Runtime, prompt: str, schema: dict[str, Any]) -> tuple[str, list[int]]:
    async def run() -> tuple[str, list[int]]:
        info = await runtime.create(
            {"samplingMode": "most-predictable"}, True, lambda _: None, lambda: False
        )
        chunks: list[Any] = []

        async def keep(_: object) -> bool:
            return True

        constraint = {"kind": "json-schema", "json": json.dumps(schema)}
        await runtime.prompt(
            info["session"], prompt, constraint, False, chunks.append, keep, lambda: False
        )
        state = runtime.session(info["session"]).state
        return "".join(c["text"] for c in chunks if c["kind"] == "text"), list(state.cached)

    return asyncio.run(run())


@pytest.fixture(scope="module")
def runtime() -> Runtime:
    return Runtime(local_model(FOLDER, "fp32"))


@pytest.mark.parametrize(("prompt", "schema"), CASES, ids=[c[0][:20] for c in CASES])
def test_greedy_answers_are_the_same_with_jump_forward_and_without(
    runtime: Runtime, prompt: str, schema: dict[str, Any]
) -> None:
    answer(runtime, prompt, schema)  # the grammar compiled, the runtime warm
    model, backend = runtime.model, getattr(runtime.model, "backend", None)
    assert isinstance(model, CausalLM) and isinstance(backend, OnnxRuntimeBackend)
    results = {}
    for jump in (False, True):
        model.jump_forward = jump
        passes, kept = backend.passes, model.jumped_tokens
        started = time.perf_counter()
        text, ids = answer(runtime, prompt, schema)
        seconds = time.perf_counter() - started
        results[jump] = (text, ids)
        print(
            f"\n{prompt[:30]!r} jump_forward={jump}: {backend.passes - passes} passes, "
            f"{model.jumped_tokens - kept} draft tokens kept, "
            f"{seconds:.2f} s, {len(ids)} tokens in the cache, graph speculates: "
            f"{backend.speculates}: {text}"
        )
    model.jump_forward = True
    assert results[True] == results[False]
    parsed = json.loads(results[True][0])
    assert set(parsed) == set(schema["properties"])
