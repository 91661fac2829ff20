"""Constrained decoding under CPython (llguidance), on the fixture model.

The fixture answers its six dialogues exactly and anything else with noise, so
sampled answers to other questions are what an unconstrained small model does
worst: every one must still parse and validate. Numbers and strings are bounded:
noise never closes an unbounded one within the response's token limit.
"""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema
import pytest
from builders import assistant, user
from test_causal_lm import GREEDY, WITH_TOOLS, Harness, calls_of, text_of

from py_runtime.engine.errors import Aborted, PromptAPIError

SAMPLED = {"topK": 40, "temperature": 1.5}
QUESTIONS = ["Hello!", "Tell me about yourself.", "What is the weather like in Rome?", "x"]

SCHEMAS: list[dict[str, Any]] = [
    {"type": "boolean"},
    {"type": "null"},
    {"type": "integer", "minimum": -5, "maximum": 5},
    {"type": "integer", "exclusiveMinimum": -3, "exclusiveMaximum": 300},
    {"type": "string", "maxLength": 8},
    {"enum": ["red", "green", 3, None]},
    {"const": {"a": [1, 2]}},
    {
        "type": "array",
        "items": {"type": "integer", "minimum": 0, "maximum": 99},
        "minItems": 2,
        "maxItems": 3,
    },
    {
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": 10},
            "age": {"type": "integer", "minimum": 0, "maximum": 150},
        },
        "required": ["name", "age"],
        "additionalProperties": False,
    },
    {
        "type": "object",
        "properties": {"zip": {"type": "string", "pattern": "^\\d{5}$"}},
        "required": ["zip"],
    },
    {
        "$defs": {
            "point": {
                "type": "array",
                "prefixItems": [{"type": "integer", "maximum": 9, "minimum": 0}] * 2,
            }
        },
        "type": "array",
        "items": {"$ref": "#/$defs/point"},
        "maxItems": 2,
    },
    {
        "oneOf": [
            {"type": "integer", "minimum": 0, "maximum": 9},
            {"type": "string", "maxLength": 4},
        ]
    },
    {"type": "string", "format": "date"},
    {"type": "string", "format": "time"},
    {"type": "string", "format": "date-time"},
    {"type": "string", "format": "uuid"},
    {"type": "string", "format": "ipv4"},
    {"type": "string", "format": "email"},
    {"type": "number", "minimum": 0, "maximum": 5},
    {"type": "number", "exclusiveMinimum": -1.5, "exclusiveMaximum": 0.1},
    {"type": "integer", "minimum": 0, "maximum": 1000000, "multipleOf": 5},
    {"type": "integer"},
    {"type": "array", "items": {"type": "object"}, "maxItems": 3},
    {"type": "string", "pattern": "^[A-Za-zÀ-ÿ]+( [A-Za-zÀ-ÿ]+)*$"},
]
FORMATS = jsonschema.Draft202012Validator.FORMAT_CHECKER
REGEXES = [
    (r"\d{4}-\d{2}-\d{2}", ""),
    (r"(red|green|blue)", "i"),
    (r"[a-z]{1,8}@[a-z]{1,8}\.(com|org)", ""),
    (r"^(yes|no)$", ""),
    (r"[A-Z][a-z]{0,6}(, [A-Z][a-z]{0,6}){0,3}", ""),
]


@pytest.fixture(scope="module")
def harness() -> Harness:
    return Harness("fp32")


def prompt(
    harness: Harness,
    session: int,
    text: Any,
    constraint: dict[str, Any] | None,
    stop: Any = lambda: False,
) -> list[Any]:
    chunks: list[Any] = []

    async def settle(_: Any) -> bool:
        return True

    harness.run(
        harness.runtime.prompt(session, text, constraint, False, chunks.append, settle, stop)
    )
    return chunks


def schema(value: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "json-schema", "json": json.dumps(value)}


def regexp(source: str, flags: str = "") -> dict[str, Any]:
    return {"kind": "regexp", "source": source, "flags": flags}


def error_name(call: Any) -> str:
    with pytest.raises(PromptAPIError) as caught:
        call()
    return caught.value.name


