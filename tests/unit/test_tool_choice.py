"""The runtime's tool choice for models told of their tools in the prompt
(``models/tool_choice.py``), and the backend's ``score`` it stands on, under CPython:
on the fixture (its graph keeps every position's logits) and on SmolLM2-135M-Instruct
(the last position's only; skipped when it is not prepared)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("onnxruntime")

from bench.tool_use_eval import wire_tools  # noqa: E402
from py_runtime.devtools import models  # noqa: E402
from py_runtime.engine.messages import Content, Message, user_text  # noqa: E402
from py_runtime.engine.options import ToolDeclaration  # noqa: E402
from py_runtime.hosts.onnxruntime_backend import OnnxRuntimeBackend  # noqa: E402
from py_runtime.models import generation  # noqa: E402
from py_runtime.models.generation import Scratch  # noqa: E402
from py_runtime.models.tool_choice import (  # noqa: E402
    PLAIN_SYSTEM,
    ToolChoice,
    purpose,
    rank,
    request_scores,
)
from tests.unit.builders import text  # noqa: E402
from tests.unit.test_causal_lm import FIXTURE, Harness, calls_of, text_of  # noqa: E402

SMOLLM2 = models.folder("smollm2")
needs_smollm2 = pytest.mark.skipif(
    not (SMOLLM2 / "onnx" / "model.onnx").is_file(), reason="SmolLM2 is not prepared"
)


def declared(name: str, description: str, properties: dict[str, Any]) -> dict[str, Any]:
    schema = {"type": "object", "properties": properties, "required": list(properties)}
    probe = {"type": "object", "properties": "object", "required": "array"}
    return {
        "name": name,
        "description": description,
        "inputSchema": {**probe, "json": json.dumps(schema)},
    }


TOOLS = [
    declared("get_weather", "Get the weather forecast for a city", {"city": {"type": "string"}}),
    declared("set_timer", "Start a countdown timer", {"minutes": {"type": "number"}}),
]
OPTIONS = {
    "samplingMode": "most-predictable",
    "expectedInputs": [{"type": "tool-response"}],
    "expectedOutputs": [{"type": "tool-call"}],
    "tools": TOOLS,
}


@pytest.mark.parametrize(
    "folder", [FIXTURE, pytest.param(SMOLLM2, marks=needs_smollm2)], ids=["fixture", "smollm2"]
)
def test_score_gives_each_tokens_log_probability_and_leaves_the_cache(folder: Path) -> None:
    config = json.loads((folder / "config.json").read_text())
    backend = OnnxRuntimeBackend(folder / "onnx" / "model.onnx", threads=1, config=config)
    loop = asyncio.new_event_loop()
    prompt, scored = [1, 2, 3, 4, 5, 6], [40, 41, 42, 43]
    cache = backend.new_cache()
    loop.run_until_complete(backend.forward(cache, prompt))
    before = backend._caches[cache].logits.copy()  # type: ignore[union-attr]

    also = [(0, 7), (2, 99), (3, 12), (2, 5)]
    scores = loop.run_until_complete(backend.score(cache, scored, also))

    # Step by step on a second cache: the log-softmax at each position.
    other = backend.new_cache()
    loop.run_until_complete(backend.forward(other, prompt))
    rows = []
    for token in scored:
        logits = backend._caches[other].logits.astype(np.float64)  # type: ignore[union-attr]
        rows.append(logits - np.log(np.exp(logits - logits.max()).sum()) - logits.max())
        loop.run_until_complete(backend.forward(other, [token]))
    expected = [row[token] for row, token in zip(rows, scored, strict=True)]
    expected += [rows[at][token] for at, token in also]
    assert scores == pytest.approx(expected, abs=1e-3)
    assert backend.cache_length(cache) == len(prompt)
    assert np.array_equal(backend._caches[cache].logits, before)  # type: ignore[arg-type]
    assert loop.run_until_complete(backend.score(cache, [])) == []


@pytest.mark.parametrize("count", [None, 1, 2])
def test_scratch_scores_texts_sharing_a_start_in_one_pass_each_as_alone(
    count: int | None,
) -> None:
    """Runs of words from one start word (and texts no other begins) score as each
    text scored alone, with a pass per path rather than per text."""
    harness = Harness("fp32")
    harness.run(harness.model.load(lambda _: None, lambda: False))
    backend, tokenizer = harness.model.backend, harness.model.tokenizer
    assert backend is not None and tokenizer is not None
    cache = backend.new_cache()
    prefix = 'Weather in Oslo tomorrow, please.\n{"city": '
    harness.run(backend.forward(cache, tokenizer.encode(prefix)[:3]))
    scratch = Scratch(backend, cache, tokenizer)
    texts = ['"Oslo"', '"Oslo tomorrow"', '"Oslo tomorrow, please"', '"tomorrow"', "null", '"O']
    passes = backend.passes
    together = harness.run(scratch.score(prefix, texts, count))
    passes, alone = (
        backend.passes - passes,
        [harness.run(scratch.score(prefix, [text], count)) for text in texts],
    )
    assert together == pytest.approx([score for (score,) in alone], abs=1e-4)
    assert passes <= 4  # holding the prefix, then a pass per path: three


def test_the_choice_adds_the_names_calibrated_score_and_the_requests() -> None:
    scores = {"get_weather": -1.0, "set_timer": -2.0}
    baseline = {"get_weather": -0.5, "set_timer": -4.0}  # a model leaning to get_weather
    neutral = {None: -20.0, "get_weather": -20.0, "set_timer": -20.0}
    assert rank(scores, baseline, neutral) == [
        ToolChoice("set_timer", 2.0),
        ToolChoice("get_weather", -0.5),
    ]
    # The request far likelier after get_weather's purpose than after the plain turn.
    likelier = {None: -20.0, "get_weather": -16.0, "set_timer": -21.0}
    assert rank(scores, baseline, likelier)[0] == ToolChoice("get_weather", 3.5)


def test_a_tools_purpose_is_its_description_in_a_system_turn() -> None:
    def said(description: str) -> str:
        return purpose(ToolDeclaration("get_weather", description, {})).text()

    assert said("Get the weather forecast for a city") == (
        "You are a helpful assistant. You can get the weather forecast for a city."
    )
    assert said(" Get the weather. ") == "You are a helpful assistant. You can get the weather."
    assert said("URLs for a city") == "You are a helpful assistant. You can URLs for a city."
    assert said("") == "You are a helpful assistant. You can use get_weather."
    # With the values its arguments take from a list, nested objects' too.
    room = {"type": "object", "properties": {"room": {"enum": ["kitchen"]}}}
    schema = {"day": {"enum": ["today", "tomorrow", 3]}, "n": {"type": "number"}, "at": room}
    declared = ToolDeclaration("x", "Get it", {"type": "object", "properties": schema})
    assert purpose(declared).text() == (
        "You are a helpful assistant. You can get it (today, tomorrow or 3; kitchen)."
    )


@needs_smollm2
def test_a_request_is_likelier_after_the_purpose_of_the_tool_it_needs() -> None:
    """The heads are the template's own text up to the request, the request's ids run
    to its turn's end, and scoring them holds no cache afterwards."""
    harness = Harness("fp32", folder=SMOLLM2)
    model = harness.model
    harness.run(model.load(lambda _: None, lambda: False))
    assert model.backend is not None and model.tokenizer is not None
    tools = [ToolDeclaration(t["name"], t["description"], {}) for t in TOOLS]
    request = "Set a timer for 10 minutes"
    split = model.request_heads(tools, request)
    assert split is not None
    heads, ids = split
    assert model.tokenizer.decode(ids, skip_special_tokens=False) == request + "<|im_end|>\n"
    for key, system in [(None, PLAIN_SYSTEM), *((t.name, purpose(t).text()) for t in tools)]:
        rendered = model.render(
            [Message("system", (Content("text", system),)), user_text(request)], (), False
        )
        assert model.tokenizer.decode(heads[key], skip_special_tokens=False) + request in rendered
    held = model.backend.resources()["caches"]
    scores = harness.run(request_scores(model.backend, heads, ids))
    assert model.backend.resources()["caches"] == held
    assert scores["set_timer"] > max(scores[None], scores["get_weather"])
    assert model.request_heads(tools, "   ") is None


