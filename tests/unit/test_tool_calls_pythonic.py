"""The pythonic tool-call parser (LFM2, Gemma 3), against templates of both styles."""

from __future__ import annotations

import pytest
from test_tool_calls_common import (
    CALLS,
    TOOLS,
    assistant_text,
    parse_every_way,
    render_with_tool_response,
)

from py_runtime.tool_calls import ParsedCall, PythonicParser, Segment, parser_for_model

#: One call as Python source: keyword arguments with JSON-literal values (true/null).
_CALL = """{{- call.name + "(" }}
{%- for key, value in call.arguments | items %}
{%- if not loop.first %}, {% endif %}{{ key }}={{ value | tojson }}
{%- endfor %})"""

#: LFM2 style: ChatML, the calls in <|tool_call_start|>[...]<|tool_call_end|> before
#: the message's text, tool results in a ``tool`` turn.
LFM2 = (
    """{{- bos_token }}
{%- if tools %}<|im_start|>system
List of tools: <|tool_list_start|>{{ tools | tojson }}<|tool_list_end|><|im_end|>
{% endif %}
{%- for message in messages %}
{{- "<|im_start|>" + message.role + "\\n" }}
{%- if message.role == "assistant" and message.tool_calls %}
{{- "<|tool_call_start|>[" }}
{%- for tool_call in message.tool_calls %}
{%- set call = tool_call.function %}
{%- if not loop.first %}, {% endif %}"""
    + _CALL
    + """
{%- endfor %}
{{- "]<|tool_call_end|>" }}
{%- endif %}
{{- message.content + "<|im_end|>\\n" }}
{%- endfor %}
{%- if add_generation_prompt %}{{ "<|im_start|>assistant\\n" }}{% endif %}"""
)

#: Gemma 3 style: the message's text, then the call list, bare or in a ```tool_code
#: fence; tool results in a ```tool_output fence of a user turn.
GEMMA = (
    """{{- bos_token }}
{%- for message in messages %}
{%- if message.role == "tool" %}
{{- "<start_of_turn>user\\n```tool_output\\n" + message.content + "\\n```<end_of_turn>\\n" }}
{%- else %}
{{- "<start_of_turn>" + ("model" if message.role == "assistant" else message.role) + "\\n" }}
{%- if loop.first and tools %}Call tools as [f(a=...)] in a ```tool_code block:
{{ tools | tojson }}

{% endif %}
{{- message.content }}
{%- if message.tool_calls %}
{%- if fence %}{{ "```tool_code\\n" }}{% endif %}[
{%- for tool_call in message.tool_calls %}
{%- set call = tool_call.function %}
{%- if not loop.first %}, {% endif %}"""
    + _CALL
    + """
{%- endfor %}]
{%- if fence %}{{ "\\n```" }}{% endif %}
{%- endif %}
{{- "<end_of_turn>\\n" }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{ "<start_of_turn>model\\n" }}{% endif %}"""
)

PARIS = ParsedCall("get_weather", {"location": "Paris"})
LIST = '[get_weather(location="Paris")]'


def parse(text: str, tools: set[str] = TOOLS) -> list[Segment]:
    return parse_every_way(lambda: PythonicParser(tools), text)


def test_the_templates_are_chosen_as_pythonic() -> None:
    assert parser_for_model("lfm2", LFM2) == "pythonic"
    assert parser_for_model("gemma3_text", GEMMA) == "pythonic"


@pytest.mark.parametrize("content", ["", "Checking the weather."])
def test_lfm2_rendered_calls_are_recovered(content: str) -> None:
    for calls in ([CALLS[0]], CALLS):
        text = assistant_text(LFM2, calls, content, end="<|im_end|>\n")
        assert text.startswith("<|tool_call_start|>[get_weather(")
        assert parse(text) == [*calls, *([content] if content else [])]


@pytest.mark.parametrize("fence", [True, False], ids=["tool_code", "bare"])
def test_gemma_rendered_calls_are_recovered(fence: bool) -> None:
    for calls in ([CALLS[0]], CALLS):
        text = assistant_text(GEMMA, calls, end="<end_of_turn>\n", fence=fence)
        assert text.startswith("```tool_code\n[" if fence else "[get_weather(")
        assert parse(text) == calls
    if fence:  # the fence may follow text; a bare list must be the answer
        text = assistant_text(GEMMA, CALLS, "Let me look.\n", end="<end_of_turn>\n", fence=True)
        assert parse(text) == ["Let me look.\n", *CALLS]


