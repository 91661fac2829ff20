"""The Mistral tool-call parser, against templates of both Mistral call formats."""

from __future__ import annotations

import pytest
from test_tool_calls_common import (
    CALLS,
    TOOLS,
    assistant_text,
    parse_every_way,
    render_with_tool_response,
)

from py_runtime.tool_calls import MistralParser, ParsedCall, Segment, parser_for_model

#: Mistral 7B v0.3 style (tokenizer v3): ``[TOOL_CALLS] [{...}, ...]</s>``, results in
#: ``[TOOL_RESULTS]``; ``v11`` switches to ``[TOOL_CALLS]name[ARGS]{...}`` per call
#: (with ``[CALL_ID]id`` before ``[ARGS]`` when ``call_ids`` is set).
TEMPLATE = """{{- bos_token }}
{%- for message in messages %}
{%- if message.role == "user" %}
{%- if loop.last or loop.index0 == messages | length - 2 %}
{%- if tools %}[AVAILABLE_TOOLS]{{ tools | tojson }}[/AVAILABLE_TOOLS]{% endif %}
{%- endif %}
{{- "[INST]" + message.content + "[/INST]" }}
{%- elif message.role == "assistant" and message.tool_calls %}
{{- message.content }}
{%- if v11 | default(false) %}
{%- for tool_call in message.tool_calls %}
{{- "[TOOL_CALLS]" + tool_call.function.name }}
{%- if call_ids | default(false) %}{{ "[CALL_ID]" + tool_call.id }}{% endif %}
{{- "[ARGS]" + tool_call.function.arguments | tojson }}
{%- endfor %}
{%- else %}
{{- "[TOOL_CALLS] [" }}
{%- for tool_call in message.tool_calls %}
{%- set out = tool_call.function | tojson %}
{{- out[:-1] + ', "id": "' + tool_call.id + '"}' }}
{%- if not loop.last %}{{ ", " }}{% endif %}
{%- endfor %}
{{- "]" }}
{%- endif %}
{{- eos_token }}
{%- elif message.role == "tool" %}
{%- if v11 | default(false) %}
{{- "[TOOL_RESULTS]" + message.content + "[/TOOL_RESULTS]" }}
{%- else %}
{{- '[TOOL_RESULTS] {"content": ' + message.content | tojson + ', "call_id": "' }}
{{- message.tool_call_id + '"}[/TOOL_RESULTS]' }}
{%- endif %}
{%- else %}
{{- message.content + eos_token }}
{%- endif %}
{%- endfor %}"""

PARIS = ParsedCall("get_weather", {"location": "Paris"})
ARRAY = '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"location": "Paris"}}]'
NAMED = '[TOOL_CALLS]get_weather[ARGS]{"location": "Paris"}'


def parse(text: str, tools: set[str] = TOOLS) -> list[Segment]:
    return parse_every_way(lambda: MistralParser(tools), text)


def test_the_template_is_chosen_as_mistral() -> None:
    assert parser_for_model("mistral", TEMPLATE) == "mistral"
    assert parser_for_model("llama", TEMPLATE) == "mistral"


@pytest.mark.parametrize(
    "variables",
    [{}, {"v11": True}, {"v11": True, "call_ids": True}],
    ids=["array", "args", "call-ids"],
)
@pytest.mark.parametrize("content", ["", "Let me check. "])
def test_rendered_calls_are_recovered(variables: dict[str, bool], content: str) -> None:
    for calls in ([CALLS[0]], CALLS):
        text = assistant_text(TEMPLATE, calls, content, end="</s>", **variables)
        assert parse(text) == [*([content] if content else []), *calls]


def test_the_tool_responses_render_back() -> None:
    assert render_with_tool_response(TEMPLATE).endswith(
        '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"location": "Paris"}, '
        '"id": "abcdefghi"}]</s>[TOOL_RESULTS] {"content": "{\\"temp\\": 18, \\"sky\\": '
        '\\"clear\\"}", "call_id": "abcdefghi"}[/TOOL_RESULTS]'
    )
    assert render_with_tool_response(TEMPLATE, v11=True).endswith(
        f'{NAMED}</s>[TOOL_RESULTS]{{"temp": 18, "sky": "clear"}}[/TOOL_RESULTS]'
    )


