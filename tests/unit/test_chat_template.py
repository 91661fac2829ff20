"""Chat templates: byte-identical to transformers' apply_chat_template, and the
Prompt API -> Hugging Face message mapping.

The reference renders need ``transformers`` (no torch) and the tiny-qwen2-toolcall
fixture in ``/work/shared/fixtures``; those tests are skipped without them.
"""

from __future__ import annotations

import datetime
import json
import os
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("jinja2")

from py_runtime.engine.messages import Content, Media, Message, ToolCall, ToolResponse  # noqa: E402
from py_runtime.engine.options import ToolDeclaration  # noqa: E402
from py_runtime.models.chat_template import ChatTemplate, ChatTemplateError  # noqa: E402
from py_runtime.models.hf_messages import (  # noqa: E402
    messages_to_hf,
    tool_declarations_to_hf,
    tool_response_content,
)

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "tiny-qwen2-toolcall"
needs_fixture = pytest.mark.skipif(not FIXTURE.is_dir(), reason="tiny-qwen2-toolcall not found")

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather for a location",
        "parameters": {
            "type": "object",
            "properties": {"location": {"type": "string", "description": "City name"}},
            "required": ["location"],
        },
    },
}
WEATHER_JSON = (
    '{"type": "function", "function": {"name": "get_weather", "description": "Get the current '
    'weather for a location", "parameters": {"type": "object", "properties": {"location": '
    '{"type": "string", "description": "City name"}}, "required": ["location"]}}}'
)
TIME = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "Die aktuelle Uhrzeit — für eine Zeitzone",
        "parameters": {"type": "object", "properties": {"tz": {"type": "string"}}},
    },
}
WEATHER_DECLARATION = ToolDeclaration(
    "get_weather",
    "Get the current weather for a location",
    {
        "type": "object",
        "properties": {"location": {"type": "string", "description": "City name"}},
        "required": ["location"],
    },
)