@pytest.mark.parametrize("value", SCHEMAS, ids=lambda s: json.dumps(s)[:40])
def test_every_sampled_answer_validates(harness: Harness, value: dict[str, Any]) -> None:
    for question in QUESTIONS:
        session = harness.create(SAMPLED)
        answer = text_of(prompt(harness, session, question, schema(value)))
        jsonschema.validate(json.loads(answer), value, format_checker=FORMATS)
        assert answer == answer.strip() and "\n" not in answer  # one line, no free space


@pytest.mark.parametrize(("source", "flags"), REGEXES)
def test_every_sampled_answer_matches_whole(harness: Harness, source: str, flags: str) -> None:
    pattern = re.compile(source, re.IGNORECASE if "i" in flags else 0)
    for question in QUESTIONS:
        answer = text_of(prompt(harness, harness.create(SAMPLED), question, regexp(source, flags)))
        assert pattern.fullmatch(answer), answer


def test_a_constraint_changes_what_the_model_would_say(harness: Harness) -> None:
    session = harness.create(GREEDY)
    answer = text_of(prompt(harness, session, "Hello!", schema({"type": "boolean"})))
    assert answer in ("true", "false")


@pytest.mark.parametrize(
    "value",
    [
        {"type": "integer", "multipleOf": 3},
        {"type": "number", "multipleOf": 0.5},
        {"type": "number", "minimum": 5, "exclusiveMaximum": 5},
        {"type": "array", "uniqueItems": True},
        {"type": "string", "format": "uri"},
        {"type": "object", "minProperties": 1},
        {"not": {"type": "string"}},
        {"$ref": "https://example.com/schema.json"},
        {"type": "string", "pattern": "(?=a)b"},
    ],
)
def test_a_keyword_that_cannot_be_enforced_is_not_supported(
    harness: Harness, value: dict[str, Any]
) -> None:
    session = harness.create(GREEDY)
    with pytest.raises(PromptAPIError) as caught:
        prompt(harness, session, "Hello!", schema(value))
    assert caught.value.name == "NotSupportedError"
    # Named in the message, and nothing was added: the session answers as before.
    assert text_of(prompt(harness, session, "Hello!", None)) == "Hello! How can I help you today?"


@pytest.mark.parametrize(
    ("source", "flags"), [("a\\b", ""), ("(a)\\1", ""), ("a", "v"), ("x$y", "")]
)
def test_a_regexp_that_cannot_be_enforced_is_not_supported(
    harness: Harness, source: str, flags: str
) -> None:
    session = harness.create(GREEDY)
    assert error_name(lambda: prompt(harness, session, "Hi", regexp(source, flags))) == (
        "NotSupportedError"
    )


def prefixed(text: str, prefix: str) -> list[dict[str, Any]]:
    return [user(text), assistant(prefix, prefix=True)]


NAME_AGE = next(s for s in SCHEMAS if "age" in s.get("properties", {}))


def test_an_assistant_prefix_is_fed_through_the_matcher(harness: Harness) -> None:
    for question in QUESTIONS:
        session = harness.create(SAMPLED)
        prefix = '{"name": "Ad'
        answer = text_of(prompt(harness, session, prefixed(question, prefix), schema(NAME_AGE)))
        jsonschema.validate(json.loads(prefix + answer), NAME_AGE)


def test_a_prefix_the_grammar_rejects_is_not_supported_and_leaves_the_session_usable(
    harness: Harness,
) -> None:
    session = harness.create(GREEDY)
    bad = prefixed("Hello!", '{"nickname": ')  # starts like JSON; no such property
    assert error_name(lambda: prompt(harness, session, bad, schema(NAME_AGE))) == (
        "NotSupportedError"
    )
    assert error_name(
        lambda: prompt(harness, session, prefixed("Hi", "2026/"), regexp(r"\d{4}-\d\d"))
    ) == ("NotSupportedError")
    assert text_of(prompt(harness, session, "Hello!", None)) == "Hello! How can I help you today?"


def test_an_aborted_constrained_answer_leaves_nothing_behind(harness: Harness) -> None:
    session = harness.create(SAMPLED)
    seen: list[Any] = []

    def stop() -> bool:
        return len(seen) >= 3

    chunks: list[Any] = []

    async def settle(_: Any) -> bool:
        return True

    def on_chunk(chunk: Any) -> None:
        seen.append(chunk)
        chunks.append(chunk)

    with pytest.raises(Aborted):
        harness.run(
            harness.runtime.prompt(
                session, "Hello!", schema(NAME_AGE), False, on_chunk, settle, stop
            )
        )
    # The next answer is unconstrained and whole: no matcher was left on the cache.
    session2 = harness.create(GREEDY)
    assert text_of(prompt(harness, session2, "Hello!", None)) == "Hello! How can I help you today?"
    answer = text_of(prompt(harness, session, "Hello!", schema(NAME_AGE)))
    jsonschema.validate(json.loads(answer), NAME_AGE)


