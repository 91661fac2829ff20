"""The arguments the runtime writes for a call it opened (``models/tool_arguments.py``).

The guarantee, over generated schemas, requests and scores: what is written is always
a start the call's grammar accepts, and a whole object is valid against its tool's
schema. The scores there stand in for a model's (a seeded hash of the text); the
model's own are in ``test_tool_choice.py`` (SmolLM2).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Sequence
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from py_runtime.engine.regular import NOTHING, Prefix, nullable, parse
from py_runtime.models.tool_arguments import (
    ArgumentWriter,
    candidates,
    in_spelled_form,
    names,
    numbers,
    passages,
    quantities,
    standard_forms,
)
from py_runtime.tool_calls.grammar import arguments_language

WORDS = ["Oslo", "Anna", "tomorrow", "on", "off", "kitchen", "2", "10", "3.5", "to", "the"]
WORDS += ["March 3, 2026", "at 3pm", "two", "minutes", "an hour and a half"]


def test_names_are_capitalised_where_no_sentence_starts() -> None:
    assert names("What time is it in Tokyo?") == ["Tokyo"]
    assert names("How are you? Fine. I'm in (Rome), I think") == [
        "Rome",
        "Rome), I",
        "Rome), I think",
    ]
    assert names("hi there") == []


def test_passages_are_quoted_text_and_runs_of_words() -> None:
    found = passages('Tell Anna "running late, sorry" now.')
    assert found[0] == "running late, sorry"
    assert {"Tell", "Tell Anna", "Anna", "sorry", "now"} <= set(found)
    assert all(run == run.strip(".,;:!?\"'()") for run in found)
    assert max(len(run.split()) for run in passages("a b c d e f g h")) == 6


def test_numbers_are_those_written_in_digits_each_time() -> None:
    assert numbers("75.5 francs, 2026-06-05 at 19:00 for 90 minutes, 90 again, x2") == [
        75.5,
        2026,
        6,
        5,
        19,
        0,
        90,
        90,
    ]


def test_numbers_are_also_those_written_as_words() -> None:
    text = "two adults and one child, Twenty-five, thirty six, forty; someone, oneself, None"
    assert numbers(text) == [2, 1, 25, 36, 40]


def test_durations_are_stated_in_the_unit_a_property_names() -> None:
    minutes = {"type": "number", "description": "Length of the timer in minutes"}
    assert quantities(minutes, "set a timer for an hour and a half") == [90]
    assert quantities(minutes, "I need a 30 second timer") == [0.5]
    assert quantities(minutes, "a 2 hour timer, or half an hour") == [120, 30]
    assert quantities(minutes, "timer 25 min please") == [25]
    assert quantities(minutes, "one hour and 5 minutes") == [60, 5]
    assert quantities(minutes, "home by 8, 2 adults") == []  # no duration
    assert quantities({"type": "integer"}, "it lasts 2 hours", "duration_minutes") == [120]
    assert quantities({"type": "number"}, "an hour and a half, 2 adults") == [2]  # no unit


def test_dates_and_times_in_words_are_offered_in_iso_form() -> None:
    text = (
        "March 14, 2026 at 3pm; the 3rd of Sept. 2027 at 7:30 a.m.; may 5 2026, 13pm, Mayday 2026"
    )
    found = [r.value for r in standard_forms(text)]
    assert found == ["2026-03-14", "2026-05-05", "2027-09-03", "15:00", "07:30"]
    request = "Put Dentist in my calendar for March 14, 2026 at 3pm"
    offered = candidates({"type": "string"}, request) or []
    assert {'"2026-03-14"', '"15:00"', '"March 14, 2026"', '"Dentist"'} <= set(offered)
    date = {"type": "string", "description": "Date as YYYY-MM-DD"}
    assert in_spelled_form(date, offered) == ['"2026-03-14"']
    time = {"type": "string", "description": "Start time as HH:MM"}
    assert in_spelled_form(time, offered) == ['"15:00"']
    assert in_spelled_form(date, ['"Dentist"']) == ['"Dentist"']  # none in form: all kept
    assert in_spelled_form({"type": "string"}, offered) == offered


def test_currencies_in_words_are_offered_as_their_codes() -> None:
    text = "How many euros for 80 Australian dollars, $5, 1000 Indian rupees or one yen?"
    assert [r.value for r in standard_forms(text)] == ["EUR", "AUD", "USD", "INR", "JPY"]
    assert standard_forms("dollarsign, eurozone, yens, 20 GBP to USD") == []
    code = {"type": "string", "description": "Three-letter currency code, e.g. USD"}
    offered = candidates(code, "convert 1200 yen to british pounds") or []
    assert in_spelled_form(code, offered) == ['"JPY"', '"GBP"']


@pytest.mark.parametrize("seed", range(8))
def test_two_values_in_a_spelled_form_are_not_both_taken_by_one(seed: int) -> None:
    """Whatever the scores: each currency the request names, one per property."""
    code = {"type": "string", "description": "Three-letter currency code, e.g. USD"}
    schema = {"type": "object", "properties": {"amount": {"type": "number"}}}
    schema["properties"] |= {"from": code, "to": code}
    schema["required"] = ["amount", "from", "to"]
    language = Prefix(parse(arguments_language(schema)))
    focus = hashed_scores(seed + 1)

    async def focused(label: str, texts: Sequence[str]) -> list[float]:
        return await focus(label, texts, None)

    def write(request: str) -> dict[str, Any]:
        writer = ArgumentWriter(language, request, hashed_scores(seed), own_value(0), focused)
        written, grounded = asyncio.run(writer.write("<tool_call>", schema))
        assert grounded
        return dict(json.loads(written))

    # In the order the request writes them, as the schema declares them.
    assert write("convert 1200 yen to british pounds") == {"amount": 1200} | {
        "from": "JPY",
        "to": "GBP",
    }
    assert write("20 GBP in dollars") == {"amount": 20, "from": "GBP", "to": "USD"}


@pytest.mark.parametrize("seed", range(8))
def test_an_enum_value_named_only_within_a_longer_one_is_not_named(seed: int) -> None:
    """Whatever the scores: "premium economy" names that cabin, not "economy"."""
    cabin = {"enum": ["economy", "premium economy", "business", "first"]}
    schema = {"type": "object", "properties": {"city": {"type": "string"}, "cabin": cabin}}
    schema["required"] = ["city"]
    language = Prefix(parse(arguments_language(schema)))
    focus = hashed_scores(seed + 1)

    async def focused(label: str, texts: Sequence[str]) -> list[float]:
        return await focus(label, texts, None)

    def cabin_of(request: str) -> Any:
        writer = ArgumentWriter(language, request, hashed_scores(seed), own_value(0), focused)
        written, _ = asyncio.run(writer.write("<tool_call>", schema))
        return json.loads(written).get("cabin")

    assert cabin_of("premium economy to Boston") == "premium economy"
    assert cabin_of("Economy, or premium economy if cheap, to Oslo") in cabin["enum"][:2]


@pytest.mark.parametrize("seed", range(8))
def test_what_a_form_takes_is_not_offered_to_free_strings_beside_it(seed: int) -> None:
    date = {"type": "string", "description": "Date as YYYY-MM-DD"}
    schema = {"type": "object", "properties": {"title": {"type": "string"}, "date": date}}
    schema["required"] = ["title", "date"]
    language = Prefix(parse(arguments_language(schema)))
    focus = hashed_scores(seed + 1)

    async def focused(label: str, texts: Sequence[str]) -> list[float]:
        return await focus(label, texts, None)

    async def own(prefix: str) -> str:  # the model's own title, the date in it
        return "Dentist on March 14, 2026"

    request = "Put Dentist in my calendar for March 14, 2026 at 3pm"
    writer = ArgumentWriter(language, request, hashed_scores(seed), own, focused)
    written, _ = asyncio.run(writer.write("<tool_call>", schema))
    arguments = json.loads(written)
    assert arguments["date"] == "2026-03-14"
    # The name the request states, not one over the date it writes.
    assert arguments["title"].startswith("Dentist")
    assert "march" not in arguments["title"].casefold()


@pytest.mark.parametrize("seed", range(8))
def test_an_optional_string_in_a_spelled_form_is_written_when_the_request_holds_one(
    seed: int,
) -> None:
    """Whatever the scores: the request's time, in the form the description spells."""
    time = {"type": "string", "description": "Start time as HH:MM, 24-hour clock"}
    schema = {"type": "object", "properties": {"title": {"type": "string"}, "time": time}}
    schema["required"] = ["title"]
    language = Prefix(parse(arguments_language(schema)))

    def write(request: str) -> dict[str, Any]:
        focus = hashed_scores(seed + 1)

        async def focused(label: str, texts: Sequence[str]) -> list[float]:
            return await focus(label, texts, None)

        writer = ArgumentWriter(language, request, hashed_scores(seed), own_value(0), focused)
        written, _ = asyncio.run(writer.write("<tool_call>", schema))
        return dict(json.loads(written))

    assert write("Lunch with Anna at 1pm")["time"] == "13:00"
    assert "time" not in write("Lunch with Anna")