CALL_TEXT = '<tool_call>\n{"name": "get_weather", "arguments": {"location": "Paris"}}\n</tool_call>'
RESULT_TEXT = '{"temperature": 18, "condition": "sunny"}'


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant(text: str, *calls: tuple[str, dict[str, Any], str]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = [
            {"type": "function", "function": {"name": name, "arguments": args}, "id": call_id}
            for name, args, call_id in calls
        ]
    return message


def tool(content: str, call_id: str, name: str) -> dict[str, Any]:
    return {"role": "tool", "content": content, "tool_call_id": call_id, "name": name}


PARIS = user("What is the weather like in Paris today?")
PARIS_CALL = assistant("", ("get_weather", {"location": "Paris"}, "call_1"))
PARIS_RESULT = tool(RESULT_TEXT, "call_1", "get_weather")

CONVERSATIONS: dict[str, list[dict[str, Any]]] = {
    "paris": [PARIS],
    "paris-called": [PARIS, PARIS_CALL],
    "paris-answered": [PARIS, PARIS_CALL, PARIS_RESULT],
    "paris-done": [
        PARIS,
        PARIS_CALL,
        PARIS_RESULT,
        assistant("It is sunny and 18 degrees in Paris."),
    ],
    "hello": [user("Hello!")],
    "capital": [user("What is the capital of France?")],
    "system": [
        {"role": "system", "content": "You answer in one word."},
        user("Capital of France?"),
    ],
    "multi-turn": [
        {"role": "system", "content": "Be brief."},
        user("Hello!"),
        assistant("Hello! How can I help you today?"),
        user("What is the capital of France?"),
        assistant("The capital of France is Paris."),
        user("And of Italy?"),
    ],
    "two-calls": [
        user("Weather in Paris and Rome?"),
        assistant(
            "Let me check.",
            ("get_weather", {"location": "Paris"}, "a"),
            ("get_weather", {"location": "Rome"}, "b"),
        ),
        tool(RESULT_TEXT, "a", "get_weather"),
        tool('{"temperature": 24, "condition": "cloudy"}', "b", "get_weather"),
    ],
    "tool-error": [
        PARIS,
        PARIS_CALL,
        tool('{"error": "The weather service is down."}', "call_1", "get_weather"),
    ],
    "non-ascii": [
        {"role": "system", "content": "Tu réponds en français. 你好 🌤"},
        user("Quel temps fait-il à Zürich? <b>&'\"</b>"),
        assistant("", ("get_weather", {"location": "Zürich", "note": "°C — «»"}, "z")),
        tool('{"température": 18, "ciel": "ensoleillé"}', "z", "get_weather"),
    ],
    "tool-then-user": [
        PARIS,
        PARIS_CALL,
        PARIS_RESULT,
        user("Thanks! And tomorrow?"),
    ],
}
TOOLSETS: dict[str, list[dict[str, Any]] | None] = {
    "no-tools": None,
    "empty-tools": [],
    "weather": [WEATHER],
    "weather+time": [WEATHER, TIME],
}


@pytest.fixture(scope="module")
def config() -> dict[str, Any]:
    if not FIXTURE.is_dir():
        pytest.skip("tiny-qwen2-toolcall not found")
    return json.loads((FIXTURE / "tokenizer_config.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def qwen(config: dict[str, Any]) -> ChatTemplate:
    return ChatTemplate.from_tokenizer_config(config)


@pytest.fixture(scope="module")
def hf() -> Any:
    """The fixture's tokenizer, loaded by transformers from the shared folder, offline."""
    if not FIXTURE.is_dir():
        pytest.skip("tiny-qwen2-toolcall not found")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    transformers = pytest.importorskip("transformers")
    return transformers.AutoTokenizer.from_pretrained(str(FIXTURE))


def hf_render(hf: Any, messages: list[dict[str, Any]], **kwargs: Any) -> str:
    kwargs.setdefault("add_generation_prompt", True)
    rendered = hf.apply_chat_template(messages, tokenize=False, **kwargs)
    assert isinstance(rendered, str)
    return rendered


# -- byte-identical renders of the fixture's template ------------------------------


@pytest.mark.parametrize("add_generation_prompt", [True, False])
@pytest.mark.parametrize("tools", list(TOOLSETS), ids=list(TOOLSETS))
@pytest.mark.parametrize("name", list(CONVERSATIONS), ids=list(CONVERSATIONS))
def test_render_matches_transformers(
    qwen: ChatTemplate, hf: Any, name: str, tools: str, add_generation_prompt: bool
) -> None:
    messages, toolset = CONVERSATIONS[name], TOOLSETS[tools]
    expected = hf_render(hf, messages, tools=toolset, add_generation_prompt=add_generation_prompt)
    assert qwen.render(messages, toolset, add_generation_prompt) == expected


def test_readme_prompt_shapes(qwen: ChatTemplate) -> None:
    prompt = qwen.render(CONVERSATIONS["paris-answered"], [WEATHER])
    assert prompt.startswith(
        "<|im_start|>system\nYou are a helpful assistant.\n\n# Tools\n\n"
        "You may call one or more functions to assist with the user query.\n\n"
        "You are provided with function signatures within <tools></tools> XML tags:\n"
        f"<tools>\n{WEATHER_JSON}\n</tools>\n\n"
    )
    assert prompt.endswith(
        "<|im_start|>user\nWhat is the weather like in Paris today?<|im_end|>\n"
        f"<|im_start|>assistant\n{CALL_TEXT}<|im_end|>\n"
        f"<|im_start|>user\n<tool_response>\n{RESULT_TEXT}\n</tool_response><|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    assert qwen.render([user("Hello!")]) == (
        "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
        "<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n"
    )


def test_default_add_generation_prompt_is_true(qwen: ChatTemplate) -> None:
    assert qwen.render([user("Hi")]).endswith("<|im_start|>assistant\n")
    assert qwen.render([user("Hi")], add_generation_prompt=False).endswith("Hi<|im_end|>\n")


def test_render_does_not_change_the_messages(qwen: ChatTemplate) -> None:
    messages = [PARIS, {"role": "assistant", "content": "The", "tool_calls": None}]
    before = json.dumps(messages)
    qwen.render(messages, continue_final_message=True, add_generation_prompt=False)
    assert json.dumps(messages) == before


@pytest.mark.parametrize("final", ["The capital", "The capital ", "Ça va"])
def test_continue_final_message_matches_transformers(
    qwen: ChatTemplate, hf: Any, final: str
) -> None:
    messages = [user("What is the capital of France?"), assistant(final)]
    expected = hf_render(hf, messages, continue_final_message=True, add_generation_prompt=False)
    assert qwen.render(messages, continue_final_message=True, add_generation_prompt=False) == (
        expected
    )
    assert expected.endswith(f"<|im_start|>assistant\n{final}")


def test_continue_final_message_needs_no_generation_prompt(qwen: ChatTemplate) -> None:
    with pytest.raises(ValueError, match="not compatible"):
        qwen.render([user("Hi")], continue_final_message=True)


def test_empty_conversation_is_an_error(qwen: ChatTemplate) -> None:
    with pytest.raises(ValueError, match="empty"):
        qwen.render([])


# -- the environment, checked with small templates against transformers --------------

ENVIRONMENT_TEMPLATES = {
    "tojson": (
        "{% for m in messages %}{{ m | tojson }}|{{ m | tojson(indent=2) }}|"
        "{{ m | tojson(separators=(',', ':')) }}|{{ m | tojson(ensure_ascii=True) }}|"
        "{{ m | tojson(sort_keys=True) }}|{{ m.content | default(none) | tojson }}\n{% endfor %}"
    ),
    "tools-none-vs-empty": (
        "{{ tools is none }} {{ tools is defined }} {% if tools is not none %}"
        "{{ tools | length }}{% endif %} {{ documents is none }}"
    ),
    "special-tokens": "[{{ bos_token }}][{{ eos_token }}][{{ pad_token }}][{{ unk_token }}]",
    "trim-and-lstrip": (
        "{% for message in messages %}\n"
        "    {% if message.role == 'user' %}\n"
        "        U: {{ message.content }}\n"
        "    {% else %}\n"
        "        A: {{ message.content }}\n"
        "    {% endif %}\n"
        "{% endfor %}\n"
        "{% if add_generation_prompt %}\n"
        "A:\n"
        "{% endif %}\n"
    ),
    "loopcontrols": (
        "{% for m in messages %}{% if loop.index > 2 %}{% break %}{% endif %}"
        "{% if m.role == 'assistant' %}{% continue %}{% endif %}{{ m.content }};{% endfor %}"
    ),
    "namespace-and-dict": (
        "{% set ns = namespace(n=0, last='') %}{% for m in messages %}{% set ns.n = ns.n + 1 %}"
        "{% set ns.last = m.role %}{% endfor %}{{ ns.n }} {{ ns.last }} "
        "{{ dict(a=1, b=[2]) | tojson }} {{ dict.fromkeys(['x'], 0) | tojson }}"
    ),
    "generation-tag": (
        "{% for m in messages %}{% if m.role == 'assistant' %}{% generation %}"
        "<{{ m.content }}>{% endgeneration %}{% else %}{{ m.content }}{% endif %}{% endfor %}"
    ),
    "none-keys-dropped": (
        "{% for m in messages %}{{ m.tool_calls is defined }},{{ m.content is defined }};"
        "{% endfor %}"
    ),
    "reasoning-aliases": (
        "{% for m in messages %}{{ m.reasoning_content }}|{{ m.thinking }}|{{ m.reasoning }};"
        "{% endfor %}"
    ),
    "extra-variables": "{{ enable_thinking }} {{ eos_token }} {{ custom | tojson }}",
    "dict-items-order": (
        "{% for k, v in messages[0].content.items() %}{{ k }}={{ v }},{% endfor %}"
        "{{ messages[0].content | tojson }}"
    ),
}
ENVIRONMENT_MESSAGES = [
    {"role": "system", "content": "Grüße <b>&amp;</b> 'quote' \"dq\" 🌤"},
    {"role": "user", "content": "Hi", "tool_calls": None, "reasoning": None},
    {"role": "assistant", "content": "Hello", "reasoning": "thought"},
    {"role": "assistant", "content": None, "thinking": "t2", "reasoning_content": "rc"},
    {"role": "user", "content": "Bye"},
]


@pytest.mark.parametrize("tools", [None, [], [WEATHER]], ids=["none", "empty", "weather"])
@pytest.mark.parametrize("name", list(ENVIRONMENT_TEMPLATES), ids=list(ENVIRONMENT_TEMPLATES))
def test_environment_matches_transformers(hf: Any, name: str, tools: Any) -> None:
    source = ENVIRONMENT_TEMPLATES[name]
    messages = ENVIRONMENT_MESSAGES
    if name == "dict-items-order":
        messages = [{"role": "user", "content": {"z": 1, "a": 2, "m": [3, "é"]}}]
    extra = {"enable_thinking": False, "custom": {"b": 1, "a": "ü"}, "eos_token": "<eos!>"}
    kwargs = extra if name == "extra-variables" else {}
    for add_generation_prompt in (True, False):
        expected = hf_render(
            hf,
            messages,
            tools=tools,
            chat_template=source,
            add_generation_prompt=add_generation_prompt,
            **kwargs,
        )
        ours = ChatTemplate(source, eos_token="<|im_end|>", pad_token="<|endoftext|>")
        assert ours.render(messages, tools, add_generation_prompt, **kwargs) == expected


def test_tools_none_and_empty_differ() -> None:
    template = ChatTemplate("{{ tools is none }}/{{ tools | length if tools is not none }}")
    assert template.render([user("x")]) == "True/"
    assert template.render([user("x")], tools=[]) == "False/0"
    assert template.render([user("x")], tools=[WEATHER]) == "False/1"


def test_tojson_does_not_escape_html_and_keeps_order() -> None:
    template = ChatTemplate("{{ messages[0].content | tojson }}")
    assert template.render([{"role": "user", "content": {"z": "<&>'", "a": "é"}}]) == (
        '{"z": "<&>\'", "a": "é"}'
    )


def test_raise_exception_is_a_clear_error(hf: Any) -> None:
    source = (
        "{% if messages[0].role != 'system' %}{{ raise_exception('System first!') }}{% endif %}"
    )
    with pytest.raises(Exception, match="System first!"):
        hf_render(hf, [user("x")], chat_template=source)
    with pytest.raises(ChatTemplateError, match="^System first!$"):
        ChatTemplate(source).render([user("x")])


def test_strftime_now() -> None:
    template = ChatTemplate("{{ strftime_now('%Y') }}")
    assert template.render([user("x")]) in {
        str(datetime.datetime.now().year),
        str(datetime.datetime.now().year - 1),  # around midnight on New Year's Eve
    }


def test_bad_templates_raise_chat_template_errors() -> None:
    with pytest.raises(ChatTemplateError, match="does not compile"):
        ChatTemplate("{% if %}").render([user("x")])
    with pytest.raises(ChatTemplateError, match="failed"):  # the sandbox refuses this
        ChatTemplate("{{ messages.__class__.__mro__ }}").render([user("x")])
    with pytest.raises(ChatTemplateError):
        ChatTemplate("{% set ns = namespace(_x=1) %}").render([user("x")])


def test_special_tokens_as_strings_dicts_or_none() -> None:
    source = "[{{ bos_token }}][{{ eos_token }}][{{ bos_token is defined }}]"
    template = ChatTemplate(
        source, bos_token={"__type": "AddedToken", "content": "<s>"}, eos_token="</s>"
    )
    assert template.special_tokens == {"bos_token": "<s>", "eos_token": "</s>"}
    assert template.render([user("x")]) == "[<s>][</s>][True]"
    assert ChatTemplate(source, bos_token=None).render([user("x")]) == "[][][False]"


def test_from_tokenizer_config(config: dict[str, Any], qwen: ChatTemplate) -> None:
    assert qwen.template == config["chat_template"]
    assert qwen.special_tokens == {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"}
    # A chat_template.jinja file wins over the config's template.
    jinja = ChatTemplate.from_tokenizer_config(config, "{{ eos_token }}!")
    assert jinja.render([user("x")]) == "<|im_end|>!"
    with pytest.raises(ValueError, match="no chat_template"):
        ChatTemplate.from_tokenizer_config({"eos_token": "</s>"})


def test_named_templates_choose_tool_use_when_tools_are_given() -> None:
    config = {
        "chat_template": [
            {"name": "default", "template": "default"},
            {"name": "tool_use", "template": "tools:{{ tools | length }}"},
        ]
    }
    template = ChatTemplate.from_tokenizer_config(config)
    assert template.render([user("x")]) == "default"
    assert template.render([user("x")], tools=[]) == "tools:0"
    with pytest.raises(ChatTemplateError, match="default"):
        ChatTemplate({"tool_use": "x"}).render([user("x")])


def test_jinja2_is_imported_lazily() -> None:
    import subprocess
    import sys

    if sys.platform == "emscripten":
        pytest.skip("no subprocesses in Pyodide")
    code = (
        "import sys, py_runtime.models.chat_template, py_runtime.models.hf_messages; "
        "print('jinja2' in sys.modules)"
    )
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


# -- Prompt API messages -> Hugging Face chat format ---------------------------------


def text(s: str) -> Content:
    return Content("text", s)


def call(call_id: str, name: str, arguments: dict[str, Any] | None) -> Content:
    return Content("tool-call", ToolCall(call_id, name, arguments))


def success(call_id: str, name: str, *values: Any) -> Content:
    return Content("tool-response", ToolResponse(call_id, name, result=values))


def failure(call_id: str, name: str, message: str) -> Content:
    return Content("tool-response", ToolResponse(call_id, name, error_message=message))


PROMPT_API_PARIS = [
    Message("user", (text("What is the weather like in Paris today?"),)),
    Message("assistant", (call("call_1", "get_weather", {"location": "Paris"}),)),
    Message("user", (success("call_1", "get_weather", {"temperature": 18, "condition": "sunny"}),)),
]


def test_tool_declarations_to_hf() -> None:
    hf_tools = tool_declarations_to_hf([WEATHER_DECLARATION])
    assert hf_tools == [WEATHER]
    assert json.dumps(hf_tools[0], ensure_ascii=False) == WEATHER_JSON  # key order too
    assert tool_declarations_to_hf([]) == []


def test_messages_to_hf_tool_round_trip() -> None:
    assert messages_to_hf(PROMPT_API_PARIS) == [PARIS, PARIS_CALL, PARIS_RESULT]
    assert list(messages_to_hf(PROMPT_API_PARIS)[1]["tool_calls"][0]) == ["type", "function", "id"]
    assert list(messages_to_hf(PROMPT_API_PARIS)[2]) == ["role", "content", "tool_call_id", "name"]


def test_prompt_api_messages_render_as_the_readme_says(qwen: ChatTemplate, hf: Any) -> None:
    tools = tool_declarations_to_hf([WEATHER_DECLARATION])
    prompt = qwen.render(messages_to_hf(PROMPT_API_PARIS), tools)
    assert prompt == hf_render(hf, [PARIS, PARIS_CALL, PARIS_RESULT], tools=[WEATHER])
    assert f"<|im_start|>assistant\n{CALL_TEXT}<|im_end|>\n" in prompt
    assert f"<|im_start|>user\n<tool_response>\n{RESULT_TEXT}\n</tool_response><|im_end|>\n" in (
        prompt
    )
    assert f"<tools>\n{WEATHER_JSON}\n</tools>" in prompt


def test_messages_to_hf_system_multi_turn_and_text() -> None:
    messages = [
        Message("system", (text("Be brief."),)),
        Message("user", (text("Hello"), text("!"))),
        Message("assistant", (text("Hi."),)),
        Message("user", ()),
    ]
    assert messages_to_hf(messages) == [
        {"role": "system", "content": "Be brief."},
        user("Hello!"),
        assistant("Hi."),
        user(""),
    ]


def test_messages_to_hf_two_calls_two_responses_and_an_error(qwen: ChatTemplate, hf: Any) -> None:
    messages = [
        Message("user", (text("Weather in Paris and Rome?"),)),
        Message(
            "assistant",
            (
                text("Let me check."),
                call("a", "get_weather", {"location": "Paris"}),
                call("b", "get_weather", None),
            ),
        ),
        Message(
            "user",
            (
                success("a", "get_weather", {"temperature": 18, "condition": "sunny"}),
                failure("b", "get_weather", "Unknown city «Rome»"),
            ),
        ),
    ]
    hf_messages = messages_to_hf(messages)
    assert hf_messages == [
        user("Weather in Paris and Rome?"),
        assistant(
            "Let me check.",
            ("get_weather", {"location": "Paris"}, "a"),
            ("get_weather", {}, "b"),
        ),
        tool(RESULT_TEXT, "a", "get_weather"),
        tool('{"error": "Unknown city «Rome»"}', "b", "get_weather"),
    ]
    prompt = qwen.render(hf_messages, [WEATHER])
    assert prompt == hf_render(hf, hf_messages, tools=[WEATHER])
    assert prompt.endswith(
        "<|im_start|>assistant\nLet me check.\n"
        '<tool_call>\n{"name": "get_weather", "arguments": {"location": "Paris"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "get_weather", "arguments": {}}\n</tool_call><|im_end|>\n'
        f"<|im_start|>user\n<tool_response>\n{RESULT_TEXT}\n</tool_response>\n"
        '<tool_response>\n{"error": "Unknown city «Rome»"}\n</tool_response><|im_end|>\n'
        "<|im_start|>assistant\n"
    )


def test_messages_to_hf_keeps_user_text_in_its_position() -> None:
    message = Message(
        "user",
        (
            text("Before."),
            success("a", "f", "ok"),
            success("b", "g", 1, "two", {"three": 3}),
            text("After "),
            text("all."),
        ),
    )
    assert messages_to_hf([message]) == [
        user("Before."),
        tool("ok", "a", "f"),
        tool('[1, "two", {"three": 3}]', "b", "g"),
        user("After all."),
    ]


def test_tool_response_content() -> None:
    assert tool_response_content(ToolResponse("a", "f", result=({"é": [1, 2]},))) == (
        '{"é": [1, 2]}'
    )
    assert tool_response_content(ToolResponse("a", "f", result=("plain text",))) == "plain text"
    assert tool_response_content(ToolResponse("a", "f", result=(18,))) == "18"
    assert tool_response_content(ToolResponse("a", "f", result=())) == "[]"
    assert tool_response_content(ToolResponse("a", "f", error_message="down")) == (
        '{"error": "down"}'
    )


def test_messages_to_hf_assistant_text_with_calls_and_prefix() -> None:
    messages = [
        Message("assistant", (call("c", "f", {"x": 1}), text("done"))),
        Message("assistant", (text("The"),), prefix=True),
    ]
    assert messages_to_hf(messages) == [
        assistant("done", ("f", {"x": 1}, "c")),
        assistant("The"),
    ]


@pytest.mark.parametrize("kind", ["image", "audio"])
def test_messages_to_hf_rejects_media(kind: str) -> None:
    message = Message("user", (text("Look:"), Content(kind, Media("blob"))))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=f"{kind.capitalize()} content is not supported"):
        messages_to_hf([message])
