"""What every tool-call parser shares: chunking, verbatim text, the family table and
``parser_for_model``. The helpers here are imported by the per-format test files."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from py_runtime.models.chat_template import ChatTemplate
from py_runtime.tool_calls import (
    PARSERS,
    HermesParser,
    LlamaJsonParser,
    MistralParser,
    ParsedCall,
    PythonicParser,
    QwenXmlParser,
    Segment,
    ToolCallParser,
    coalesce,
    make_parser,
    parser_for_model,
)

TOOLS = {"get_weather", "get_time"}
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "tiny-qwen2-toolcall"
Factory = Callable[[], ToolCallParser]

#: Calls with JSON-shaped arguments of every kind, as the tests' templates render them.
CALLS = [
    ParsedCall("get_weather", {"location": "Zürich 🌤", "unit": "celsius"}),
    ParsedCall(
        "get_time",
        {"tz": "Europe/Paris", "n": 3, "x": -2.5, "ok": True, "none": None, "l": [1, "a"]},
    ),
    ParsedCall("get_time", {"nested": {"k": [{"deep": False}], "q": 'say "hi"\n'}}),
    ParsedCall("get_weather", {}),
]


# -- helpers for the per-format files ----------------------------------------------------


def stream(parser: ToolCallParser, chunks: Iterable[str]) -> list[Segment]:
    """Feed ``chunks``, then finish; the segments, merged."""
    segments: list[Segment] = []
    for chunk in chunks:
        segments += parser.feed(chunk)
    return coalesce(segments + parser.finish())


def random_chunks(text: str, seed: int) -> list[str]:
    """``text`` cut into pieces of 1 to 8 characters, the cuts drawn from ``seed``."""
    rng, chunks, at = random.Random(seed), [], 0
    while at < len(text):
        size = rng.randint(1, 8)
        chunks.append(text[at : at + size])
        at += size
    return chunks


def parse_every_way(factory: Factory, text: str, seeds: Sequence[int] = (1, 2, 3)) -> list[Segment]:
    """Parse ``text`` whole, one character at a time and in seeded random chunks, each
    with a fresh parser and once more with one parser reused after ``finish``; all
    must agree. Returns the segments."""
    whole = stream(factory(), [text])
    assert stream(factory(), list(text)) == whole
    for seed in seeds:
        assert stream(factory(), random_chunks(text, seed)) == whole, f"seed {seed}"
    reused = factory()
    assert stream(reused, random_chunks(text, 9)) == whole
    assert stream(reused, [text]) == whole
    return whole


def text_of(segments: Iterable[Segment]) -> str:
    return "".join(s for s in segments if isinstance(s, str))


def calls_of(segments: Iterable[Segment]) -> list[ParsedCall]:
    return [s for s in segments if isinstance(s, ParsedCall)]


def hf_call(call: ParsedCall, call_id: str) -> dict[str, Any]:
    """A call as ``hf_messages.messages_to_hf`` gives it to templates."""
    return {
        "type": "function",
        "function": {"name": call.name, "arguments": call.arguments},
        "id": call_id,
    }


def hf_tools(schemas: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Declared tools as ``hf_messages.tool_declarations_to_hf`` gives them."""
    return [
        {"type": "function", "function": {"name": n, "description": n, "parameters": s}}
        for n, s in schemas.items()
    ]


SCHEMAS: dict[str, dict[str, Any]] = {
    "get_weather": {
        "type": "object",
        "properties": {"location": {"type": "string"}, "unit": {"type": "string"}},
    },
    "get_time": {"type": "object", "properties": {"tz": {"type": "string"}}},
}


def assistant_text(
    template: str, calls: Sequence[ParsedCall], content: str = "", **variables: Any
) -> str:
    """What ``template`` renders for an assistant turn holding ``calls`` (after
    ``content``): the rendered conversation past its generation prompt, with the
    end-of-turn text that follows the turn cut off (``variables["end"]``)."""
    chat = ChatTemplate(template, bos_token="<s>", eos_token="</s>")
    history = [{"role": "user", "content": "What is the weather?"}]
    message = {
        "role": "assistant",
        "content": content,
        "tool_calls": [hf_call(call, f"call{i:05d}") for i, call in enumerate(calls)],
    }
    tools = hf_tools(SCHEMAS)
    prompt = chat.render(history, tools=tools, add_generation_prompt=True, **variables)
    full = chat.render([*history, message], tools=tools, add_generation_prompt=False, **variables)
    assert full.startswith(prompt)
    answer = full[len(prompt) :]
    end = variables.get("end", "")
    assert answer.endswith(end)
    return answer[: len(answer) - len(end)]


