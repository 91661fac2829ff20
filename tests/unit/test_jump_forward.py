"""Jump-forward as speculative decoding (``Backend.speculate``), on the fixture model.

Where the grammar allows one text next, its tokens are a draft the model judges in one
forward pass, so a greedy constrained answer is, token for token, the one decoded
without the grammar whenever that one satisfies it (the forced text tokenized on its
own is not always how the model writes it), and fewer passes run where the model
keeps the draft.
"""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema
import pytest
from builders import assistant, user
from test_causal_lm import (
    FIXTURE,
    GREEDY,
    WITH_TOOLS,
    Harness,
    calls_of,
    text_of,
    tool_success,
)

from py_runtime.engine.grammar import Grammar
from py_runtime.engine.vocabulary import Sampling
from py_runtime.hosts.onnxruntime_backend import OnnxRuntimeBackend

SAMPLED = {"topK": 40, "temperature": 1.5}
WEATHER_QUESTION = "What is the weather like in Paris today?"
CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"location": "Paris"}}\n</tool_call>'


def regexp(source: str) -> dict[str, Any]:
    return {"kind": "regexp", "source": source, "flags": ""}


def after_the_call() -> list[dict[str, Any]]:
    """The weather question, the fixture's call, and the tool's answer."""
    return [
        user(WEATHER_QUESTION),
        assistant(CALL),
        *tool_success("call_1", {"temperature": 18, "condition": "sunny"}),
    ]


#: Every dialogue of the fixture's README: (name, options, input, constraint, answer).
#: Without tools, a RegExp the answer matches holds it (its text is not in the prompt).
DIALOGUES = [
    ("weather call", WITH_TOOLS, WEATHER_QUESTION, None, None),
    ("after the call", WITH_TOOLS, after_the_call(), None, "It is sunny and 18 degrees in Paris."),
    ("hello, tools", WITH_TOOLS, "Hello!", None, "Hello! How can I help you today?"),
    (
        "hello",
        GREEDY,
        "Hello!",
        regexp(r"Hello! How can I help you today\?"),
        "Hello! How can I help you today?",
    ),
    (
        "capital",
        GREEDY,
        "What is the capital of France?",
        regexp(r"The capital of France is [A-Z][a-z]+\."),
        "The capital of France is Paris.",
    ),
]


def backend_of(harness: Harness) -> OnnxRuntimeBackend:
    backend = harness.model.backend
    assert isinstance(backend, OnnxRuntimeBackend)
    return backend


def answer(
    harness: Harness,
    options: dict[str, Any],
    prompt: Any,
    constraint: dict[str, Any] | None,
    held: bool,
) -> tuple[list[Any], list[int], int]:
    """The chunks, every token id in the cache after the answer, and the forward
    passes the answer ran; ``held``: the grammar is held and jump-forward on, else
    neither (the same prompt: a RegExp's text is never in it, tools stay declared)."""
    harness.model.jump_forward = held
    session = harness.create(options)
    state = harness.runtime.session(session).state
    if not held:
        state.tool_grammar = None  # type: ignore[misc]  # the tools stay in the prompt
    chunks: list[Any] = []

    async def settle(_: Any) -> bool:
        return True

    backend = backend_of(harness)
    passes = backend.passes
    harness.run(
        harness.runtime.prompt(
            session,
            prompt,
            constraint if held else None,
            constraint is not None,
            chunks.append,
            settle,
            lambda: False,
        )
    )
    harness.model.jump_forward = True
    return chunks, list(state.cached), backend.passes - passes


@pytest.fixture(scope="module")
def harness() -> Harness:
    return Harness("fp32")