@pytest.mark.parametrize("seed", range(8))
def test_a_call_of_runs_of_the_requests_words_alone_is_not_grounded(seed: int) -> None:
    """Any request has runs of words to fill free strings with: a call is grounded by
    a value the request states outright (a quoted passage, a name, an enum value it
    names), and no string written twice."""
    texts = {"type": "string"}
    message = {"type": "object", "properties": {"to": texts, "message": texts}}
    lights = {"type": "object", "properties": {"room": {"enum": ["kitchen", "office"]}}}
    lights["properties"]["label"] = texts
    focus = hashed_scores(seed + 1)

    async def focused(label: str, texts: Sequence[str]) -> list[float]:
        return await focus(label, texts, None)

    def write(schema: dict[str, Any], request: str) -> tuple[dict[str, Any], bool]:
        schema = {**schema, "required": list(schema["properties"])}
        language = Prefix(parse(arguments_language(schema)))
        writer = ArgumentWriter(language, request, hashed_scores(seed), own_value(0), focused)
        written, grounded = asyncio.run(writer.write("<tool_call>", schema))
        return json.loads(written), grounded

    assert write(message, "How are you doing today?")[1] is False
    # What the request states outright is written first, and no string twice.
    values, grounded = write(message, 'tell anna "running late" now')
    said = [value.casefold() for value in values.values()]
    assert said[0] == "running late" and len(set(said)) == 2, values
    values, grounded = write(message, "Message David now")  # a name: capitalised within
    said = [value.casefold() for value in values.values()]
    assert said[0].startswith("david") and len(set(said)) == 2, values
    assert write(lights, "How are you doing today?")[1] is False
    values, grounded = write(lights, "lights in the kitchen please")
    assert values["room"] == "kitchen", values
    assert grounded == (values["label"].casefold() != "kitchen"), values
    # A request states each value once: one string written twice is not its own.
    assert write(message, '"hi"') == ({"to": "hi", "message": "hi"}, False)