def test_forms_and_text_around_them() -> None:
    assert parse(f"Hi {ARRAY} bye") == ["Hi ", PARIS, " bye"]
    assert parse(f"{NAMED}{NAMED}\n") == [PARIS, PARIS, "\n"]
    assert parse(f"{NAMED} {ARRAY}") == [PARIS, " ", PARIS]
    single = '[TOOL_CALLS]{"name": "get_weather", "arguments": {"location": "Paris"}}'
    assert parse(single) == [PARIS]
    assert parse('[TOOL_CALLS]get_weather{"location": "Paris"}') == [PARIS]  # no [ARGS]
    with_id = '[TOOL_CALLS]get_weather[CALL_ID]a1B2c3D4e[ARGS] {"location": "Paris"}'
    assert parse(with_id) == [PARIS]


def test_a_bare_array_at_the_start_is_read_too() -> None:
    bare = ARRAY.removeprefix("[TOOL_CALLS] ")
    assert parse(f"\n{bare} ok") == ["\n", PARIS, " ok"]
    assert parse(f"Sure: {bare}") == [f"Sure: {bare}"]
    assert parse("[1, 2] are numbers") == ["[1, 2] are numbers"]
    assert parse('[{"a": 1}] is JSON') == ['[{"a": 1}] is JSON']


@pytest.mark.parametrize(
    "call",
    [
        '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"location": "Paris"}}',
        '[TOOL_CALLS] [{"name": "launch_rockets", "arguments": {}}]',
        '[TOOL_CALLS] [{"name": "get_weather", "arguments": {}}, {"name": "no", "arguments": {}}]',
        '[TOOL_CALLS] [{"name": "get_weather", "arguments": "{}"}]',
        '[TOOL_CALLS] [{"name": "get_weather"}]',
        "[TOOL_CALLS] []",
        "[TOOL_CALLS] [1]",
        '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"t": NaN}}]',
        "[TOOL_CALLS] [get_weather(location='Paris')]",
        '[TOOL_CALLS]launch_rockets[ARGS]{"n": 1}',
        "[TOOL_CALLS]get_weather[ARGS][1]",
        "[TOOL_CALLS]get_weather[ARGS]",
        "[TOOL_CALLS]get weather[ARGS]{}",
        "[TOOL_CALLS]get_weather[ARG]{}",
        "[TOOL_CALLS]get_weather[ARGS]{oops}",
        "[TOOL_CALLS]",
        "[TOOL_CALLS] I will call a tool.",
        "[TOOL_CALL",
    ],
)
def test_invalid_calls_stay_text_verbatim(call: str) -> None:
    assert parse(call) == [call]
    assert parse(f"Before {call} after") == [f"Before {call} after"]
    assert parse(f"x{call}{NAMED}") == [f"x{call}", PARIS]


def test_no_declared_tools_means_no_calls() -> None:
    assert parse(ARRAY, tools=set()) == [ARRAY]
    assert parse(NAMED, tools=set()) == [NAMED]


def test_only_what_may_still_be_a_call_is_held_back() -> None:
    parser = MistralParser(TOOLS)
    assert parser.feed("x [TOOL") == ["x "]
    assert parser.feed("S are") == ["[TOOLS are"]
    assert parser.feed(" [TOOL_CALLS]") == [" "]
    assert parser.feed("get_weather") == []
    assert parser.feed("[AR") == []
    assert parser.feed('GS]{"location": ') == []
    assert parser.feed('"Paris"}') == [PARIS]
    assert parser.feed("[TOOL_CALLS] [") == []
    assert parser.feed("{oops") == ["[TOOL_CALLS] [{oops"]  # a bare word: not JSON
    assert parser.finish() == []

    assert parser.feed(" [") == []
    assert parser.feed("1") == [" [1"]
    assert parser.finish() == []
