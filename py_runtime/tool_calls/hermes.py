"""The Hermes tool-call format of Qwen2.5 and Qwen3."""

from __future__ import annotations

import json

from .base import ParsedCall, reject_constant
from .marked import MarkedParser


class HermesParser(MarkedParser):
    """Qwen2.5 / Qwen3 ("Hermes") calls:
    ``<tool_call>\\n{"name": ..., "arguments": {...}}\\n</tool_call>``.

    Calls may repeat and may have text before, between and after them; the
    whitespace around the JSON is optional. A call stays text, markers included,
    when its JSON does not parse (NaN/Infinity included), is not an object with a
    string ``name`` of a declared tool and an object ``arguments``, or when the
    output ends before ``</tool_call>``. The first ``</tool_call>`` ends a call.
    """

    START = "<tool_call>"
    END = "</tool_call>"
    PAIRS = ((START, END),)

    def _calls(self, start: str, body: str) -> list[ParsedCall] | None:
        try:
            data = json.loads(body, parse_constant=reject_constant)
        except (ValueError, RecursionError):
            return None
        if isinstance(data, dict):
            name, arguments = data.get("name"), data.get("arguments")
            if isinstance(name, str) and name in self.tool_names and isinstance(arguments, dict):
                return [ParsedCall(name, arguments)]
        return None