@pytest.mark.parametrize("seed", range(16))
def test_a_value_the_model_makes_up_is_not_written_where_the_request_has_words(
    seed: int,
) -> None:
    """Where the model's own value (not in the request) scores above every passage, the
    likeliest passage the request states outright (a name) is written, and the call is
    not grounded."""
    texts = {"type": "string"}
    schema = {"type": "object", "properties": {"city": texts}, "required": ["city"]}
    language = Prefix(parse(arguments_language(schema)))
    scores = hashed_scores(seed)

    async def favour_own(prefix: str, texts: Sequence[str], count: int | None) -> list[float]:
        hashed = await scores(prefix, texts, count)
        return [0.0 if t == '"Barcelona"' else s for t, s in zip(texts, hashed, strict=True)]

    async def focused(label: str, texts: Sequence[str]) -> list[float]:
        return await favour_own(label, texts, None)

    async def greedy(prefix: str) -> str | None:
        return "Barcelona"

    async def both(text: str) -> float:
        call = await scores('<tool_call>{"city": ', [text], None)
        return call[0] + (await scores("city: ", [text], None))[0]

    request = "weather in Buenos Aires"
    writer = ArgumentWriter(language, request, favour_own, greedy, focused)
    written, grounded = asyncio.run(writer.write("<tool_call>", schema))
    named = [
        text for text in candidates(texts, request) or [] if json.loads(text) in names(request)
    ]
    best = max(named, key=lambda text: asyncio.run(both(text)))
    assert json.loads(written) == {"city": json.loads(best)}
    assert grounded is False


