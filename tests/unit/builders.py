"""Builders for the plain data the JS shim hands the engine.

They mirror ``web/src/convert.js``, ``web/src/tools.js`` and ``web/src/webidl.js``:
message values are descriptors (``{"kind": "string", "string": ...}``,
``{"kind": "tool-call", ...}``), tool schemas and tool-call arguments arrive as
probes, languages as ``{"tag", "canonical"}``. (They live here rather than in
conftest.py so that test modules can import them by a name no other conftest uses.)
"""

from __future__ import annotations

import json
from typing import Any

# -- message content ---------------------------------------------------------


def string(s: str) -> dict[str, Any]:
    """A DOMString message value."""
    return {"kind": "string", "string": s}


def text(s: str) -> dict[str, Any]:
    return {"type": "text", "value": string(s)}


def part(type_: str, value: dict[str, Any]) -> dict[str, Any]:
    """A ``LanguageModelMessageContent`` with any value descriptor."""
    return {"type": type_, "value": value}


def image(kind: str = "image-source") -> dict[str, Any]:
    return part("image", {"kind": kind})


def audio(kind: str = "audio-buffer") -> dict[str, Any]:
    return part("audio", {"kind": kind})


def message(role: str, content: str | list[dict[str, Any]], prefix: bool = False) -> dict:
    return {"role": role, "content": content, "prefix": prefix}


def user(content: str | list[dict[str, Any]]) -> dict[str, Any]:
    return message("user", content)


def assistant(content: str | list[dict[str, Any]], prefix: bool = False) -> dict[str, Any]:
    return message("assistant", content, prefix)


def system(content: str | list[dict[str, Any]]) -> dict[str, Any]:
    return message("system", content)


# -- page values as describeAny() and the tool classes describe them -------------


def any_value(value: Any) -> dict[str, Any]:
    """``describeAny(value)`` for a plain JSON-able Python value."""
    if isinstance(value, str):
        return string(value)
    if isinstance(value, list):
        kind = "array"
    elif isinstance(value, dict):
        kind = "object"
    else:
        kind = "primitive"
    return {"kind": kind, "json": json.dumps(value, separators=(",", ":"))}


#: ``describeAny`` of a platform object (e.g. a Blob) and of an unserialisable one.
PLATFORM = {"kind": "platform", "json": None}
UNSERIALISABLE_OBJECT = {"kind": "object", "json": None}  # circular, a function inside, ...


def args_probe(
    arguments: Any = None, *, is_array: bool = False, platform: bool = False, json_text: Any = ...
) -> dict[str, Any]:
    """The probe ``LanguageModelToolCall`` records for its ``arguments`` object."""
    if json_text is ...:
        json_text = json.dumps(arguments, separators=(",", ":"))
    return {"isArray": is_array, "platform": platform, "json": json_text}


def tool_call_value(
    call_id: str = "call_1", name: str = "getWeather", arguments: Any = ...
) -> dict[str, Any]:
    """A ``LanguageModelToolCall`` descriptor; ``arguments=None`` is a call without them."""
    if arguments is ...:
        arguments = args_probe({"city": "Paris"})
    return {"kind": "tool-call", "callId": call_id, "name": name, "arguments": arguments}


def tool_success_value(
    call_id: str = "call_1", name: str = "getWeather", result: list | None = None
) -> dict[str, Any]:
    if result is None:
        result = [result_item("text", string("sunny"))]
    return {"kind": "tool-success", "callId": call_id, "name": name, "result": result}


def tool_error_value(
    call_id: str = "call_1", name: str = "getWeather", error_message: str = "boom"
) -> dict[str, Any]:
    return {"kind": "tool-error", "callId": call_id, "name": name, "errorMessage": error_message}


def result_item(type_: str, value: dict[str, Any]) -> dict[str, Any]:
    """A ``LanguageModelToolResultContent`` whose value went through ``describeAny``."""
    return {"type": type_, "value": value}


def tool_call(**kwargs: Any) -> dict[str, Any]:
    return part("tool-call", tool_call_value(**kwargs))


def tool_success(**kwargs: Any) -> dict[str, Any]:
    return part("tool-response", tool_success_value(**kwargs))


def tool_error(**kwargs: Any) -> dict[str, Any]:
    return part("tool-response", tool_error_value(**kwargs))


# -- options -----------------------------------------------------------------

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}


def schema_probe(**overrides: Any) -> dict[str, Any]:
    """What ``probeSchema`` records for a valid schema, with some steps replaced."""
    probe: dict[str, Any] = {
        "type": "object",
        "properties": "object",
        "required": "undefined",
        "json": json.dumps(SCHEMA),
    }
    probe.update(overrides)
    return probe


def tool(
    name: str = "getWeather", description: str = "Get the weather.", **probe: Any
) -> dict[str, Any]:
    """A converted ``LanguageModelToolDeclaration``."""
    return {"name": name, "description": description, "inputSchema": schema_probe(**probe)}


def lang(tag: str, canonical: Any = ...) -> dict[str, Any]:
    """A language as the shim converts it; ``canonical=None`` for an invalid tag."""
    return {"tag": tag, "canonical": tag if canonical is ... else canonical}


def tool_options(*tools: dict[str, Any], **options: Any) -> dict[str, Any]:
    """Options declaring ``tools`` (with the tool-call output they need)."""
    return {"expectedOutputs": [{"type": "tool-call"}], "tools": list(tools), **options}


def json_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A JSON-schema response constraint as ``convertPromptOptions`` sends it."""
    return {"kind": "json-schema", "json": json.dumps(schema, separators=(",", ":"))}


def regexp(source: str, flags: str = "") -> dict[str, Any]:
    """A RegExp response constraint: only its source crosses."""
    return {"kind": "regexp", "source": source, "flags": flags}
