"""The Hermes tool-call parser (Qwen2.5/Qwen3), whole and streamed, and family selection."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import pytest

from py_runtime.tool_calls import (
    PARSERS,
    HermesParser,
    ParsedCall,
    Segment,
    ToolCallParser,
    coalesce,
    make_parser,
    parser_for_model,
)

TOOLS = {"get_weather", "get_time"}
README_ANSWER = (
    '<tool_call>\n{"name": "get_weather", "arguments": {"location": "Paris"}}\n</tool_call>'
)
PARIS = ParsedCall("get_weather", {"location": "Paris"})
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "tiny-qwen2-toolcall"


def parse_chunks(chunks: Iterable[str], tools: set[str] = TOOLS) -> list[Segment]:
    parser: ToolCallParser = HermesParser(tools)
    segments: list[Segment] = []
    for chunk in chunks:
        segments += parser.feed(chunk)
    return coalesce(segments + parser.finish())


def parse(text: str, tools: set[str] = TOOLS) -> list[Segment]:
    """Parse ``text`` whole, char by char and in 3-char chunks; all must agree."""
    whole = parse_chunks([text], tools)
    assert parse_chunks(list(text), tools) == whole
    assert parse_chunks([text[i : i + 3] for i in range(0, len(text), 3)], tools) == whole
    return whole


def test_readme_answer() -> None:
    assert parse(README_ANSWER) == [PARIS]


def test_plain_text_passes_through() -> None:
    assert parse("It is sunny and 18 degrees in Paris.") == ["It is sunny and 18 degrees in Paris."]
    assert parse("") == []
    assert parse("a < b, and <tool is not <tool_call") == ["a < b, and <tool is not <tool_call"]


def test_text_before_and_after() -> None:
    assert parse(f"Let me check.\n{README_ANSWER}\nDone.") == [
        "Let me check.\n",
        PARIS,
        "\nDone.",
    ]


def test_two_calls() -> None:
    second = (
        '<tool_call>{"name":"get_time","arguments":{"tz":"Europe/Paris","n":[1,2.5,null]}}'
        "</tool_call>"
    )
    assert parse(f"{README_ANSWER}\n{second}") == [
        PARIS,
        "\n",
        ParsedCall("get_time", {"tz": "Europe/Paris", "n": [1, 2.5, None]}),
    ]


def test_whitespace_around_the_json_is_optional() -> None:
    for body in (
        '{"name": "get_weather", "arguments": {"location": "Paris"}}',
        '  \n\t{"name": "get_weather", "arguments": {"location": "Paris"}}\r\n\n ',
    ):
        assert parse(f"<tool_call>{body}</tool_call>") == [PARIS]


def test_non_ascii_arguments() -> None:
    text = (
        '<tool_call>\n{"name": "get_weather", "arguments": {"location": "Zürich 🌤"}}\n</tool_call>'
    )
    assert parse(text) == [ParsedCall("get_weather", {"location": "Zürich 🌤"})]


@pytest.mark.parametrize(
    "call",
    [
        '<tool_call>\n{"name": "get_weather", "arguments": {"location": "Paris"}\n</tool_call>',
        "<tool_call>\nnot json\n</tool_call>",
        "<tool_call></tool_call>",
        '<tool_call>\n{"name": "launch_rockets", "arguments": {}}\n</tool_call>',
        '<tool_call>\n{"name": "get_weather", "arguments": "{\\"location\\": \\"Paris\\"}"}\n'
        "</tool_call>",
        '<tool_call>\n{"name": "get_weather", "arguments": ["Paris"]}\n</tool_call>',
        '<tool_call>\n{"name": "get_weather"}\n</tool_call>',
        '<tool_call>\n{"name": ["get_weather"], "arguments": {}}\n</tool_call>',
        '<tool_call>\n["get_weather", {}]\n</tool_call>',
        '<tool_call>\n{"name": "get_weather", "arguments": {"t": NaN}}\n</tool_call>',
    ],
    ids=[
        "bad-json",
        "not-json",
        "empty",
        "undeclared-tool",
        "string-arguments",
        "array-arguments",
        "no-arguments",
        "non-string-name",
        "not-an-object",
        "nan",
    ],
)
def test_invalid_calls_stay_text_verbatim(call: str) -> None:
    assert parse(call) == [call]
    assert parse(f"Before {call} after") == [f"Before {call} after"]
    # A valid call next to it still parses.
    assert parse(f"{call}\n{README_ANSWER}") == [f"{call}\n", PARIS]


def test_no_declared_tools_means_no_calls() -> None:
    assert parse(README_ANSWER, tools=set()) == [README_ANSWER]


def test_unterminated_call_stays_text() -> None:
    unterminated = '<tool_call>\n{"name": "get_weather", "arguments": {"location": "Paris"}}'
    assert parse(unterminated) == [unterminated]
    assert parse(f"Hi {README_ANSWER} then {unterminated}") == [
        "Hi ",
        PARIS,
        f" then {unterminated}",
    ]
    assert parse("text <tool_call>") == ["text <tool_call>"]
    assert parse("<tool_call>\n{...}\n</tool_") == ["<tool_call>\n{...}\n</tool_"]


def test_marker_prefixes_are_held_back_then_released() -> None:
    parser = HermesParser(TOOLS)
    assert parser.feed("Hello <") == ["Hello "]
    assert parser.feed("b>") == ["<b>"]
    assert parser.feed(" <tool") == [" "]
    assert parser.feed("box") == ["<toolbox"]
    assert parser.feed("<tool_cal") == []
    assert parser.feed("l>") == []  # a whole marker: the call is collected
    assert parser.feed('{"name": "get_weather", "arguments": {"location": "Paris"}}') == []
    assert parser.feed("</tool_call") == []
    assert parser.feed(">") == [PARIS]
    assert parser.feed("Bye <tool") == ["Bye "]
    assert parser.finish() == ["<tool"]


def test_a_lone_lt_at_the_end_is_released_by_finish() -> None:
    parser = HermesParser(TOOLS)
    assert parser.feed("1 <") == ["1 "]
    assert parser.finish() == ["<"]
    assert parser.finish() == []


def test_finish_resets_the_parser() -> None:
    parser = HermesParser(TOOLS)
    assert parser.feed("<tool_call>{") == []
    assert parser.finish() == ["<tool_call>{"]
    assert parser.feed(README_ANSWER) == [PARIS]
    assert parser.finish() == []


def test_feed_returns_text_merged() -> None:
    parser = HermesParser(TOOLS)
    bad = "<tool_call>x</tool_call>"
    assert parser.feed(f"a{bad}b{README_ANSWER}c") == [f"a{bad}b", PARIS, "c"]


def test_token_by_token_with_fixture_tokenizer() -> None:
    """Stream the README answer as the fixture's tokenizer decodes it, token by token."""
    tokenizers = pytest.importorskip("tokenizers")
    if not FIXTURE.is_dir():
        pytest.skip("tiny-qwen2-toolcall not found")
    tokenizer = tokenizers.Tokenizer.from_file(str(FIXTURE / "tokenizer.json"))
    text = f"Sure.\n{README_ANSWER}\nDone."
    ids = tokenizer.encode(text, add_special_tokens=False).ids
    pieces, previous = [], ""
    for end in range(1, len(ids) + 1):
        decoded = tokenizer.decode(ids[:end], skip_special_tokens=False)
        pieces.append(decoded[len(previous) :])
        previous = decoded
    assert "".join(pieces) == text
    assert parse_chunks(pieces) == ["Sure.\n", PARIS, "\nDone."]