def test_candidates_by_schema() -> None:
    request = "Dim the kitchen to 30 please"
    assert candidates({"enum": ["on", "off", 3]}, request) == ['"on"', '"off"', "3"]
    assert candidates({"const": "x"}, request) == ['"x"']
    assert candidates({"type": "boolean"}, request) == ["true", "false"]
    assert candidates({"type": "integer", "minimum": 1, "maximum": 3}, request) == ["1", "2", "3"]
    assert candidates({"type": "integer", "minimum": 0, "maximum": 100}, request) == ["30"]
    assert candidates({"type": "number"}, "no digits") is None
    assert '"kitchen"' in (candidates({"type": "string"}, request) or [])
    assert candidates({"type": "array"}, request) is None


def hashed_scores(seed: int) -> Any:
    """Scores that depend on the text only, as a model's do on a fixed context."""

    async def score(prefix: str, texts: Sequence[str], count: int | None) -> list[float]:
        def one(text: str) -> float:
            digest = hashlib.sha256(f"{seed}|{prefix}|{text}|{count}".encode()).digest()
            return -int.from_bytes(digest[:4], "big") / 2**28

        return [one(text) for text in texts]

    return score


def own_value(seed: int) -> Any:
    async def greedy(prefix: str) -> str | None:
        return [None, "Oslo", 'say "hi"', "x\\y"][seed % 4]

    return greedy


LEAVES = st.one_of(
    st.builds(lambda v: {"enum": v}, st.lists(st.sampled_from(WORDS), min_size=1, max_size=3)),
    st.just({"type": "string"}),
    st.just({"type": "string", "maxLength": 4}),
    st.just({"type": "string", "pattern": "^[A-Z]{3}$"}),
    st.just({"type": "number"}),
    st.just({"type": "integer", "minimum": 0, "maximum": 9}),
    st.just({"type": "integer", "minimum": 5}),
    st.just({"type": "boolean"}),
    st.just({"type": "array", "items": {"type": "string"}}),
    st.just({"type": "string", "description": "Date as YYYY-MM-DD"}),
    st.just({"type": "string", "format": "date"}),
    st.just({"type": "number", "description": "in minutes"}),
    st.just({"type": "integer", "minimum": 1, "maximum": 120, "description": "in minutes"}),
)


def objects(children: Any) -> Any:
    names = st.lists(st.sampled_from(["a", "b", "city", "day", "n"]), unique=True, max_size=4)
    return names.flatmap(
        lambda keys: st.tuples(
            st.lists(children, min_size=len(keys), max_size=len(keys)),
            st.lists(st.sampled_from(keys), unique=True) if keys else st.just([]),
        ).map(
            lambda pair, keys=keys: {
                "type": "object",
                "properties": dict(zip(keys, pair[0], strict=True)),
                "required": pair[1],
            }
        )
    )


SCHEMAS = objects(st.one_of(LEAVES, objects(LEAVES)))


@settings(max_examples=2000, deadline=None)
@given(
    SCHEMAS,
    st.lists(st.sampled_from(WORDS), max_size=8).map(" ".join),
    st.integers(0, 1000),
)
def test_what_is_written_is_held_to_the_tools_schema(
    schema: dict[str, Any], request: str, seed: int
) -> None:
    language = Prefix(parse(arguments_language(schema)))
    focus = hashed_scores(seed + 1)

    async def focused(label: str, texts: Sequence[str]) -> list[float]:
        return await focus(label, texts, None)

    writer = ArgumentWriter(language, request, hashed_scores(seed), own_value(seed), focused)
    written, grounded = asyncio.run(writer.write("<tool_call>", schema))
    assert language.after(written) != NOTHING
    if nullable(language.after(written)):
        jsonschema.validate(json.loads(written), schema)
    else:
        assert not grounded  # a call the model finishes is not the request's alone