@pytest.fixture(scope="module")
def smollm2() -> Harness:
    if not (SMOLLM2 / "onnx" / "model.onnx").is_file():
        pytest.skip("SmolLM2 is not prepared")
    harness = Harness("fp32", folder=SMOLLM2)
    harness.run(harness.model.load(lambda _: None, lambda: False))
    return harness


def answer(
    harness: Harness,
    text: str,
    threshold: float | None,
    cap: int = 40,
    grounded: float = float("inf"),
    options: dict[str, Any] = OPTIONS,
) -> list[Any]:
    harness.model.tool_threshold = threshold
    harness.model.grounded_threshold = grounded
    harness.model.max_response_tokens = cap
    return harness.prompt(harness.create(options), text)


def test_the_runtime_opens_a_call_to_the_tool_the_model_leans_to(smollm2: Harness) -> None:
    smollm2.model.tool_choices.clear()
    chunks = answer(smollm2, "Set a timer for 10 minutes", float("-inf"))
    (choice,) = smollm2.model.tool_choices
    assert choice.tool == "set_timer"
    # The call the runtime opened ends the answer (the model would ramble on).
    (call,) = chunks
    assert call["name"] == "set_timer" and call["arguments"] == {"minutes": 10}


def test_no_call_is_opened_that_the_budget_cannot_close(smollm2: Harness) -> None:
    """The call takes 26 tokens at its shortest; the choice is made, the call is not."""
    smollm2.model.tool_choices.clear()
    for cap in (12, 24):
        chunks = answer(smollm2, "Set a timer for 10 minutes", float("-inf"), cap)
        assert not calls_of(chunks) and "<tool_call>" not in text_of(chunks)
    assert [c.tool for c in smollm2.model.tool_choices] == ["set_timer", "set_timer"]


