"""Tools for a template without a tool format: the documented system-prompt section,
calls and responses as text, on SmolLM2's own (ChatML) template."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("jinja2")

from py_runtime.models.chat_template import ChatTemplate  # noqa: E402
from py_runtime.models.prompted_tools import RULE, tools_prompt, with_prompted_tools  # noqa: E402
from py_runtime.tool_calls import HermesParser  # noqa: E402

#: SmolLM2-135M-Instruct's chat template (it ignores ``tools``).
SMOLLM2 = (
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\\nYou are a helpful AI assistant named SmolLM, trained by "
    "Hugging Face<|im_end|>\\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\\n' + "
    "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather for a location",
        "parameters": {"type": "object", "properties": {"location": {"type": "string"}}},
    },
}
CALL = {"type": "function", "function": {"name": "get_weather", "arguments": {"location": "Rome"}}}


def test_the_declarations_go_into_the_system_prompt_one_json_object_a_line():
    section = tools_prompt([WEATHER]).split("\n")
    assert section[0] == "You are a helpful assistant. You can call these tools:"
    assert json.loads(section[1]) == WEATHER["function"]
    assert section[2] == RULE


def test_a_page_system_prompt_comes_first_then_the_tools():
    chat = with_prompted_tools(
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}], [WEATHER]
    )
    assert chat[0] == {"role": "system", "content": "Be brief.\n\n" + tools_prompt([WEATHER])}
    assert chat[1] == {"role": "user", "content": "Hi"}


def test_calls_and_responses_become_text_the_template_renders():
    chat = [
        {"role": "user", "content": "What is the weather in Rome?"},
        {"role": "assistant", "content": "", "tool_calls": [CALL]},
        {
            "role": "tool",
            "content": '{"temperature": 20}',
            "tool_call_id": "c",
            "name": "get_weather",
        },
        {"role": "tool", "content": "windy", "tool_call_id": "d", "name": "get_weather"},
    ]
    rendered = ChatTemplate(SMOLLM2).render(with_prompted_tools(chat, [WEATHER]), tools=None)
    assert rendered.startswith("<|im_start|>system\nYou are a helpful assistant. You can call")
    assert "SmolLM" not in rendered  # the tools' system prompt replaces the default one
    call = '<tool_call>{"name": "get_weather", "arguments": {"location": "Rome"}}</tool_call>'
    assert f"<|im_start|>assistant\n{call}<|im_end|>" in rendered
    responses = (
        '<tool_response>{"name": "get_weather", "content": {"temperature": 20}}</tool_response>\n'
        '<tool_response>{"name": "get_weather", "content": "windy"}</tool_response>'
    )
    assert f"<|im_start|>user\n{responses}<|im_end|>" in rendered
    # What the model is shown is what the parser reads back.
    (parsed,) = HermesParser({"get_weather"}).feed(call)
    assert (parsed.name, parsed.arguments) == ("get_weather", {"location": "Rome"})
