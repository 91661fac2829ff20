"""The Prompt API -> Hugging Face chat-message mapping of the causal-LM adapter.

``messages_to_hf`` and ``tool_declarations_to_hf`` turn the engine's canonical
messages and declared tools into the dicts Hugging Face chat templates read
(rendered by ``chat_template.ChatTemplate``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..engine.messages import Message, ToolCall, ToolResponse

if TYPE_CHECKING:
    from ..engine.options import ToolDeclaration

__all__ = ["messages_to_hf", "tool_declarations_to_hf", "tool_response_content"]


def tool_declarations_to_hf(tools: Sequence[ToolDeclaration]) -> list[dict[str, Any]]:
    """Declared tools as templates take them, in this key order (it shows in the prompt):
    ``{"type": "function", "function": {"name", "description", "parameters"}}``,
    with the tool's ``inputSchema`` as ``parameters``."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.input_schema,
            },
        }
        for tool in tools
    ]


def tool_response_content(response: ToolResponse) -> str:
    """The ``content`` of a ``tool`` message for one tool response.

    A success with one value: a string value as it is (text results are text, not
    JSON-quoted), any other value as JSON; several values (or none): the JSON array
    of them. An error: ``{"error": message}`` as JSON. JSON is
    ``json.dumps(..., ensure_ascii=False)``, i.e. the separators the templates' own
    ``tojson`` uses.
    """
    if response.result is None:
        return json.dumps({"error": response.error_message}, ensure_ascii=False)
    values = list(response.result)
    if len(values) == 1:
        value = values[0]
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return json.dumps(values, ensure_ascii=False)


def _tool_call_to_hf(call: ToolCall) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": call.name, "arguments": dict(call.arguments or {})},
        "id": call.call_id,
    }


def messages_to_hf(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Prompt API canonical messages as Hugging Face chat messages.

    - system: ``{"role": "system", "content": text}``.
    - user: text becomes ``{"role": "user", "content": text}``; each tool response
      becomes its own ``{"role": "tool", "content": ..., "tool_call_id": callId,
      "name": name}`` (see ``tool_response_content``), in content order, so text
      around responses stays a user message in its position. A user message with
      no content at all is a user message with empty text.
    - assistant: ``{"role": "assistant", "content": text}``; with tool calls, also
      ``"tool_calls": [{"type": "function", "function": {"name", "arguments"},
      "id": callId}]`` and ``content`` is the message's text or "" (templates
      render it before the calls, so text after a call moves before it). Absent
      arguments read as ``{}``. Qwen2.5/Qwen3 read ``function.name`` and
      ``function.arguments`` (a dict, rendered with ``tojson``).
    - Messages are not merged: consecutive ``tool`` messages are what templates
      group into one turn (Qwen: one user turn of ``<tool_response>`` blocks), and
      consecutive user messages stay separate turns, as the session had them.
    - ``prefix`` is not mapped: render with ``continue_final_message=True`` (and
      ``add_generation_prompt=False``) when the last message is a prefix.
    - Image and audio contents raise ``ValueError``: the models are text-only.
    """
    hf: list[dict[str, Any]] = []
    for message in messages:
        for content in message.content:
            if content.type in ("image", "audio"):
                raise ValueError(
                    f"{content.type.capitalize()} content is not supported: the model is text-only."
                )
        if message.role == "assistant":
            hf.append(_assistant_to_hf(message))
        elif message.role == "user":
            hf.extend(_user_to_hf(message))
        else:
            if any(c.type != "text" for c in message.content):
                raise ValueError("A system message can only hold text.")
            hf.append({"role": message.role, "content": message.text()})
    return hf


def _assistant_to_hf(message: Message) -> dict[str, Any]:
    calls = [c.value for c in message.content if isinstance(c.value, ToolCall)]
    if not calls:
        return {"role": "assistant", "content": message.text()}
    return {
        "role": "assistant",
        "content": message.text(),
        "tool_calls": [_tool_call_to_hf(call) for call in calls],
    }


def _user_to_hf(message: Message) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    text: list[str] | None = None  # the run of text contents being collected
    for content in message.content:
        if isinstance(content.value, ToolResponse):
            if text is not None:
                out.append({"role": "user", "content": "".join(text)})
                text = None
            response = content.value
            out.append(
                {
                    "role": "tool",
                    "content": tool_response_content(response),
                    "tool_call_id": response.call_id,
                    "name": response.name,
                }
            )
        elif isinstance(content.value, str):
            text = [*(text or []), content.value]
        else:
            raise ValueError(f"{content.type!r} content cannot be in a user message.")
    if text is not None or not out:
        out.append({"role": "user", "content": "".join(text or [])})
    return out
