"""The Qwen3.5 / Qwen3-Coder XML tool-call parser, against a template of that family."""

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

from py_runtime.tool_calls import ParsedCall, QwenXmlParser, Schemas, Segment, parser_for_model
from py_runtime.tool_calls.qwen_xml import convert

#: As Qwen3.5 and Qwen3-Coder render calls: dicts and lists as JSON, anything else
#: with Jinja's ``string`` (so Python's True/None); results in <tool_response> blocks
#: of a user turn.
TEMPLATE = """{%- if tools %}<|im_start|>system
# Tools
<tools>
{%- for tool in tools %}
{{ tool | tojson }}
{%- endfor %}
</tools>
<function=example_function_name>
<parameter=example_parameter_1>
value_1
</parameter>
</function><|im_end|>
{% endif %}
{%- for message in messages %}
{%- if message.role == "assistant" %}
{{- "<|im_start|>assistant\\n" + message.content }}
{%- for tool_call in message.tool_calls | default([]) %}
{%- set call = tool_call.function %}
{{- "\\n<tool_call>\\n<function=" + call.name + ">\\n" }}
{%- for name, value in call.arguments | items %}
{{- "<parameter=" + name + ">\\n" }}
{%- if value is mapping or (value is sequence and value is not string) %}
{{- value | tojson | safe }}
{%- else %}
{{- value | string }}
{%- endif %}
{{- "\\n</parameter>\\n" }}
{%- endfor %}
{{- "</function>\\n</tool_call>" }}
{%- endfor %}
{{- "<|im_end|>\\n" }}
{%- elif message.role == "tool" %}
{%- if loop.first or messages[loop.index0 - 1].role != "tool" %}
{{- "<|im_start|>user" }}
{%- endif %}
{{- "\\n<tool_response>\\n" + message.content + "\\n</tool_response>" }}
{%- if loop.last or messages[loop.index0 + 1].role != "tool" %}
{{- "<|im_end|>\\n" }}
{%- endif %}
{%- else %}
{{- "<|im_start|>" + message.role + "\\n" + message.content + "<|im_end|>\\n" }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{ "<|im_start|>assistant\\n" }}{% endif %}"""

#: The input schemas that type CALLS' arguments back.
TYPED: dict[str, dict[str, Any]] = {
    "get_weather": {"type": "object", "properties": {"location": {"type": "string"}}},
    "get_time": {
        "type": "object",
        "properties": {
            "tz": {"type": "string"},
            "n": {"type": "integer"},
            "x": {"type": "number"},
            "ok": {"type": "boolean"},
            "none": {"type": ["string", "null"]},
            "l": {"type": "array"},
            "nested": {"anyOf": [{"type": "null"}, {"type": "object"}]},
        },
    },
}
PARIS = ParsedCall("get_weather", {"location": "Paris"})
CALL = (
    "<tool_call>\n<function=get_weather>\n<parameter=location>\nParis\n</parameter>\n"
    "</function>\n</tool_call>"
)


def parse(text: str, tools: set[str] = TOOLS, schemas: Schemas | None = None) -> list[Segment]:
    return parse_every_way(lambda: QwenXmlParser(tools, schemas), text)


def test_the_template_is_chosen_as_qwen_xml() -> None:
    assert parser_for_model("qwen3_5", TEMPLATE) == "qwen_xml"
    assert parser_for_model("qwen3_moe", TEMPLATE) == "qwen_xml"


@pytest.mark.parametrize("content", ["", "Let me check."])
def test_rendered_calls_are_recovered_with_schemas(content: str) -> None:
    text = assistant_text(TEMPLATE, CALLS, content, end="<|im_end|>\n")
    segments = parse(text, schemas=TYPED)
    assert [s for s in segments if isinstance(s, ParsedCall)] == CALLS
    assert [s for s in segments if isinstance(s, str)] == [content + "\n", "\n", "\n", "\n"]


def test_without_schemas_values_stay_text() -> None:
    text = assistant_text(TEMPLATE, CALLS[1:3], end="<|im_end|>\n")
    assert [s for s in parse(text) if isinstance(s, ParsedCall)] == [
        ParsedCall(
            "get_time",
            {"tz": "Europe/Paris", "n": "3", "x": "-2.5", "ok": "True", "none": "None"}
            | {"l": '[1, "a"]'},
        ),
        ParsedCall("get_time", {"nested": '{"k": [{"deep": false}], "q": "say \\"hi\\"\\n"}'}),
    ]


def test_the_tool_response_renders_back() -> None:
    assert render_with_tool_response(TEMPLATE).endswith(
        f"<|im_start|>assistant\n\n{CALL}<|im_end|>\n<|im_start|>user\n<tool_response>\n"
        '{"temp": 18, "sky": "clear"}\n</tool_response><|im_end|>\n<|im_start|>assistant\n'
    )