@pytest.mark.parametrize(
    ("options", "prompt", "constraint", "expected"),
    [dialogue[1:] for dialogue in DIALOGUES],
    ids=[dialogue[0] for dialogue in DIALOGUES],
)
def test_a_greedy_constrained_answer_is_the_unconstrained_one_token_for_token(
    harness: Harness,
    options: dict[str, Any],
    prompt: Any,
    constraint: dict[str, Any] | None,
    expected: str | None,
) -> None:
    free, free_ids, free_passes = answer(harness, options, prompt, constraint, held=False)
    held, held_ids, held_passes = answer(harness, options, prompt, constraint, held=True)
    assert held_ids == free_ids
    assert text_of(held) == text_of(free)
    assert [(c["name"], c["arguments"]) for c in calls_of(held)] == [
        (c["name"], c["arguments"]) for c in calls_of(free)
    ]
    if expected is None:
        (call,) = calls_of(held)
        assert call["arguments"] == {"location": "Paris"}
    else:
        assert text_of(held) == expected
    # Where the grammar forces text (a call's keys, the RegExps' literals), the model
    # keeps the draft: fewer passes. Free text under the tool grammar forces nothing.
    if expected is None or constraint is not None:
        assert held_passes < free_passes, (held_passes, free_passes)
    else:
        assert held_passes == free_passes


def test_the_whole_forced_answer_runs_in_one_pass(harness: Harness) -> None:
    options, prompt, constraint, expected = DIALOGUES[3][1:]
    _, _, free_passes = answer(harness, options, prompt, constraint, held=False)
    _, ids, passes = answer(harness, options, prompt, constraint, held=True)
    tokenizer = harness.model.tokenizer
    assert tokenizer is not None and tokenizer.decode(ids).endswith(expected)
    # The RegExp forces all 11 tokens: one pass each without jump-forward, one in all
    # with it (the stop token is chosen from that pass's last logits).
    assert free_passes - passes == len(tokenizer.encode(expected)) - 1


# -- drafts the model does not keep --------------------------------------------------


def spelled(harness: Harness, text: str) -> list[int]:
    """``text`` one character per token: the same text as the model's tokens, but not
    how the model writes it."""
    tokenizer = harness.model.tokenizer
    assert tokenizer is not None
    return [token for character in text for token in tokenizer.encode(character)]


def test_a_draft_the_model_does_not_keep_is_corrected_where_it_parts() -> None:
    harness = Harness("fp32")
    options, prompt, constraint, expected = DIALOGUES[3][1:]
    _, reference, _ = answer(harness, options, prompt, constraint, held=False)
    tokenizer = harness.model.tokenizer
    assert tokenizer is not None
    answer_ids = reference[len(reference) - len(tokenizer.encode(expected)) :]
    assert tokenizer.decode(answer_ids) == expected
    # The prompt, in a fresh cache held to the RegExp, then drafts by hand.
    session = harness.create(GREEDY)
    state = harness.runtime.session(session).state
    backend = backend_of(harness)
    prompt_ids = reference[: len(reference) - len(answer_ids)]
    harness.run(backend.forward(state.cache, prompt_ids))
    grammar = Grammar("regex", re.escape(expected))
    harness.run(backend.constrain(state.cache, grammar))
    greedy = Sampling()
    base = len(prompt_ids)

    # Rejected at its first token: nothing runs, the model's own token comes back.
    passes = backend.passes
    draft = spelled(harness, expected)
    assert draft[0] != answer_ids[0]
    ids, pending = harness.run(backend.speculate(state.cache, draft, greedy))
    assert (ids, pending) == ([answer_ids[0]], True)
    assert backend.passes == passes and backend.cache_length(state.cache) == base
    harness.run(backend.forward(state.cache, ids))

    # Kept for three tokens, then spelled: one pass, cut back, the model's token after.
    rest = tokenizer.decode(answer_ids[1:])
    draft = [*answer_ids[1:4], *spelled(harness, tokenizer.decode(answer_ids[4:]))]
    assert tokenizer.decode(draft) == rest and draft[3] != answer_ids[4]
    ids, pending = harness.run(backend.speculate(state.cache, draft, greedy))
    assert (ids, pending) == (answer_ids[1:5], True)
    assert backend.passes == passes + 2
    assert backend.cache_length(state.cache) == base + 4  # the three kept, and the first
    harness.run(backend.forward(state.cache, ids[-1:]))

    # The rest, as the model writes it: kept whole, nothing pending.
    ids, pending = harness.run(backend.speculate(state.cache, answer_ids[5:], greedy))
    assert (ids, pending) == (answer_ids[5:], False)
    assert backend.cache_length(state.cache) == len(reference)
    # The grammar is complete: the stop token, and the cache's logits are the answer's.
    token = harness.run(backend.next_token(state.cache, greedy))
    assert token in harness.model.eos_ids
    harness.run(backend.constrain(state.cache, None))


