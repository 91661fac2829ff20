"""Which JSON schemas a response constraint may use.

Chromium turns a schema into a grammar and rejects what it cannot turn, with
NotSupportedError; this checks the same shape rules on the parsed schema: every
``type`` names a JSON Schema type, and nested schemas are schemas too.
"""

from __future__ import annotations

import math
from typing import Any

from . import js_regex
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
        if not isinstance(name, str) or name not in JSON_TYPES:
            raise _unsupported(f"{path}.type {name!r} is not a JSON schema type.")
    for key in _SCHEMA_MAPS:
        if key not in schema:
            continue
        members = schema[key]
        if not isinstance(members, dict):
            raise _unsupported(f"{path}.{key} is not an object.")
        for name, member in members.items():
            check_response_schema(member, f"{path}.{key}.{name}")
    for key in _SCHEMA_LISTS:
        if key not in schema:
            continue
        members = schema[key]
        if not isinstance(members, list):
            raise _unsupported(f"{path}.{key} is not an array.")
        for index, member in enumerate(members):
            check_response_schema(member, f"{path}.{key}[{index}]")
    for key in _SCHEMA_VALUES:
        if key in schema:
            check_response_schema(schema[key], f"{path}.{key}")
    required = schema.get("required")
    if "required" in schema and not (
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
    starts = [_VALUE_STARTS[k] for k in kinds if isinstance(k, str) and k in _VALUE_STARTS]
    if not any(text[0] in start for start in starts):
        raise _unsupported("the assistant prefix cannot start a value of this schema.")


#: Keywords the engine's JSON language holds an answer to (``json_regular.py``), in
#: both hosts; ``oneOf`` is held as ``anyOf`` (exact when its branches are disjoint).
ENFORCED = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "enum",
        "const",
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "pattern",
        "format",
        "$ref",
        "$defs",
        "definitions",
        "anyOf",
        "oneOf",
    }
)
#: Keywords that say nothing about which values are valid.
ANNOTATIONS = frozenset(
    {
        "title",
        "description",
        "$schema",
        "$id",
        "$anchor",
        "$comment",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
    }
)
_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")

#: ``format`` values held by patterns of the engine's own (``json_strings.FORMAT_REGEXES``).
FORMATS = frozenset({"email", "uuid", "ipv4", "ipv6"})
_YEAR = "[1-9][0-9]{3}"
_MONTH_DAY = (
    "(0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)"
    "|02-(0[1-9]|1[0-9]|2[0-8])"
)
_LEAP_YEAR = "[1-9][0-9](0[48]|[2468][048]|[13579][26])|([2468][048]|[13579][26])00"
_DATE = f"({_YEAR}-({_MONTH_DAY})|({_LEAP_YEAR})-02-29)"
_HOURS_MINUTES = "([01][0-9]|2[0-3]):[0-5][0-9]"
#: Fractions of up to 6 digits (microseconds: what Python's validators read).
_TIME = f"{_HOURS_MINUTES}:[0-5][0-9](\\.[0-9]{{1,6}})?(Z|[+-]{_HOURS_MINUTES})"
#: RFC 3339's date and time formats, as patterns: the libraries' own admit ``23:59:60``
#: anywhere (llguidance) or unbounded fractions; these admit real dates only (leap
#: days included, leap seconds and years before 1000 left out), ``T``/``Z`` upper case.
FORMAT_PATTERNS = {"date": _DATE, "time": _TIME, "date-time": f"{_DATE}T{_TIME}"}


def enforceable(schema: Any, path: str = "schema") -> Any:
    """``schema`` for the engine's JSON language: NotSupportedError naming the first
    keyword it cannot hold an answer to; ``pattern`` values (ECMAScript regexes) translated
    with ``js_regex.translate``."""
    if path == "schema":  # the shapes first (a map where a map belongs, ...)
        check_response_schema(schema)
    return _enforceable(schema, path)


#: Keywords whose values are read as they are, and what each must be.
_VALUE_SHAPES: dict[str, tuple[type, ...]] = {
    "pattern": (str,),
    "format": (str,),
    "enum": (list,),
    "minItems": (int,),
    "maxItems": (int,),
    "minLength": (int,),
    "maxLength": (int,),
}


def _enforceable(schema: Any, path: str) -> Any:
    if isinstance(schema, bool):
        return schema
    if not isinstance(schema, dict):
        raise _unsupported(f"{path} is not an object.")
    out: dict[str, Any] = {}
    for key, value in schema.items():
        where = f"{path}.{key}"
        if key in ANNOTATIONS:
            continue
        if key not in ENFORCED:
            raise _unsupported(f"the keyword {key!r} ({where}) cannot be enforced.")
        shapes = _VALUE_SHAPES.get(key)
        if shapes and (isinstance(value, bool) or not isinstance(value, shapes)):
            raise _unsupported(f"{where} is not of the type the keyword takes.")
        if key in ("minItems", "maxItems", "minLength", "maxLength") and value < 0:
            raise _unsupported(f"{where} is negative.")
        if key in ("properties", "$defs", "definitions"):
            value = {k: _enforceable(v, f"{where}.{k}") for k, v in value.items()}
        elif key in ("anyOf", "oneOf", "prefixItems"):
            value = [_enforceable(v, f"{where}[{i}]") for i, v in enumerate(value)]
            key = "anyOf" if key == "oneOf" else key
        elif key in ("items", "additionalProperties"):
            value = _enforceable(value, where)
        elif key == "pattern":
            # Held whole (the libraries disagree on unanchored patterns); a whole
            # match is also a match anywhere, as JSON Schema asks.
            value = f"^({js_regex.translate(value)})$"
        elif key == "format" and value in FORMAT_PATTERNS:
            if "pattern" in schema:
                raise _unsupported(f"{path} has both a pattern and the format {value!r}.")
            key, value = "pattern", f"^({FORMAT_PATTERNS[value]})$"
        elif key == "format" and value not in FORMATS:
            raise _unsupported(f"the format {value!r} ({where}) cannot be enforced.")
        elif key == "$ref" and not (isinstance(value, str) and value.startswith("#")):
            raise _unsupported(f"the reference {value!r} ({where}) is not local.")
        out[key] = value
    if "anyOf" in out and "oneOf" in schema and "anyOf" in schema:
        raise _unsupported(f"{path} has both anyOf and oneOf.")
    for key in _BOUNDS:
        value = out.get(key)
        if key in out and (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise _unsupported(f"{path}.{key} is not a finite number.")
    return out
