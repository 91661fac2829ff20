"""Tools for models whose chat template has no tool format (SmolLM2's ignores ``tools``).

The runtime then writes the declarations into the system prompt itself, in this
documented format (after the page's own system prompt, if it has one)::

    You are a helpful assistant. You can call these tools:
    {"name": "get_weather", "description": "...", "parameters": {...}}
    When a tool can answer the question, reply with only
    <tool_call>{"name": NAME, "arguments": ARGS}</tool_call>. Otherwise answer directly.

(one JSON object a line, the rule on one line). The model's calls are read in that
syntax (the Hermes format, ``tool_calls.hermes``); calls in the history are written
back in it, and tool responses become user turns holding
``<tool_response>{"name": NAME, "content": RESULT}</tool_response>``.

Measured on SmolLM2-135M-Instruct (docs/models.md): with
the declarations alone it never calls; one worked example in ``initialPrompts`` (a user
question and the assistant's call) makes it call for most questions that need one.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

INTRO = "You are a helpful assistant. You can call these tools:"
RULE = (
    'When a tool can answer the question, reply with only <tool_call>{"name": NAME, '
    '"arguments": ARGS}</tool_call>. Otherwise answer directly.'
)


def tools_prompt(tools: Sequence[dict[str, Any]]) -> str:
    """The system prompt's tool section, from Hugging Face tool dicts."""
    lines = [json.dumps(tool["function"], ensure_ascii=False) for tool in tools]
    return "\n".join([INTRO, *lines, RULE])


def _call_text(call: dict[str, Any]) -> str:
    function = call["function"]
    payload = {"name": function["name"], "arguments": function["arguments"]}
    return f"<tool_call>{json.dumps(payload, ensure_ascii=False)}</tool_call>"


def _response_text(message: dict[str, Any]) -> str:
    content: Any = message["content"]
    try:
        content = json.loads(content)  # JSON results as JSON, text as a string
    except ValueError:
        pass
    payload = {"name": message.get("name"), "content": content}
    return f"<tool_response>{json.dumps(payload, ensure_ascii=False)}</tool_response>"


def with_prompted_tools(
    messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Hugging Face chat messages with the tools in the system prompt and every tool
    call and response as plain text, for a template that knows neither."""
    section = tools_prompt(tools)
    out: list[dict[str, Any]] = []
    if messages and messages[0]["role"] == "system":
        out.append({"role": "system", "content": f"{messages[0]['content']}\n\n{section}"})
        messages = messages[1:]
    else:
        out.append({"role": "system", "content": section})
    for message in messages:
        if message["role"] == "assistant" and message.get("tool_calls"):
            text = message.get("content") or ""
            calls = "".join(_call_text(call) for call in message["tool_calls"])
            out.append({"role": "assistant", "content": text + calls})
        elif message["role"] == "tool":
            text = _response_text(message)
            previous = out[-1]
            if previous["role"] == "user" and previous.get("_responses"):
                previous["content"] += "\n" + text
            else:
                out.append({"role": "user", "content": text, "_responses": True})
        else:
            out.append(dict(message))
    return [{k: v for k, v in m.items() if k != "_responses"} for m in out]