def test_the_tool_responses_render_back() -> None:
    assert render_with_tool_response(LFM2).endswith(
        f"<|im_start|>assistant\n<|tool_call_start|>{LIST}<|tool_call_end|><|im_end|>\n"
        '<|im_start|>tool\n{"temp": 18, "sky": "clear"}<|im_end|>\n<|im_start|>assistant\n'
    )
    assert render_with_tool_response(GEMMA, fence=True).endswith(
        f"<start_of_turn>model\n```tool_code\n{LIST}\n```<end_of_turn>\n"
        '<start_of_turn>user\n```tool_output\n{"temp": 18, "sky": "clear"}\n```<end_of_turn>\n'
        "<start_of_turn>model\n"
    )


def test_python_literals() -> None:
    text = (
        "[get_time(s='it\\'s', t='''tri''', i=-3, f=+1.5e3, b=True, n=None, "
        "l=[1, [2], {}], d={'k': None, 'j': [False]}, j=null, u='\\u00e9\\n')]"
    )
    assert parse(text) == [
        ParsedCall(
            "get_time",
            {
                "s": "it's",
                "t": "tri",
                "i": -3,
                "f": 1500.0,
                "b": True,
                "n": None,
                "l": [1, [2], {}],
                "d": {"k": None, "j": [False]},
                "j": None,
                "u": "é\n",
            },
        )
    ]


def test_block_bodies() -> None:
    block = "<|tool_call_start|>{}<|tool_call_end|>"
    two = [PARIS, ParsedCall("get_time", {})]
    assert parse(block.format('get_weather(location="Paris")')) == [PARIS]
    assert parse(block.format(' [get_weather(location="Paris"), get_time()] ')) == two
    assert parse('```tool_code\nget_weather(location="Paris")\nget_time()\n```') == two
    assert parse("```tool_code\n[get_weather(location='Paris')]\n[get_time()]```") == two


def test_text_around_calls() -> None:
    lfm2 = f"<|tool_call_start|>{LIST}<|tool_call_end|>"
    assert parse(f"Hi {lfm2} and {lfm2}.") == ["Hi ", PARIS, " and ", PARIS, "."]
    assert parse(f"  {LIST} Checking.") == ["  ", PARIS, " Checking."]
    assert parse(f"{LIST}{LIST}") == [PARIS, LIST]  # one bare list, at the start only
    assert parse(f"Sure: {LIST}") == [f"Sure: {LIST}"]
    assert parse("```python\nprint(1)\n```") == ["```python\nprint(1)\n```"]


@pytest.mark.parametrize(
    "body",
    [
        'get_weather("Paris")',
        "get_weather(**kw)",
        "get_weather(location=x)",
        "get_weather(location=f())",
        "get_weather(location=1 + 2)",
        "get_weather(location=(1, 2))",
        "get_weather(location={1, 2})",
        "get_weather(location={1: 2})",
        "get_weather(location=b'x')",
        "get_weather(location=1j)",
        "get_weather(location=1e999)",
        "get_weather(location=-True)",
        "get_weather(location=[*x])",
        "get_weather(a=1, a=2)",
        "launch_rockets()",
        "os.system(cmd='ls')",
        "get_weather(location='Paris'",
        "get_weather",
        "[]",
        "x = get_weather()",
        "__import__('os').system('ls')",
    ],
)
def test_invalid_calls_stay_text_verbatim(body: str) -> None:
    for text in (
        f"<|tool_call_start|>[{body}]<|tool_call_end|>",
        f"```tool_code\n{body}\n```",
        f"[{body}]",
        f"[get_weather(), {body}]",
    ):
        assert parse(text) == [text]
        assert parse(f"{text} after") == [f"{text} after"]


def test_unterminated_calls_stay_text() -> None:
    for text in (
        '<|tool_call_start|>[get_weather(location="Paris")]',
        '```tool_code\nget_weather(location="Paris")',
        '[get_weather(location="Paris")',
        '[get_weather(location="Paris)]',
        "<|tool_call_start|>",
        "```tool_",
        "[get_",
    ):
        assert parse(text) == [text]


def test_no_declared_tools_means_no_calls() -> None:
    assert parse(LIST, tools=set()) == [LIST]


def test_only_what_may_still_be_a_call_is_held_back() -> None:
    parser = PythonicParser(TOOLS)
    assert parser.feed(" [") == []
    assert parser.feed("get_weather ") == []
    assert parser.feed("is") == [" [get_weather is"]  # not NAME(: text from here on
    assert parser.feed(" [get_weather(") == [" [get_weather("]
    assert parser.finish() == []

    assert parser.feed("[1") == ["[1"]
    assert parser.feed(" <|tool") == [" "]
    assert parser.feed("_call_start|>[get_weather(location='Paris')]") == []
    assert parser.feed("<|tool_call_end|> ``") == [PARIS, " "]
    assert parser.feed("`tool") == []
    assert parser.feed("s") == ["```tools"]
    assert parser.finish() == []

    assert parser.feed('[get_weather(location="Paris")') == []
    assert parser.feed("] ok") == [PARIS, " ok"]
    assert parser.finish() == []