@pytest.mark.parametrize(
    ("schema", "text", "value"),
    [
        (None, " 3 ", " 3 "),
        ({"type": "string"}, "3", "3"),
        ({"type": "integer"}, " 42 ", 42),
        ({"type": "integer"}, "3.0", 3),
        ({"type": "integer"}, "3.5", "3.5"),
        ({"type": "integer"}, "true", "true"),
        ({"type": "number"}, "-1e3", -1000.0),
        ({"type": "number"}, "1e999", "1e999"),
        ({"type": "number"}, "NaN", "NaN"),
        ({"type": "number"}, "twelve", "twelve"),
        ({"type": "boolean"}, "True", True),
        ({"type": "boolean"}, "false", False),
        ({"type": "boolean"}, "yes", "yes"),
        ({"type": "null"}, "None", None),
        ({"type": ["null", "integer"]}, "7", 7),
        ({"type": ["string", "integer"]}, "7", 7),
        ({"type": ["string", "integer"]}, "007", "007"),
        ({"type": ["string", "null"]}, "None", None),
        ({"type": "object"}, '{"a": [1]}', {"a": [1]}),
        ({"type": "object"}, "[1]", "[1]"),
        ({"type": "object"}, "{'a': 1}", "{'a': 1}"),
        ({"type": "array"}, "[1, 2]", [1, 2]),
        ({"oneOf": [{"type": "integer"}, {"type": "array"}]}, "[]", []),
        ({"type": 5}, "1", "1"),
        ("not a schema", "1", "1"),
    ],
)
def test_schema_types(schema: Any, text: str, value: Any) -> None:
    assert convert(text, schema) == value
    assert type(convert(text, schema)) is type(value)


def test_odd_schemas_do_not_break_the_parser() -> None:
    odd: list[Any] = [{"get_weather": "x"}, {"get_weather": {"properties": []}}, {}]
    for schemas in odd:
        assert parse(CALL, schemas=schemas) == [PARIS]


def test_text_around_and_value_whitespace() -> None:
    assert parse(f"Hi {CALL} and {CALL}.") == ["Hi ", PARIS, " and ", PARIS, "."]
    tight = "<tool_call><function=get_weather><parameter=location>Paris</parameter></function>"
    tight += "</tool_call>"
    assert parse(tight) == [PARIS]
    multiline = "<tool_call>\n<function=get_time>\n<parameter=tz>\n\n a\nb \n\n</parameter>\n"
    assert parse(multiline + "</function>\n</tool_call>") == [
        ParsedCall("get_time", {"tz": "\n a\nb \n"})
    ]
    assert parse("<tool_call><function=get_time></function></tool_call>") == [
        ParsedCall("get_time", {})
    ]


@pytest.mark.parametrize(
    "body",
    [
        "<function=launch_rockets>\n</function>",
        "<function=get_weather>\n<parameter=location>\nParis\n</function>",
        "<function=get_weather>\n<parameter=location>\nParis\n</parameter>",
        "<function=get_weather>\nlocation: Paris\n</function>",
        "<function=get_weather>\n<parameter=a>\n1\n</parameter>\n<parameter=a>\n2\n</parameter>"
        "\n</function>",
        "<function=get_weather></function>\n<function=get_time></function>",
        "before <function=get_weather></function>",
        '{"name": "get_weather", "arguments": {}}',
        "",
    ],
    ids=[
        "undeclared",
        "open-parameter",
        "no-function-end",
        "stray-text",
        "repeated-key",
        "two-functions",
        "text-before",
        "hermes-json",
        "empty",
    ],
)
def test_invalid_calls_stay_text_verbatim(body: str) -> None:
    call = f"<tool_call>\n{body}\n</tool_call>"
    assert parse(call) == [call]
    assert parse(f"Before {call} after") == [f"Before {call} after"]
    assert parse(f"{call}\n{CALL}") == [f"{call}\n", PARIS]


def test_unterminated_and_undeclared() -> None:
    unterminated = "<tool_call>\n<function=get_weather>\n</function>\n</tool_"
    assert parse(unterminated) == [unterminated]
    assert parse(CALL, tools=set()) == [CALL]


def test_only_what_may_still_be_a_call_is_held_back() -> None:
    parser = QwenXmlParser(TOOLS)
    assert parser.feed("Hi <tool") == ["Hi "]
    assert parser.feed("s") == ["<tools"]
    assert parser.feed("<tool_call>\n<function=get_weather>") == []
    assert parser.feed("\n</function>\n</tool_call") == []
    assert parser.feed(">!") == [ParsedCall("get_weather", {}), "!"]
    assert parser.finish() == []
