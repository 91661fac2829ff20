"""Which JSON schemas a response constraint may use.

Chromium turns a schema into a grammar and rejects what it cannot turn, with
NotSupportedError; this checks the same shape rules on the parsed schema: every
``type`` names a JSON Schema type, and nested schemas are schemas too.
"""

from __future__ import annotations

from typing import Any

from .errors import PromptAPIError

JSON_TYPES = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_VALUES = ("items", "additionalProperties", "not", "contains", "propertyNames")


def _unsupported(message: str) -> PromptAPIError:
    return PromptAPIError("NotSupportedError", f"Unsupported response constraint: {message}")


def check_response_schema(schema: Any, path: str = "schema") -> None:
    """Raise NotSupportedError unless ``schema`` is a usable JSON schema."""
    if isinstance(schema, bool):
        return
    if not isinstance(schema, dict):
        raise _unsupported(f"{path} is not an object.")
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if kind is not None else []
    for name in kinds:
        if name not in JSON_TYPES:
            raise _unsupported(f"{path}.type {name!r} is not a JSON schema type.")
    for key in _SCHEMA_MAPS:
        members = schema.get(key)
        if members is None:
            continue
        if not isinstance(members, dict):
            raise _unsupported(f"{path}.{key} is not an object.")
        for name, member in members.items():
            check_response_schema(member, f"{path}.{key}.{name}")
    for key in _SCHEMA_LISTS:
        members = schema.get(key)
        if members is None:
            continue
        if not isinstance(members, list):
            raise _unsupported(f"{path}.{key} is not an array.")
        for index, member in enumerate(members):
            check_response_schema(member, f"{path}.{key}[{index}]")
    for key in _SCHEMA_VALUES:
        if key in schema:
            check_response_schema(schema[key], f"{path}.{key}")
    required = schema.get("required")
    if required is not None and not (
        isinstance(required, list) and all(isinstance(r, str) for r in required)
    ):
        raise _unsupported(f"{path}.required is not an array of strings.")


_VALUE_STARTS = {
    "object": "{",
    "array": "[",
    "string": '"',
    "number": "-0123456789",
    "integer": "-0123456789",
    "boolean": "tf",
    "null": "n",
}


def check_prefix(schema: Any, prefix: str) -> None:
    """An assistant prefix must be able to start a JSON value the schema allows.

    Chromium checks the prefix against the schema's grammar; this checks the
    first character of the value against the schema's top-level types.
    """
    text = prefix.lstrip()
    if not text or not isinstance(schema, dict):
        return
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if kind else list(_VALUE_STARTS)
    if not any(text[0] in _VALUE_STARTS[k] for k in kinds if k in _VALUE_STARTS):
        raise _unsupported("the assistant prefix cannot start a value of this schema.")
