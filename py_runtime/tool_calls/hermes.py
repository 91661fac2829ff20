"""The Hermes tool-call format of Qwen2.5 and Qwen3."""

from __future__ import annotations

import json
from collections.abc import Collection

from .base import ParsedCall, Segment, coalesce, held_back, reject_constant


class HermesParser:
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

    def __init__(self, tool_names: Collection[str]) -> None:
        self.tool_names = frozenset(tool_names)
        self._buffer = ""
        self._inside = False  # after a START, waiting for its END
        self._scan = 0  # where to look for END in the buffer next

    def feed(self, text: str) -> list[Segment]:
        """Take the next chunk of output."""
        self._buffer += text
        out: list[Segment] = []
        while True:
            if not self._inside:
                at = self._buffer.find(self.START)
                if at < 0:
                    keep = held_back(self._buffer, self.START)
                    cut = len(self._buffer) - keep
                    out.append(self._buffer[:cut])
                    self._buffer = self._buffer[cut:]
                    break
                out.append(self._buffer[:at])
                self._buffer = self._buffer[at + len(self.START) :]
                self._inside, self._scan = True, 0
            else:
                at = self._buffer.find(self.END, self._scan)
                if at < 0:
                    self._scan = max(0, len(self._buffer) - len(self.END) + 1)
                    break
                body = self._buffer[:at]
                self._buffer = self._buffer[at + len(self.END) :]
                self._inside = False
                out.append(self._call(body))
        return coalesce(out)

    def finish(self) -> list[Segment]:
        """The output ended: held-back text and any unterminated call come out as text."""
        rest = self.START + self._buffer if self._inside else self._buffer
        self._buffer, self._inside, self._scan = "", False, 0
        return coalesce([rest])

    def _call(self, body: str) -> Segment:
        """A call, or the verbatim text when ``body`` is not a valid call."""
        try:
            data = json.loads(body, parse_constant=reject_constant)
        except ValueError:
            data = None
        if isinstance(data, dict):
            name, arguments = data.get("name"), data.get("arguments")
            if isinstance(name, str) and name in self.tool_names and isinstance(arguments, dict):
                return ParsedCall(name, arguments)
        return self.START + body + self.END
