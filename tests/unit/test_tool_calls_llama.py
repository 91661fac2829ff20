"""The Llama 3.x JSON tool-call parser, against a Llama-3-like template's own rendering."""

from __future__ import annotations

from typing import Any

import pytest
from test_tool_calls_common import (
    CALLS,
    TOOLS,
    assistant_text,
    parse_every_way,
    render_with_tool_response,
)

from py_runtime.tool_calls import LlamaJsonParser, ParsedCall, Segment, parser_for_model

#: Llama 3.1-3.3 style: calls as bare JSON objects (joined by ``separator`` here, as
#: the real templates render one call only), tool results in an ``ipython`` turn.
TEMPLATE = """{{- bos_token }}
{%- set key = call_key | default("parameters") %}
<|start_header_id|>system<|end_header_id|>\n\n
{%- if tools is not none %}
Respond in the format {"name": function name, "{{ key }}": dictionary of argument name and its \
value}. Do not use variables.\n\n
{%- for t in tools %}{{ t | tojson(indent=4) }}\n\n{% endfor %}
{%- endif %}<|eot_id|>
{%- for message in messages %}
  {%- if message.role == "assistant" and message.tool_calls is defined %}
    {{- "<|start_header_id|>assistant<|end_header_id|>\n\n" }}
    {%- if python_tag | default(false) %}{{- "<|python_tag|>" }}{% endif %}
    {%- for tool_call in message.tool_calls %}
      {%- if not loop.first %}{{- separator | default("; ") }}{% endif %}
      {%- set call = tool_call.function %}
      {{- '{"name": "' + call.name + '", "' + key + '": ' + call.arguments | tojson + "}" }}
    {%- endfor %}
    {{- end | default("<|eot_id|>") }}
  {%- elif message.role == "tool" or message.role == "ipython" %}
    {{- "<|start_header_id|>ipython<|end_header_id|>\n\n" }}
    {%- if message.content is mapping %}{{ message.content | tojson }}
    {%- else %}{{ message.content }}{% endif %}<|eot_id|>
  {%- else %}
    {{- "<|start_header_id|>" + message.role + "<|end_header_id|>\n\n" }}
    {{- message.content | trim }}<|eot_id|>
  {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>\n\n{% endif %}"""

PARIS = ParsedCall("get_weather", {"location": "Paris"})
CALL = '{"name": "get_weather", "parameters": {"location": "Paris"}}'


def parse(text: str, tools: set[str] = TOOLS) -> list[Segment]:
    return parse_every_way(lambda: LlamaJsonParser(tools), text)


def test_the_template_is_chosen_as_llama() -> None:
    assert parser_for_model("llama", TEMPLATE) == "llama"


@pytest.mark.parametrize(
    "variables",
    [
        {},
        {"call_key": "arguments"},
        {"python_tag": True},
        {"python_tag": True, "call_key": "arguments", "separator": "\n"},
        {"separator": ";"},
        {"separator": " ;\n "},
    ],
    ids=["parameters", "arguments", "python-tag", "tag-arguments-newline", "tight", "spaced"],
)
def test_rendered_calls_are_recovered(variables: dict[str, Any]) -> None:
    for calls in ([CALLS[0]], CALLS):
        text = assistant_text(TEMPLATE, calls, end="<|eot_id|>", **variables)
        segments = parse(text)
        assert [s for s in segments if isinstance(s, ParsedCall)] == calls
        separators = [s for s in segments if isinstance(s, str)]
        assert separators == [variables.get("separator", "; ")] * (len(calls) - 1)


def test_the_tool_response_renders_back() -> None:
    rendered = render_with_tool_response(TEMPLATE)
    assert rendered.endswith(
        f"<|start_header_id|>assistant<|end_header_id|>\n\n{CALL}<|eot_id|>"
        '<|start_header_id|>ipython<|end_header_id|>\n\n{"temp": 18, "sky": "clear"}<|eot_id|>'
        "<|start_header_id|>assistant<|end_header_id|>\n\n"
    )


