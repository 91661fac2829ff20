"""The engine's JSON language: every text in it validates, and every prefix of one
completes (hypothesis over generated schemas; texts drawn from the language itself)."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from py_runtime.engine.completion import Completer
from py_runtime.engine.errors import PromptAPIError
from py_runtime.engine.grammar import Grammar
from py_runtime.engine.json_regular import schema_language
from py_runtime.engine.json_schema import enforceable
from py_runtime.engine.regular import Alt, Chars, Node, Prefix, Repeat, Seq, parse, to_regex

FORMATS = jsonschema.Draft202012Validator.FORMAT_CHECKER


def sample(node: Node, rng: random.Random) -> str:
    """A random text of ``node``'s language (ASCII favoured, repetitions short)."""
    if isinstance(node, Chars):
        ranges = list(node.ranges)
        ascii_ranges = [(lo, min(hi, 0x7E)) for lo, hi in ranges if lo <= 0x7E]
        lo, hi = rng.choice(ascii_ranges if ascii_ranges and rng.random() < 0.8 else ranges)
        return chr(rng.randint(lo, min(hi, lo + 0x3000)))
    if isinstance(node, Seq):
        return "".join(sample(item, rng) for item in node.items)
    if isinstance(node, Alt):
        return sample(rng.choice(node.options), rng)
    assert isinstance(node, Repeat)
    top = node.low + 3 if node.high is None else min(node.high, node.low + 3)
    return "".join(sample(node.node, rng) for _ in range(rng.randint(node.low, top)))


scalars = st.one_of(
    st.just({"type": "boolean"}),
    st.just({"type": "null"}),
    st.builds(
        lambda kind, low, span, exclusive: {
            "type": kind,
            ("exclusiveMinimum" if exclusive else "minimum"): low,
            "maximum": low + span,
        },
        st.sampled_from(["integer", "number"]),
        st.one_of(st.integers(-1000, 1000), st.floats(-100, 100).map(lambda f: round(f, 2))),
        st.integers(1, 500),
        st.booleans(),
    ),
    st.just({"type": "integer"}),
    st.just({"type": "number"}),
    st.builds(
        lambda low, extra: {"type": "string", "minLength": low, "maxLength": low + extra},
        st.integers(0, 3),
        st.integers(0, 5),
    ),
    st.sampled_from(
        [
            {"type": "string", "format": name}
            for name in ("date", "time", "date-time", "email", "uuid", "ipv4", "ipv6")
        ]
    ),
    st.just({"type": "string", "pattern": "^[A-Z][a-zà-ÿ]+( [A-Z][a-z]+)?$"}),
    st.just({"type": "string", "pattern": '^"[^"]*"\\\\$'}),
    st.lists(
        st.one_of(st.text(max_size=4), st.integers(-5, 5), st.booleans(), st.none()),
        min_size=1,
        max_size=4,
    ).map(lambda values: {"enum": values}),
)