def test_coalesce() -> None:
    assert coalesce(["a", "", "b", PARIS, "", PARIS, "c", "d"]) == ["ab", PARIS, PARIS, "cd"]
    assert coalesce([]) == []


def test_parsed_call_arguments_round_trip_as_json() -> None:
    [call] = parse(
        '<tool_call>{"name": "get_time", "arguments": {"a": {"b": [true, false]}}}</tool_call>'
    )
    assert isinstance(call, ParsedCall)
    assert json.dumps(call.arguments) == '{"a": {"b": [true, false]}}'


# -- choosing the family -------------------------------------------------------------------


def test_parsers_table() -> None:
    assert PARSERS["hermes"] is HermesParser
    assert isinstance(make_parser("hermes", TOOLS), HermesParser)
    assert isinstance(make_parser("hermes", TOOLS, schemas={}), HermesParser)
    with pytest.raises(NotImplementedError, match="No tool-call parser for 'nope'"):
        make_parser("nope", TOOLS)


def test_parser_for_qwen_models() -> None:
    assert parser_for_model("qwen2", "") == "hermes"
    assert parser_for_model("qwen3", "") == "hermes"
    assert parser_for_model("Qwen3_MoE", "") == "hermes"
    assert parser_for_model("somethingelse", "... <tool_call>\\n{...} ...") == "hermes"


def test_parser_for_the_fixture() -> None:
    if not FIXTURE.is_dir():
        pytest.skip("tiny-qwen2-toolcall not found")
    config = json.loads((FIXTURE / "config.json").read_text(encoding="utf-8"))
    tokenizer_config = json.loads((FIXTURE / "tokenizer_config.json").read_text(encoding="utf-8"))
    family = parser_for_model(config["model_type"], tokenizer_config["chat_template"])
    assert family == "hermes"


@pytest.mark.parametrize(
    ("model_type", "template", "family"),
    [
        ("qwen3_5", "<tool_call>", "qwen_xml"),
        ("qwen3", "<tool_call>\n<function=NAME>\n<parameter=K>", "qwen_xml"),
        ("llama", '{"name": function name, "parameters": dictionary}', "llama"),
        ("lfm2", "<|tool_call_start|>[f(a=1)]<|tool_call_end|>", "pythonic"),
        ("gemma3_text", "```tool_code", "pythonic"),
    ],
)
def test_other_families_are_chosen(model_type: str, template: str, family: str) -> None:
    """More in test_tool_calls_common.py."""
    assert parser_for_model(model_type, template) == family


def test_unknown_families_are_named() -> None:
    with pytest.raises(
        NotImplementedError, match="No tool-call format is known for model type 'gpt2'"
    ):
        parser_for_model("gpt2", "{{ messages }}")