def test_text_after_the_calls_and_around_the_tag() -> None:
    assert parse(f"{CALL} Let me check.") == [PARIS, " Let me check."]
    assert parse(f"\n <|python_tag|> {CALL}\n") == ["\n ", PARIS, "\n"]
    assert parse(f"{CALL};<|python_tag|>{CALL}") == [PARIS, ";", PARIS]
    assert parse(f"{CALL}; then {CALL}") == [PARIS, f"; then {CALL}"]


def test_calls_only_at_the_start_of_the_answer() -> None:
    assert parse(f"Sure: {CALL}") == [f"Sure: {CALL}"]
    assert parse(f"; {CALL}") == [f"; {CALL}"]
    assert parse(f"<|python_tag|>print(1) {CALL}") == [f"<|python_tag|>print(1) {CALL}"]


@pytest.mark.parametrize(
    "call",
    [
        '{"name": "get_weather", "parameters": {"location": "Paris"}',  # unterminated
        '{"name": "launch_rockets", "parameters": {}}',
        '{"name": "get_weather", "parameters": "Paris"}',
        '{"name": "get_weather", "parameters": ["Paris"]}',
        '{"name": "get_weather"}',
        '{"name": ["get_weather"], "parameters": {}}',
        '{"name": "get_weather", "parameters": {"t": NaN}}',
        '{"name": "get_weather", "parameters": {"t": 1,}}',
        '{"name": "get_weather", "parameters": {"location": Paris}}',
        "{}",
        "{ }",
        "{Hello}",
        "{'name': 'get_weather', 'parameters': {}}",
        "<|python_tag|>{",
        "<|python_tag|>",
        "<|python",
    ],
    ids=[
        "unterminated",
        "undeclared",
        "string-args",
        "array-args",
        "no-args",
        "list-name",
        "nan",
        "trailing-comma",
        "bare-word",
        "empty",
        "empty-spaced",
        "prose",
        "single-quotes",
        "tag-brace",
        "tag",
        "part-of-tag",
    ],
)
def test_invalid_calls_stay_text_verbatim(call: str) -> None:
    assert parse(call) == [call]
    assert parse(f"{call} after") == [f"{call} after"]
    assert parse(f"{CALL}\n{call}") == [PARIS, f"\n{call}"]


def test_parameters_wins_over_arguments() -> None:
    text = '{"name": "get_time", "arguments": {"a": 1}, "parameters": {"b": 2}, "type": "function"}'
    assert parse(text) == [ParsedCall("get_time", {"b": 2})]


def test_no_declared_tools_means_no_calls() -> None:
    assert parse(CALL, tools=set()) == [CALL]


def test_only_what_may_still_be_a_call_is_held_back() -> None:
    parser = LlamaJsonParser(TOOLS)
    assert parser.feed("  ") == []
    assert parser.feed("{") == ["  "]  # text whatever comes next
    assert parser.feed(" ") == []
    assert parser.feed("Hello") == ["{ Hello"]  # not JSON: text from here on, unheld
    assert parser.feed(" {") == [" {"]
    assert parser.finish() == []

    assert parser.feed("<|py") == []
    assert parser.feed("thonic") == ["<|pythonic"]
    assert parser.finish() == []

    assert parser.feed('{"a": ') == []
    assert parser.feed("x") == ['{"a": x']  # a bare word cannot be JSON
    assert parser.finish() == []

    assert parser.feed('<|python_tag|>{"name": "get_weather", "parameters": {"location": ') == []
    assert parser.feed('"Paris"}}') == [PARIS]
    assert parser.feed(" ;") == []
    assert parser.feed("\n") == []
    assert parser.feed("Done") == [" ;\nDone"]
    assert parser.finish() == []


def test_finish_resets_to_the_start_of_an_answer() -> None:
    parser = LlamaJsonParser(TOOLS)
    assert parser.feed("Plain ") == ["Plain "]
    assert parser.finish() == []
    assert parser.feed(CALL) == [PARIS]
    assert parser.feed(" ") == []
    assert parser.finish() == [" "]
    assert parser.feed('{"name"') == []
    assert parser.finish() == ['{"name"']