def render_with_tool_response(template: str, **variables: Any) -> str:
    """A whole round trip as ``messages_to_hf`` shapes it: user, assistant calls, the
    tool's response message, and the generation prompt after it."""
    chat = ChatTemplate(template, bos_token="<s>", eos_token="</s>")
    call = ParsedCall("get_weather", {"location": "Paris"})
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": "", "tool_calls": [hf_call(call, "abcdefghi")]},
        {
            "role": "tool",
            "content": json.dumps({"temp": 18, "sky": "clear"}),
            "tool_call_id": "abcdefghi",
            "name": "get_weather",
        },
    ]
    return chat.render(messages, tools=hf_tools(SCHEMAS), add_generation_prompt=True, **variables)


# -- every family --------------------------------------------------------------------------

FAMILIES = {
    "hermes": HermesParser,
    "qwen_xml": QwenXmlParser,
    "llama": LlamaJsonParser,
    "pythonic": PythonicParser,
    "mistral": MistralParser,
}

#: Pieces of every family's syntax, to build awkward texts from.
FRAGMENTS = [
    "<tool_call>",
    "</tool_call>",
    "<function=get_weather>",
    "<parameter=location>",
    "</parameter>",
    "</function>",
    "<|python_tag|>",
    "[TOOL_CALLS]",
    "[ARGS]",
    "[CALL_ID]",
    "<|tool_call_start|>",
    "<|tool_call_end|>",
    "```tool_code",
    "```",
    '{"name": "get_weather", "arguments": {"location": "Paris"}}',
    '{"name": "get_time", "parameters": {}}',
    "get_weather(location='Paris')",
    "get_weather",
    "[",
    "]",
    "{",
    "}",
    "(",
    ")",
    '"',
    "'",
    "\\",
    ";",
    "\n",
    " ",
    "<",
    "<|",
    "Zürich 🌤",
    "text",
    "=",
    ",",
    "1",
    "true",
    # Whole calls of each family, so that fuzzed texts hold some.
    '<tool_call>{"name": "get_weather", "arguments": {"location": "Paris"}}</tool_call>',
    "<tool_call>\n<function=get_time>\n<parameter=tz>\nUTC\n</parameter>\n</function>\n"
    "</tool_call>",
    '<|tool_call_start|>[get_weather(location="Paris")]<|tool_call_end|>',
    '```tool_code\nget_time(tz="UTC")\n```',
    '[get_time(tz="UTC"), get_weather()]',
    '[TOOL_CALLS]get_weather[ARGS]{"location": "Paris"}',
    '[TOOL_CALLS] [{"name": "get_time", "arguments": {}}]',
]


def fuzz_texts(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choices(FRAGMENTS, k=rng.randint(0, 14))) for _ in range(count)]


def test_the_table() -> None:
    assert PARSERS == FAMILIES
    for family, cls in FAMILIES.items():
        assert isinstance(make_parser(family, TOOLS), cls)
        assert isinstance(make_parser(family, TOOLS, SCHEMAS), cls)
    with pytest.raises(NotImplementedError, match="No tool-call parser for 'nope'"):
        make_parser("nope", TOOLS)


@pytest.mark.parametrize("family", FAMILIES)
def test_without_declared_tools_everything_is_text_verbatim(family: str) -> None:
    for text in fuzz_texts(250, seed=len(family)):
        assert parse_every_way(lambda: make_parser(family, set()), text) == coalesce([text])


@pytest.mark.parametrize("family", FAMILIES)
def test_any_text_parses_the_same_in_any_chunks(family: str) -> None:
    """Fuzzed mixtures of every family's markers: chunking never changes the result,
    and the text segments never lose or invent characters outside calls."""
    for text in fuzz_texts(250, seed=100 + len(family)):
        segments = parse_every_way(lambda: make_parser(family, TOOLS, SCHEMAS), text)
        if not calls_of(segments):
            assert segments == coalesce([text])
        assert all(not isinstance(s, str) or s for s in segments)


@pytest.mark.parametrize("family", FAMILIES)
def test_plain_answers_pass_through(family: str) -> None:
    for text in ("", "It is sunny.", "  leading space", "a < b; c > d", "é🌤\n\n"):
        assert parse_every_way(lambda: make_parser(family, TOOLS), text) == coalesce([text])


@pytest.mark.parametrize("family", FAMILIES)
def test_plain_text_is_not_held_back(family: str) -> None:
    parser = make_parser(family, TOOLS)
    assert parser.feed("Sure, ") == ["Sure, "]
    assert parser.feed("the weather is fine.") == ["the weather is fine."]
    assert parser.finish() == []


# -- choosing the family -------------------------------------------------------------------