@pytest.mark.parametrize("text", ["Set a timer for 10 minutes", "Hi there!"])
def test_below_the_threshold_the_answer_is_the_models_own(smollm2: Harness, text: str) -> None:
    """Scoring the tools leaves the session as it was: the same answer as with no
    choice made at all, token for token."""
    assert answer(smollm2, text, float("inf")) == answer(smollm2, text, None)


def test_no_choice_is_made_for_a_tool_response(smollm2: Harness) -> None:
    smollm2.model.tool_threshold = float("-inf")
    session = smollm2.create(OPTIONS)
    (call,) = calls_of(smollm2.prompt(session, "Set a timer for 10 minutes"))
    smollm2.model.tool_choices.clear()
    response = {
        "kind": "tool-success",
        "callId": call["callId"],
        "name": "set_timer",
        "result": [text("Timer set.")],
    }
    smollm2.prompt(
        session, [{"role": "user", "content": [{"type": "tool-response", "value": response}]}]
    )
    assert smollm2.model.tool_choices == []


WEATHER = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "day": {"type": "string", "enum": ["today", "tomorrow"]},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
    },
    "required": ["city"],
}
WEATHER_OPTIONS = {
    **OPTIONS,
    "tools": [
        {
            "name": "get_weather",
            "description": "Get the weather forecast for a city",
            "inputSchema": {
                "type": "object",
                "properties": "object",
                "required": "array",
                "json": json.dumps(WEATHER),
            },
        },
        TOOLS[1],
    ],
}


def test_the_runtime_writes_the_arguments_the_request_states(smollm2: Harness) -> None:
    """Left to itself the model drops the day the request names (docs/tool-use.md);
    the runtime writes it, and the city, by the model's scores: a grounded call."""
    smollm2.model.tool_choices.clear()
    rain = "Will it rain in Oslo tomorrow?"
    chunks = answer(smollm2, rain, float("-inf"), 60, float("-inf"), WEATHER_OPTIONS)
    (call,) = chunks
    assert call["name"] == "get_weather"
    assert call["arguments"] == {"city": "Oslo", "day": "tomorrow"}
    assert [(c.tool, c.grounded) for c in smollm2.model.tool_choices] == [("get_weather", True)]


def test_below_the_threshold_only_a_grounded_call_is_opened(smollm2: Harness) -> None:
    """At a margin under the threshold, a call opens only when every value the runtime
    wrote comes from the request: "Tell me a joke" has no city to give."""
    smollm2.model.tool_choices.clear()
    weather = answer(
        smollm2, "Will it rain in Oslo tomorrow?", float("inf"), 60, float("-inf"), WEATHER_OPTIONS
    )
    joke = answer(smollm2, "Tell me a joke", float("inf"), 60, float("-inf"), WEATHER_OPTIONS)
    assert [c["name"] for c in calls_of(weather)] == ["get_weather"]
    assert not calls_of(joke) and text_of(joke)
    assert [c.grounded for c in smollm2.model.tool_choices] == [True, False]


@needs_smollm2
def test_below_the_threshold_the_runner_up_opens_when_the_request_states_its_call(
    smollm2: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Among the eight tools of the bench, a translation request leans to the currency
    converter, whose call it does not state; the runner-up's, translate's, it does."""
    options = {**OPTIONS, "tools": wire_tools()}
    request = 'Translate "I am hungry" into French'
    smollm2.model.tool_choices.clear()
    monkeypatch.setattr(generation, "RUNNERS", 1)
    assert not calls_of(answer(smollm2, request, float("inf"), 60, 0.0, options))
    assert [(c.tool, c.grounded) for c in smollm2.model.tool_choices] == [
        ("convert_currency", False)
    ]
    monkeypatch.setattr(generation, "RUNNERS", 2)
    (call,) = calls_of(answer(smollm2, request, float("inf"), 60, 0.0, options))
    assert call["name"] == "translate"
    assert call["arguments"] == {"text": "I am hungry", "target_language": "French"}