def _objects(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.builds(
            lambda props, required, extra: {
                "type": "object",
                "properties": dict(props),
                "required": [name for name, _ in props[:required]],
                **({} if extra is None else {"additionalProperties": extra}),
            },
            st.lists(
                st.tuples(st.sampled_from("abcdefg"), children),
                max_size=4,
                unique_by=lambda p: p[0],
            ),
            st.integers(0, 4),
            st.sampled_from([None, False]),
        ),
        st.builds(
            lambda items, low, extra: {
                "type": "array",
                "items": items,
                "minItems": low,
                "maxItems": low + extra,
            },
            children,
            st.integers(0, 2),
            st.integers(0, 3),
        ),
        st.builds(lambda branches: {"anyOf": branches}, st.lists(children, min_size=1, max_size=3)),
        st.just({"type": "object"}),
        st.just({"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]}),
    )


schemas = st.recursive(scalars, _objects, max_leaves=8)


def _valid(text: str, schema: Any) -> None:
    jsonschema.validate(json.loads(text), schema, format_checker=FORMATS)


@settings(max_examples=80, deadline=None)
@given(schema=schemas, seed=st.integers(0, 2**32))
def test_every_text_of_the_language_validates_and_every_prefix_completes(
    schema: Any, seed: int
) -> None:
    node = schema_language(enforceable(schema))
    rx = re.compile(to_regex(node), re.DOTALL)
    rng = random.Random(seed)
    for _ in range(5):
        text = sample(node, rng)
        assert rx.fullmatch(text), text
        _valid(text, schema)
        cut = rng.randint(0, len(text))
        completer = Completer(Grammar("regex", to_regex(node)))
        ending = completer.completion(text[:cut])
        assert ending is not None
        _valid(text[:cut] + ending, schema)


@pytest.mark.parametrize(
    ("schema", "good", "bad"),
    [
        (
            {"type": "number", "minimum": 0, "maximum": 5},
            ["0", "3", "4.5", "5", "5.0"],
            ["5.01", "-1", "6", "05", "1e0"],
        ),
        (
            {
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
                "required": ["b"],
            },
            ['{"b": ""}', '{"a": 1, "b": "x"}'],
            ['{"a": 1}', '{"b": "x", "a": 1}', '{"b":"x"}', '{"b": "x", "c": 1}'],
        ),
        (
            {"type": "array", "items": {"type": "object"}},
            ["[]", "[{}]", '[{"x": [], "z": {}}, {"y": null}]'],
            ["[{}", "[1]", '[{"x": [[1]]}]'],
        ),
        ({"type": "string", "pattern": "^a+$", "maxLength": 3}, [], []),
        (
            {
                "$defs": {"t": {"type": "array", "items": {"$ref": "#/$defs/t"}}},
                "$ref": "#/$defs/t",
            },
            ["[]", "[[]]", "[[[]], []]"],
            ["[[[[]]]]"],
        ),
        ({"type": "string", "pattern": '^"\\\\$'}, ['"\\"\\\\"'], ['""']),
    ],
)
def test_the_language_of_a_schema(schema: Any, good: list[str], bad: list[str]) -> None:
    try:
        node = schema_language(enforceable(schema))
    except PromptAPIError as error:
        assert not good, error
        return
    rx = re.compile(to_regex(node))
    for text in good:
        assert rx.fullmatch(text), text
    for text in bad:
        assert not rx.fullmatch(text), text


def test_a_regexp_answer_ends_soonest_inside_the_pattern() -> None:
    completer = Completer(Grammar("regex", to_regex(parse("[a-z]+@[a-z]+\\.(com|org)"))))
    assert completer.completion("john.") is None
    assert completer.completion("john") == "@a.com"
    assert completer.completion("john@x") == ".com"


def test_a_tool_call_ends_soonest_and_text_ends_now() -> None:
    arguments = to_regex(
        schema_language(
            {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
        )
    )
    from py_runtime.engine.grammar import ToolTag

    grammar = Grammar(
        "tool-calls",
        triggers=("<tool_call>",),
        tags=(ToolTag('<tool_call>{"name": "search", "arguments": ', arguments, "}</tool_call>"),),
    )
    completer = Completer(grammar)
    assert completer.completion("Let me look.") == ""
    assert (
        completer.completion('<tool_call>{"na')
        == 'me": "search", "arguments": {"q": ""}}</tool_call>'
    )
    assert (
        completer.completion('<tool_call>{"name": "search", "arguments": {"q": "ab')
        == '"}}</tool_call>'
    )
    assert (
        completer.completion('<tool_call>{"name": "search", "arguments": {"q": ""}}</tool_call> ok')
        == ""
    )


def test_a_prefix_follows_the_language_character_by_character() -> None:
    prefix = Prefix(parse("(ab)+c?"))
    assert prefix.feed("ab") and prefix.complete()
    assert not prefix.feed("x")
    assert prefix.feed("abc") and prefix.completion() == ""
