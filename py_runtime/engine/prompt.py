"""The spec algorithm "validate and canonicalize a prompt".

Input is the shim's WebIDL conversion of a ``LanguageModelPrompt``: a string,
or a list of ``{"role", "content", "prefix"}`` where ``content`` is a string or
a list of ``{"type", "value"}`` and each value is a descriptor of the page
object (``{"kind": "string", "string": ...}``, ``{"kind": "tool-call", ...}``,
``{"kind": "image-source", "decoded": true}`` ...). Rules that need the live page
object (IsArray, platform object, JSON serialisability, whether media decodes)
arrive as probe fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .errors import PromptAPIError, type_error
from .messages import Content, Media, Message, ToolCall, ToolResponse, user_text
from .protocol import PromptWire
from .wire import page_json

IMAGE_KINDS = frozenset({"image-source", "blob", "buffer-source"})
AUDIO_KINDS = frozenset({"audio-buffer", "blob", "buffer-source"})


def _data_error(message: str) -> PromptAPIError:
    return PromptAPIError("DataError", message)


def _not_supported(message: str) -> PromptAPIError:
    return PromptAPIError("NotSupportedError", message)


def _tool_call(value: Mapping[str, Any]) -> ToolCall:
    """Step 6.5.7.3-4: arguments must serialise to a JSON object."""
    probe = value["arguments"]
    arguments = None
    if probe is not None:
        if probe["isArray"] or probe["platform"] or probe["json"] is None:
            raise _data_error("Tool call arguments must serialize to a JSON object.")
        arguments = page_json(probe["json"], "Tool call arguments")
        if not isinstance(arguments, dict):  # e.g. a Date, or a toJSON() giving a number
            raise _data_error("Tool call arguments must serialize to a JSON object.")
    return ToolCall(value["callId"], value["name"], arguments)


def _tool_result_item(item: Mapping[str, Any]) -> Any:
    """Step 6.5.8.3 for one result item; returns its JSON value.

    Unlike the spec (step 2, TypeError for a non-string "text" value), Chromium
    and its WPT accept any "text" value that serialises to JSON and give
    DataError otherwise, because Chromium serialises every result value.
    """
    kind, value = item["type"], item["value"]
    if kind in ("image", "audio"):
        raise _not_supported(f"{kind} content in a tool result is not supported.")
    if kind == "text" and value["kind"] == "string":
        return value["string"]
    if kind == "object" and value["kind"] not in ("object", "array", "platform"):
        raise type_error('A tool result of type "object" must be an object.')
    if value["kind"] == "platform" or value["json"] is None:
        raise _data_error("A tool result value cannot be serialized to JSON.")
    return page_json(value["json"], "A tool result value")


def _tool_response(value: Mapping[str, Any]) -> ToolResponse:
    if value["kind"] == "tool-error":
        return ToolResponse(value["callId"], value["name"], error_message=value["errorMessage"])
    result = tuple(_tool_result_item(item) for item in value["result"])
    return ToolResponse(value["callId"], value["name"], result=result)


def _content(role: str, content: Mapping[str, Any], expected_types: list[str]) -> Content:
    """Step 6.5: the checks for one content item, in spec order."""
    kind, value = content["type"], content["value"]
    vkind = value["kind"]
    if kind == "tool-call" and role != "assistant":
        raise type_error("Tool calls must be in an assistant message.")
    if kind == "tool-response" and role != "user":
        raise type_error("Tool responses must be in a user message.")
    if role == "assistant" and kind in ("image", "audio"):
        raise _not_supported(f"Assistant messages cannot contain {kind}.")
    if kind == "text":
        if vkind != "string":
            # Unlike the spec's TypeError (step 6.5.4), Chromium throws a
            # SyntaxError here, and its WPT expects that (crbug.com/409615288).
            raise PromptAPIError("SyntaxError", "Text content must be a string.")
        return Content("text", value["string"])
    if kind not in expected_types:
        raise _not_supported(f'"{kind}" input needs expectedInputs to include it.')
    if kind == "image":
        if vkind not in IMAGE_KINDS:
            raise type_error("Image content must be an ImageBitmapSource or BufferSource.")
        if value.get("decoded") is False:
            raise PromptAPIError("InvalidStateError", "The image could not be decoded.")
        return Content("image", Media(vkind))
    if kind == "audio":
        if vkind not in AUDIO_KINDS:
            raise type_error("Audio content must be an AudioBuffer, BufferSource or Blob.")
        if value.get("decoded") is False:
            raise _data_error("The audio could not be decoded.")
        return Content("audio", Media(vkind))
    if kind == "tool-call":
        if vkind != "tool-call":
            raise type_error("Tool-call content must be a LanguageModelToolCall.")
        return Content("tool-call", _tool_call(value))
    if vkind not in ("tool-success", "tool-error"):
        raise type_error("Tool-response content must be a LanguageModelToolResponse.")
    return Content("tool-response", _tool_response(value))


def _collapse_contiguous_text(contents: list[Content]) -> tuple[Content, ...]:
    """Steps 6.6-6.8: adjacent text parts join with no separator."""
    collapsed: list[Content] = []
    for content in contents:
        if content.type == "text" and collapsed and collapsed[-1].type == "text":
            previous = collapsed.pop()
            content = Content("text", str(previous.value) + str(content.value))
        collapsed.append(content)
    return tuple(collapsed)


def validate_and_canonicalize_prompt(
    prompt: PromptWire, expected_types: list[str], has_appended_input: bool
) -> list[Message]:
    """Return the non-empty longhand list of messages, or raise the spec's error."""
    assert "text" in expected_types
    if isinstance(prompt, str):
        return [user_text(prompt)]
    if not prompt:
        return [user_text("")]
    messages: list[Message] = []
    for index, message in enumerate(prompt):
        role, raw_content = message["role"], message["content"]
        if isinstance(raw_content, str):
            raw_content = [{"type": "text", "value": {"kind": "string", "string": raw_content}}]
        if message.get("prefix", False):
            if role != "assistant":
                raise PromptAPIError("SyntaxError", "Only an assistant message can be a prefix.")
            if index != len(prompt) - 1:
                raise PromptAPIError("SyntaxError", "A prefix message must be the last message.")
        if role == "system" and has_appended_input:
            raise type_error("A system message must come first, before any other input.")
        if not raw_content:
            raw_content = [{"type": "text", "value": {"kind": "string", "string": ""}}]
        contents = [_content(role, c, expected_types) for c in raw_content]
        messages.append(
            Message(role, _collapse_contiguous_text(contents), bool(message.get("prefix", False)))
        )
        has_appended_input = True
    if not messages:
        raise PromptAPIError("SyntaxError", "The prompt has no messages.")
    return messages
