"""Part 4 of ``bench/constrained.py``, tool calls: the weather tool with its worked
example, about twenty questions sampled, with the tool-call grammar and without it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from bench.constrained_cases import SAMPLED
from bench.constrained_driver import Answer, Bench, Counters
from py_runtime.models.generation import CausalLMState

WEATHER_SCHEMA = {
    "type": "object",
    "properties": {"location": {"type": "string", "description": "City name"}},
    "required": ["location"],
}
WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Get the current weather for a location",
    "inputSchema": {
        "type": "object",
        "properties": "object",
        "required": "array",
        "json": json.dumps(WEATHER_SCHEMA),
    },
}
#: kWithTools of tests/wpt-models/ai/language-model/smollm2.tentative.https.window.js,
#: sampled: the worked example (a question and the assistant's call) in initialPrompts.
WITH_TOOLS: dict[str, Any] = {
    **SAMPLED,
    "expectedInputs": [{"type": "tool-call"}, {"type": "tool-response"}],
    "expectedOutputs": [{"type": "tool-call"}],
    "tools": [WEATHER_TOOL],
    "initialPrompts": [
        {"role": "user", "content": "What is the weather in Rome?", "prefix": False},
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool-call",
                    "value": {
                        "kind": "tool-call",
                        "callId": "call_example",
                        "name": "get_weather",
                        "arguments": {
                            "isArray": False,
                            "platform": False,
                            "json": json.dumps({"location": "Rome"}),
                        },
                    },
                }
            ],
            "prefix": False,
        },
    ],
}
#: (question, the city a call should name, or None where no call is wanted).
TOOL_QUESTIONS: list[tuple[str, str | None]] = [
    ("What is the weather in Paris?", "Paris"),
    ("How's the weather in Tokyo today?", "Tokyo"),
    ("Is it raining in London?", "London"),
    ("What's the temperature in New York right now?", "New York"),
    ("Tell me the weather forecast for Berlin.", "Berlin"),
    ("Weather in Madrid?", "Madrid"),
    ("Do I need an umbrella in Seattle today?", "Seattle"),
    ("How hot is it in Cairo?", "Cairo"),
    ("What is the weather like in Sydney?", "Sydney"),
    ("Is it snowing in Moscow?", "Moscow"),
    ("What's the weather in Rio de Janeiro?", "Rio de Janeiro"),
    ("How cold is it in Oslo?", "Oslo"),
    ("Check the weather in Mumbai for me.", "Mumbai"),
    ("What are the current weather conditions in Toronto?", "Toronto"),
    ("What is the capital of France?", None),
    ("What is 2 + 2?", None),
    ("Say hello.", None),
    ("Who wrote Romeo and Juliet?", None),
    ("Name a color of the sky.", None),
    ("Translate 'thank you' into Spanish.", None),
]


@dataclass
class ToolRow:
    grammar: bool
    answers: list[tuple[str, str | None, Answer]]
    counters: Counters
    seconds: float


@contextmanager
def without_tool_grammar() -> Iterator[None]:
    """CausalLMState.tool_grammar as None: tool calls are parsed, never held."""
    original = CausalLMState.__dict__["tool_grammar"]
    CausalLMState.tool_grammar = property(lambda self: None)  # type: ignore[assignment]
    try:
        yield
    finally:
        CausalLMState.tool_grammar = original  # type: ignore[method-assign]


#: How often each tool question is asked, per mode (sampled answers vary a lot).
TOOL_REPEATS = 2


def tool_calls(bench: Bench, quick: bool) -> list[ToolRow]:
    """Every question with the tool grammar and without it, alternately."""
    questions = TOOL_QUESTIONS[::4] if quick else TOOL_QUESTIONS
    rows = {grammar: ToolRow(grammar, [], Counters(), 0.0) for grammar in (True, False)}
    for _ in range(1 if quick else TOOL_REPEATS):
        for question, city in questions:
            for grammar, row in rows.items():
                with bench.counting(row.counters):
                    if grammar:
                        answer = bench.answer("tools", WITH_TOOLS, question, None, "sampled")
                    else:
                        with without_tool_grammar():
                            answer = bench.answer("tools", WITH_TOOLS, question, None, "sampled")
                row.answers.append((question, city, answer))
                row.seconds += answer.seconds
                shown = answer.calls[0]["arguments"] if answer.calls else answer.text[:60]
                label = "grammar" if grammar else "no grammar"
                print(f"  [tools, {label}] {question[:40]:40} {json.dumps(shown)}", flush=True)
    return list(rows.values())