LONG_KEYS = {
    "type": "object",
    "properties": {
        "the_temperature_in_degrees_celsius": {"type": "integer", "minimum": 0, "maximum": 9},
        "the_condition_of_the_sky_right_now": {"enum": ["sunny", "cloudy"]},
    },
    "required": ["the_temperature_in_degrees_celsius", "the_condition_of_the_sky_right_now"],
    "additionalProperties": False,
}


#: Schemas where one token can open far more than it closes: a string of a format, an
#: object (a key, then a value), nested values of any type.
OPENERS: list[dict[str, Any]] = [
    {"type": "array", "items": {"type": "string", "format": "date-time"}},
    {"type": "array", "items": {"type": "object"}},
    {
        "type": "object",
        "properties": {"id": {"type": "array", "items": {"type": "string", "format": "uuid"}}},
    },
]


@pytest.mark.parametrize("value", OPENERS, ids=lambda s: json.dumps(s)[:40])
def test_every_capped_answer_ends_validly(harness: Harness, value: dict[str, Any]) -> None:
    """At every cap from the shortest answer's (``[]``, ``{}``: two tokens), noise that
    opens what needs many tokens to close still ends whole: a step that opens more
    than the budget can close is taken back."""
    capped, default = 0, harness.model.max_response_tokens
    try:
        for cap in range(2, 64):
            session = harness.create(SAMPLED)
            harness.model.max_response_tokens = cap  # set once the model is loaded
            answer = text_of(prompt(harness, session, "Tell me about yourself.", schema(value)))
            jsonschema.validate(json.loads(answer), value, format_checker=FORMATS)
            assert harness.model.tokenizer is not None
            capped += len(harness.model.tokenizer.encode(answer)) >= cap - 2
    finally:
        harness.model.max_response_tokens = default
    assert capped, "no answer reached its cap: the test did not test the ending"


def test_jump_forward_writes_the_forced_text_without_sampling_it() -> None:
    answers, sampled = [], []
    for jump in (True, False):
        harness = Harness("fp32")
        harness.model.jump_forward = jump
        session = harness.create(GREEDY)
        backend = harness.model.backend
        assert backend is not None
        steps: list[int] = []
        original = backend.next_token

        async def counted(
            cache: int, sampling: Any, original: Any = original, steps: list[int] = steps
        ) -> int:
            steps.append(cache)
            return int(await original(cache, sampling))

        backend.next_token = counted  # type: ignore[method-assign]
        answers.append(text_of(prompt(harness, session, "Hello!", schema(LONG_KEYS))))
        sampled.append(len(steps))
    assert answers[0] == answers[1]
    jsonschema.validate(json.loads(answers[0]), LONG_KEYS)
    # The keys, quotes and separators are forced: only the values are sampled.
    assert sampled[0] < sampled[1] / 3, sampled


def test_tool_calls_are_held_to_the_declared_tools_and_schemas(harness: Harness) -> None:
    schema_of = json.loads(WITH_TOOLS["tools"][0]["inputSchema"]["json"])
    found = 0
    for question in [*QUESTIONS, "What is the weather like in Paris today?"] * 3:
        options = {**WITH_TOOLS, **SAMPLED}
        options.pop("samplingMode")
        chunks = prompt(harness, harness.create(options), question, None)
        for call in calls_of(chunks):
            assert call["name"] == "get_weather"
            jsonschema.validate(call["arguments"], schema_of)
            found += 1
        assert "<tool_call>" not in text_of(chunks)  # a started call always completes
    assert found > 0


def test_the_fixture_still_calls_exactly_under_the_tool_grammar() -> None:
    harness = Harness("fp32")
    session = harness.create(WITH_TOOLS)
    (call,) = calls_of(prompt(harness, session, "What is the weather like in Paris today?", None))
    assert call["arguments"] == {"location": "Paris"}
