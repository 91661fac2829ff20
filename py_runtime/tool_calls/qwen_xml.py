"""The XML tool-call format of Qwen3.5 and Qwen3-Coder."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from .base import ParsedCall, reject_constant
from .marked import MarkedParser

_FUNCTION = re.compile(r"\s*<function=([^>\n]+)>(.*)</function>\s*", re.DOTALL)
_PARAMETER = re.compile(r"\s*<parameter=([^>\n]+)>(.*?)</parameter>", re.DOTALL)
_NONE = object()  # a value that does not convert


class QwenXmlParser(MarkedParser):
    """Qwen3.5 / Qwen3-Coder calls::

        <tool_call>
        <function=NAME>
        <parameter=KEY>
        VALUE
        </parameter>
        </function>
        </tool_call>

    Blocks sit anywhere in the text, as in ``HermesParser``. A block is one
    ``<function=NAME>...</function>`` of a declared tool (whitespace around it)
    holding zero or more ``<parameter=KEY>VALUE</parameter>`` with only whitespace
    between them and distinct keys; the first ``</parameter>`` ends a value and one
    newline at each end of it is dropped. Anything else stays text, markers included.

    Values are text. Where the tool's input schema gives the property types
    (``type``, a list of types, or ``anyOf``/``oneOf`` of typed schemas), the first
    of them other than ``string`` that the text converts to wins: ``integer`` /
    ``number`` (JSON numbers, finite), ``boolean`` (true/false in any case: the
    templates write Python's True/False), ``null`` (null/None), ``object`` /
    ``array`` (JSON). Otherwise the value is the text, as it is.
    """

    START = "<tool_call>"
    END = "</tool_call>"
    PAIRS = ((START, END),)

    def _calls(self, start: str, body: str) -> list[ParsedCall] | None:
        function = _FUNCTION.fullmatch(body)
        if function is None:
            return None
        name = function[1].strip()
        if name not in self.tool_names:
            return None
        inner, pos, arguments = function[2], 0, {}
        while (parameter := _PARAMETER.match(inner, pos)) is not None:
            key, value = parameter[1].strip(), parameter[2]
            if key in arguments:
                return None
            value = value[1:] if value.startswith("\n") else value
            value = value[:-1] if value.endswith("\n") else value
            arguments[key] = convert(value, self._property(name, key))
            pos = parameter.end()
        if inner[pos:].strip():
            return None
        return [ParsedCall(name, arguments)]

    def _property(self, name: str, key: str) -> Any:
        """The schema of ``name``'s parameter ``key``, or None."""
        schema = self.schemas.get(name)
        properties = schema.get("properties") if isinstance(schema, Mapping) else None
        return properties.get(key) if isinstance(properties, Mapping) else None


def convert(text: str, schema: Any) -> Any:
    """A parameter's text as the first non-string type of ``schema`` it converts to,
    else the text."""
    for kind in _types(schema):
        value = _as(kind, text.strip())
        if value is not _NONE:
            return value
    return text


def _types(schema: Any) -> list[str]:
    """The type names a property schema allows, in order."""
    if not isinstance(schema, Mapping):
        return []
    kind = schema.get("type")
    if isinstance(kind, str):
        kinds = [kind]
    elif isinstance(kind, list):
        kinds = [k for k in kind if isinstance(k, str)]
    else:
        kinds = []
    for key in ("anyOf", "oneOf"):
        subschemas = schema.get(key)
        if isinstance(subschemas, list):
            for subschema in subschemas:
                kinds += _types(subschema)
    return kinds


def _as(kind: str, text: str) -> Any:
    """``text`` as a value of JSON Schema type ``kind``, or ``_NONE``."""
    if kind == "null":
        return None if text in ("null", "None") else _NONE
    if kind == "boolean":
        return {"true": True, "false": False}.get(text.lower(), _NONE)
    if kind not in ("integer", "number", "object", "array"):
        return _NONE
    try:
        value = json.loads(text, parse_constant=reject_constant)
    except (ValueError, RecursionError):
        return _NONE
    if kind == "object":
        return value if isinstance(value, dict) else _NONE
    if kind == "array":
        return value if isinstance(value, list) else _NONE
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return _NONE
    if kind == "integer":
        return int(value) if isinstance(value, int) or value.is_integer() else _NONE
    return value
