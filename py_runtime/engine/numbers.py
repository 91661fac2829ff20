"""JSON numbers within a schema's bounds, as a regular language (placeholder)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .errors import PromptAPIError
from .regular import Node, parse

_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")


def number_node(schema: Mapping[str, Any]) -> Node:
    if any(key in schema for key in _BOUNDS):
        raise PromptAPIError("NotSupportedError", "Unsupported response constraint: bounds.")
    if schema.get("type") == "integer":
        return parse("-?(0|[1-9][0-9]{0,14})")
    return parse("-?(0|[1-9][0-9]{0,14})(\\.[0-9]{1,15})?([eE][+\\-]?[0-9]{1,2})?")
