"""The multi-call fixture (tests/fixtures/tiny-qwen2-multicall, see its README) under
the engine: greedy answers of two and three Hermes tool calls parse into the calls it
memorised, in order; the follow-up after the tool results and the plain answers are
exact. Jump-forward is off, so every token of a call is the model's own choice (held
to the tool-call grammar)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("onnxruntime")

from py_runtime.devtools.models import make_multicall_fixture as made  # noqa: E402
from py_runtime.engine.runtime import Runtime  # noqa: E402
from py_runtime.hosts.cpython import local_model  # noqa: E402

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "tiny-qwen2-multicall"
CURRENCIES = made.CURRENCIES


def declare(tool: dict[str, Any]) -> dict[str, Any]:
    """A tool the fixture was trained with, as the shim converts it."""
    function = tool["function"]
    probe = {"type": "object", "properties": "object", "required": "array"}
    return {
        "name": function["name"],
        "description": function["description"],
        "inputSchema": {**probe, "json": json.dumps(function["parameters"])},
    }


ALL_TOOLS = [declare(tool) for tool in made.ALL_TOOLS]
GET_TIME, GET_WEATHER, CONVERT_CURRENCY, SEARCH = ALL_TOOLS

#: (tools, question, the calls answered: (name, arguments) in order)
MULTI_CALLS = [
    (
        [GET_TIME, GET_WEATHER],
        "What time is it in Tokyo, and how is the weather in Zürich?",
        [("get_time", {"timezone": "Asia/Tokyo"}), ("get_weather", {"location": "Zürich"})],
    ),
    (
        [GET_WEATHER, CONVERT_CURRENCY],
        "Convert 250 euros to Swiss francs and tell me the weather in Genève.",
        [
            ("convert_currency", {"amount": 250, "from": "EUR", "to": "CHF"}),
            ("get_weather", {"location": "Genève"}),
        ],
    ),
    (
        [GET_TIME, SEARCH],
        "Search for the Moomins and tell me the time in Helsinki.",
        [("search", {"query": "Moomins"}), ("get_time", {"timezone": "Europe/Helsinki"})],
    ),
    (
        [GET_WEATHER],
        "How is the weather in São Paulo and in Kraków?",
        [("get_weather", {"location": "São Paulo"}), ("get_weather", {"location": "Kraków"})],
    ),
    (
        [GET_TIME, CONVERT_CURRENCY, SEARCH],
        "How much is 99.5 dollars in yen, what time is it in New York, "
        "and what is the news about Reykjavík?",
        [
            ("convert_currency", {"amount": 99.5, "from": "USD", "to": "JPY"}),
            ("get_time", {"timezone": "America/New_York"}),
            ("search", {"query": "news Reykjavík"}),
        ],
    ),
    (
        ALL_TOOLS,
        "What time is it in London, and what is the weather in Oslo and in Malmö?",
        [
            ("get_time", {"timezone": "Europe/London"}),
            ("get_weather", {"location": "Oslo"}),
            ("get_weather", {"location": "Malmö"}),
        ],
    ),
]

PLAIN = [
    ([GET_TIME, GET_WEATHER], "Hello!", "Hello! How can I help you today?"),
    (ALL_TOOLS, "Thank you, that is all.", "You are welcome. Have a nice day!"),
]


def options(tools: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "samplingMode": "most-predictable",
        "expectedInputs": [{"type": "tool-response"}],
        "expectedOutputs": [{"type": "tool-call"}],
        "tools": tools,
    }


class Harness:
    """A Runtime over the fixture (fp32), driven like the worker drives it."""

    def __init__(self) -> None:
        self.model = local_model(FIXTURE, "fp32")
        self.model.jump_forward = False
        self.runtime = Runtime(self.model)
        self.loop = asyncio.new_event_loop()

    def create(self, tools: list[dict[str, Any]]) -> int:
        created = self.runtime.create(options(tools), True, lambda _: None, lambda: False)
        return self.loop.run_until_complete(created)["session"]

    def prompt(self, session: int, prompt: Any) -> list[Any]:
        chunks: list[Any] = []

        async def settle(_: Any) -> bool:
            return True

        self.loop.run_until_complete(
            self.runtime.prompt(session, prompt, None, False, chunks.append, settle, lambda: False)
        )
        return chunks


@pytest.fixture(scope="module")
def harness() -> Harness:
    return Harness()


def text_of(chunks: list[Any]) -> str:
    return "".join(c["text"] for c in chunks if c["kind"] == "text")


def calls_of(chunks: list[Any]) -> list[dict[str, Any]]:
    return [c for c in chunks if c["kind"] == "tool-call"]


@pytest.mark.parametrize(
    ("tools", "question", "expected"),
    MULTI_CALLS,
    ids=[
        "time,weather",
        "currency,weather",
        "search,time",
        "weather,weather",
        "3-calls-a",
        "3-calls-b",
    ],
)
def test_several_calls_parse_in_order(
    harness: Harness, tools: list[dict[str, Any]], question: str, expected: list[Any]
) -> None:
    chunks = harness.prompt(harness.create(tools), question)
    calls = calls_of(chunks)
    assert [(c["name"], c["arguments"]) for c in calls] == expected
    assert text_of(chunks).strip() == ""  # only the newlines between calls, if any
    call_ids = [c["callId"] for c in calls]
    assert len(set(call_ids)) == len(call_ids)
    assert all(call_id.startswith("call_") for call_id in call_ids)


def test_the_numbers_keep_their_json_types(harness: Harness) -> None:
    tools, question, _ = MULTI_CALLS[4]
    amount = calls_of(harness.prompt(harness.create(tools), question))[0]["arguments"]["amount"]
    assert amount == 99.5 and isinstance(amount, float)
    tools, question, _ = MULTI_CALLS[1]
    amount = calls_of(harness.prompt(harness.create(tools), question))[0]["arguments"]["amount"]
    assert amount == 250 and isinstance(amount, int)


def test_the_answer_after_both_tool_results(harness: Harness) -> None:
    tools, question, _ = MULTI_CALLS[0]
    session = harness.create(tools)
    time_call, weather_call = calls_of(harness.prompt(session, question))
    time_result = {
        "kind": "tool-success",
        "callId": time_call["callId"],
        "name": "get_time",
        "result": [{"type": "text", "value": {"kind": "string", "string": "21:04"}}],
    }
    weather = {"kind": "object", "json": json.dumps({"temperature": 7, "condition": "cloudy"})}
    weather_result = {
        "kind": "tool-success",
        "callId": weather_call["callId"],
        "name": "get_weather",
        "result": [{"type": "object", "value": weather}],
    }
    responses = [
        {"type": "tool-response", "value": time_result},
        {"type": "tool-response", "value": weather_result},
    ]
    reply = harness.prompt(session, [{"role": "user", "content": responses}])
    assert calls_of(reply) == []
    assert text_of(reply) == "It is 21:04 in Tokyo. In Zürich it is cloudy and 7 degrees."


@pytest.mark.parametrize(("tools", "question", "expected"), PLAIN, ids=["hello", "thanks"])
def test_plain_answers_are_exact_with_tools_declared(
    harness: Harness, tools: list[dict[str, Any]], question: str, expected: str
) -> None:
    chunks = harness.prompt(harness.create(tools), question)
    assert all(c["kind"] == "text" for c in chunks)
    assert text_of(chunks) == expected


@pytest.mark.parametrize(
    ("tools", "question"),
    [(tools, question) for tools, question, _ in [*MULTI_CALLS, *PLAIN]],
)
def test_held_and_jumped_answers_are_the_free_ones_token_for_token(
    harness: Harness, tools: list[dict[str, Any]], question: str
) -> None:
    """The greedy property: with the tool grammar held and jump-forward on, the answer
    is token for token the one decoded with neither (which satisfies the grammar)."""
    cached: dict[bool, list[int]] = {}
    for held in (False, True):
        harness.model.jump_forward = held
        session = harness.create(tools)
        state = harness.runtime.session(session).state
        if not held:
            state.tool_grammar = None  # the tools stay in the prompt, unheld
        jumped = harness.model.jumped_tokens
        harness.prompt(session, question)
        cached[held] = list(state.cached)
        if held and question not in {q for _, q, _ in PLAIN}:
            assert harness.model.jumped_tokens > jumped  # the calls' keys were drafted
    harness.model.jump_forward = False
    assert cached[True] == cached[False]