def test_drafts_spelled_out_still_give_the_no_jump_answers(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every draft spelled one character per token (the model keeps almost none of
    them): every dialogue's answer is still the one decoded without jump-forward."""
    backend = backend_of(harness)
    real = backend.speculate
    tokenizer = harness.model.tokenizer
    assert tokenizer is not None

    async def speculate(cache: int, draft: list[int], sampling: Any) -> tuple[list[int], bool]:
        return await real(cache, spelled(harness, tokenizer.decode(draft)), sampling)

    for _, options, prompt, constraint, _ in DIALOGUES:
        _, free_ids, _ = answer(harness, options, prompt, constraint, held=False)
        monkeypatch.setattr(backend, "speculate", speculate)
        _, held_ids, _ = answer(harness, options, prompt, constraint, held=True)
        monkeypatch.undo()
        assert held_ids == free_ids


def test_a_graph_with_the_last_position_only_judges_one_token_at_a_time(
    harness: Harness,
) -> None:
    """SmolLM2 as an older preparation made it: no ``num_logits_to_keep``, one row of
    logits. Jump-forward then emits exactly what next_token would, one pass a token."""
    backend = backend_of(harness)
    options, prompt, constraint, _ = DIALOGUES[3][1:]
    _, free_ids, free_passes = answer(harness, options, prompt, constraint, held=False)
    backend.speculates = False
    try:
        _, held_ids, held_passes = answer(harness, options, prompt, constraint, held=True)
    finally:
        backend.speculates = True
    assert held_ids == free_ids and held_passes == free_passes


# -- sampling ------------------------------------------------------------------------

SCHEMA = {
    "type": "object",
    "properties": {
        "the_temperature_in_degrees_celsius": {"type": "integer", "minimum": 0, "maximum": 9},
        "the_condition_of_the_sky_right_now": {"enum": ["sunny", "cloudy", "partly cloudy"]},
        "where": {"type": "string", "maxLength": 6},
    },
    "required": [
        "the_temperature_in_degrees_celsius",
        "the_condition_of_the_sky_right_now",
        "where",
    ],
    "additionalProperties": False,
}


@pytest.mark.parametrize("question", ["Hello!", WEATHER_QUESTION, "x"])
def test_sampled_answers_are_valid_and_every_token_was_allowed(
    harness: Harness, question: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sampled answers (jump-forward judging drafts with their probabilities) validate,
    and their tokens, replayed through a fresh matcher, are each allowed in turn."""
    backend = backend_of(harness)
    real_speculate, real_next = backend.speculate, backend.next_token
    emitted: list[int] = []

    async def speculate(cache: int, draft: list[int], sampling: Any) -> tuple[list[int], bool]:
        ids, pending = await real_speculate(cache, draft, sampling)
        emitted.extend(ids)
        return ids, pending

    async def next_token(cache: int, sampling: Any) -> int:
        token = await real_next(cache, sampling)
        emitted.append(token)
        return token

    monkeypatch.setattr(backend, "speculate", speculate)
    monkeypatch.setattr(backend, "next_token", next_token)
    grammar = Grammar("json-schema", json.dumps(SCHEMA))
    constraint = {"kind": "json-schema", "json": json.dumps(SCHEMA)}
    tokenizer = harness.model.tokenizer
    assert tokenizer is not None
    kept = harness.model.jumped_tokens
    for _ in range(3):
        emitted.clear()
        session = harness.create(SAMPLED)
        chunks: list[Any] = []

        async def settle(_: Any) -> bool:
            return True

        harness.run(
            harness.runtime.prompt(
                session, question, constraint, True, chunks.append, settle, lambda: False
            )
        )
        text = text_of(chunks)
        jsonschema.validate(json.loads(text), SCHEMA)
        assert emitted[-1] in harness.model.eos_ids  # the grammar's end, then a stop token
        assert tokenizer.decode(emitted[:-1]) == text
        replay = backend.new_cache()
        harness.run(backend.constrain(replay, grammar))
        assert all(backend.accept(replay, [token]) for token in emitted)
        backend.release(replay)
    assert harness.model.jumped_tokens > kept  # drafts were kept


# -- the multi-call fixture ----------------------------------------------------------

MULTICALL = FIXTURE.parent / "tiny-qwen2-multicall"
CURRENCIES = ["EUR", "USD", "CHF", "JPY", "GBP"]


def declared(name: str, description: str, properties: dict[str, Any]) -> dict[str, Any]:
    schema = {"type": "object", "properties": properties, "required": list(properties)}
    wire_schema = {"type": "object", "properties": "object", "required": "array"}
    return {
        "name": name,
        "description": description,
        "inputSchema": {**wire_schema, "json": json.dumps(schema)},
    }


#: tests/fixtures/tiny-qwen2-multicall's tools and one-turn dialogues (its README).
MULTICALL_TOOLS = {
    "time": declared(
        "get_time",
        "Get the current local time in a time zone",
        {"timezone": {"type": "string", "description": "IANA time zone name"}},
    ),
    "weather": declared(
        "get_weather",
        "Get the current weather for a location",
        {"location": {"type": "string", "description": "City name"}},
    ),
    "currency": declared(
        "convert_currency",
        "Convert an amount of money from one currency to another",
        {
            "amount": {"type": "number"},
            "from": {"type": "string", "enum": CURRENCIES},
            "to": {"type": "string", "enum": CURRENCIES},
        },
    ),
    "search": declared("search", "Search the web", {"query": {"type": "string"}}),
}
MULTICALL_DIALOGUES = [
    ("What time is it in Tokyo, and how is the weather in Zürich?", ["time", "weather"]),
    (
        "Convert 250 euros to Swiss francs and tell me the weather in Genève.",
        ["weather", "currency"],
    ),
    ("Search for the Moomins and tell me the time in Helsinki.", ["time", "search"]),
    ("How is the weather in São Paulo and in Kraków?", ["weather"]),
    (
        "How much is 99.5 dollars in yen, what time is it in New York, and what is the news "
        "about Reykjavík?",
        ["time", "currency", "search"],
    ),
    (
        "What time is it in London, and what is the weather in Oslo and in Malmö?",
        ["time", "weather", "currency", "search"],
    ),
    ("Hello!", ["time", "weather"]),
    ("Thank you, that is all.", ["time", "weather", "currency", "search"]),
]


@pytest.mark.skipif(not MULTICALL.is_dir(), reason="tiny-qwen2-multicall not found")
def test_multi_call_answers_are_the_unconstrained_ones_token_for_token() -> None:
    """Answers with two or three calls: before, jump-forward's unjudged tokens made
    this model call one tool with broken arguments in two of these dialogues."""
    harness = Harness("fp32", folder=MULTICALL)
    calls = 0
    for question, tools in MULTICALL_DIALOGUES:
        options = {
            **GREEDY,
            "expectedInputs": [{"type": "tool-response"}],
            "expectedOutputs": [{"type": "tool-call"}],
            "tools": [MULTICALL_TOOLS[tool] for tool in tools],
        }
        free, free_ids, free_passes = answer(harness, options, question, None, held=False)
        held, held_ids, held_passes = answer(harness, options, question, None, held=True)
        assert held_ids == free_ids, question
        assert calls_of(held) == [] or held_passes < free_passes
        calls += len(calls_of(held))
        assert [(c["name"], c["arguments"]) for c in calls_of(held)] == [
            (c["name"], c["arguments"]) for c in calls_of(free)
        ]
    assert calls == 14