LLAMA_31_SNIPPET = (
    '{%- if message.role == "ipython" or message.role == "tool" %}<|start_header_id|>ipython'
    '{{- \'"parameters": \' }}{{- "<|python_tag|>" }}{{ tools }}'
)


@pytest.mark.parametrize(
    ("model_type", "template", "family"),
    [
        ("qwen2", "", "hermes"),
        ("qwen3_moe", "{{ tools }} <tool_call>", "hermes"),
        ("somethingelse", "... <tool_call>\\n{...} ...", "hermes"),
        ("llama", "{{ tools }} <tool_call>", "hermes"),  # Hermes-3 on Llama 3.1
        ("qwen3_5", "", "qwen_xml"),
        ("qwen3_5_moe", "<tool_call>", "qwen_xml"),
        ("qwen3_moe", "<tool_call>\n<function=NAME>\n<parameter=K>", "qwen_xml"),  # Coder
        ("other", "<tool_call>\n<function=", "qwen_xml"),
        ("llama", LLAMA_31_SNIPPET, "llama"),
        ("llama", '{"name": function name, "parameters": dictionary}', "llama"),
        ("llama3", "<|start_header_id|>ipython<|end_header_id|>", "llama"),
        ("other", "{{- '<|python_tag|>' }}", "llama"),
        ("lfm2", "List of tools: <|tool_list_start|>{{ tools | tojson }}", "pythonic"),
        ("lfm2_moe", "<|tool_call_start|>[f(a=1)]<|tool_call_end|>", "pythonic"),
        ("other", "<|tool_call_start|>", "pythonic"),
        ("gemma3_text", "```tool_code", "pythonic"),
        ("gemma3", "{% if tools %}{{ tools }}{% endif %}", "pythonic"),
        ("mistral", "[AVAILABLE_TOOLS]{{ tools }}[/AVAILABLE_TOOLS][TOOL_CALLS]", "mistral"),
        ("mistral", "{% for tool_call in message.tool_calls %}", "mistral"),
        ("mixtral", "{{ tools }}", "mistral"),
        ("ministral", "{{ tools }}", "mistral"),
        ("other", "[TOOL_CALLS]", "mistral"),
    ],
)
def test_parser_for_model(model_type: str, template: str, family: str) -> None:
    assert parser_for_model(model_type, template) == family


@pytest.mark.parametrize(
    ("model_type", "template", "message"),
    [
        ("gpt2", "{{ messages }}", "No tool-call format is known for model type 'gpt2'"),
        ("", "", "No tool-call format is known for model type ''"),
        ("llama", "[INST] <<SYS>>{{ messages }}", "'llama' model has no tool-call support"),
        ("llama", "{{ tools }}", "'llama' model has no tool-call support"),  # no JSON format
        ("gemma3", "<start_of_turn>{{ messages }}", "'gemma3' model has no tool-call support"),
        ("lfm2", "<|im_start|>{{ messages }}", "'lfm2' model has no tool-call support"),
        ("mistral", "<|user|>{{ messages }}", "'mistral' model has no tool-call support"),
    ],
)
def test_templates_without_tool_support_raise(model_type: str, template: str, message: str) -> None:
    with pytest.raises(NotImplementedError, match=message):
        parser_for_model(model_type, template)


def test_parser_for_the_fixture_and_token_pieces() -> None:
    """The fixture's tokenizer cuts each family's answer into real token pieces."""
    tokenizers = pytest.importorskip("tokenizers")
    if not FIXTURE.is_dir():
        pytest.skip("tiny-qwen2-toolcall not found")
    tokenizer = tokenizers.Tokenizer.from_file(str(FIXTURE / "tokenizer.json"))
    call = ParsedCall("get_weather", {"location": "Paris"})
    answers = {
        "hermes": '<tool_call>\n{"name": "get_weather", "arguments": {"location": "Paris"}}\n'
        "</tool_call>",
        "qwen_xml": "<tool_call>\n<function=get_weather>\n<parameter=location>\nParis\n"
        "</parameter>\n</function>\n</tool_call>",
        "llama": '{"name": "get_weather", "parameters": {"location": "Paris"}}',
        "pythonic": '[get_weather(location="Paris")]',
        "mistral": '[TOOL_CALLS][{"name": "get_weather", "arguments": {"location": "Paris"}}]',
    }
    for family, answer in answers.items():
        ids = tokenizer.encode(answer + "\nDone.", add_special_tokens=False).ids
        pieces, previous = [], ""
        for end in range(1, len(ids) + 1):
            decoded = tokenizer.decode(ids[:end], skip_special_tokens=False)
            pieces.append(decoded[len(previous) :])
            previous = decoded
        assert "".join(pieces) == answer + "\nDone."
        assert stream(make_parser(family, TOOLS), pieces) == [call, "\nDone."], family
