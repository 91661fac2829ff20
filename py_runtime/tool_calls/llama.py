"""The JSON tool-call format of Llama 3.1, 3.2 and 3.3."""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any

from .base import JSON_OUTSIDE, Brackets, ParsedCall, Schemas, Segment, coalesce, reject_constant

_SPACE = re.compile(r"\s*")
_SEPARATORS = re.compile(r"[\s;]*")
_HEAD = re.compile(r'\{\s*"')  # an object's start: its first key
_HEAD_PREFIX = re.compile(r"\{\s*")


class LlamaJsonParser:
    """Llama 3.x calls: bare JSON objects ``{"name": ..., "parameters": {...}}`` (or
    ``"arguments"``), optionally after ``<|python_tag|>``, that *are* the answer.

    The format has no start marker, so the decision is made at the start of the
    answer: after optional whitespace and an optional ``<|python_tag|>`` (and
    whitespace), an answer that starts with ``{`` followed by a ``"`` is held until
    its braces balance (strings skipped), then parsed; anything else, or a
    character that cannot be in JSON outside strings, makes the answer plain text
    from there on, verbatim and unheld. More calls may follow a call, each after
    whitespace and ``;`` separators (text) and an optional ``<|python_tag|>``; once
    something else follows, the rest of the answer is text.

    A call is a JSON object with a string ``name`` of a declared tool and an object
    ``parameters`` (or, without it, ``arguments``); other keys are ignored. An
    object that is not a valid call, or that the output ends inside, stays text.
    """

    TAG = "<|python_tag|>"

    def __init__(self, tool_names: Collection[str], schemas: Schemas | None = None) -> None:
        self.tool_names = frozenset(tool_names)
        self.schemas: Schemas = schemas or {}
        self._reset()

    def _reset(self) -> None:
        self._buffer = ""
        self._state = "lead"  # "lead": before a call; "value": in one; "text": no more calls
        self._calls = 0  # calls so far: after one, ";" separates
        self._value: Brackets | None = None  # set once the object's head is known

    def feed(self, text: str) -> list[Segment]:
        """Take the next chunk of output."""
        self._buffer += text
        out: list[Segment] = []
        while True:
            if self._state == "text":
                out.append(self._buffer)
                self._buffer = ""
                break
            if self._state == "lead":
                if not self._lead(out):
                    break
                continue
            if not self._in_value(out):
                break
        return coalesce(out)

    def finish(self) -> list[Segment]:
        """The output ended: whatever is held back comes out as text."""
        rest = self._buffer
        self._reset()
        return coalesce([rest])

    def _lead(self, out: list[Segment]) -> bool:
        """Before a call: False to wait for more text, True once the state moved on."""
        buffer = self._buffer
        text_end = at = _skip(_SEPARATORS if self._calls else _SPACE, buffer, 0)
        if buffer.startswith(self.TAG, at):
            at = _skip(_SPACE, buffer, at + len(self.TAG))
        elif self.TAG.startswith(buffer[at:]):
            return False  # nothing yet past the separators, or part of the tag
        if at == len(buffer):
            return False
        if buffer[at] != "{":
            self._state = "text"
            return True
        out.append(buffer[:text_end])
        self._buffer = buffer[text_end:]
        self._state, self._value = "value", None
        return True

    def _in_value(self, out: list[Segment]) -> bool:
        """In an object: False to wait for more text, True once the state moved on."""
        buffer = self._buffer
        at = buffer.index("{")  # the buffer holds an optional tag and whitespace first
        try:
            if self._value is None:
                if not _HEAD.match(buffer, at):
                    if _HEAD_PREFIX.fullmatch(buffer, at):
                        return False
                    raise ValueError("not a JSON object with keys")
                self._value = Brackets(at, outside=JSON_OUTSIDE)
            end = self._value.end(buffer)
        except ValueError:
            self._state = "text"
            return True
        if end is None:
            return False
        call = self._call(buffer[at:end])
        if call is None:
            self._state = "text"
            return True
        out.append(call)
        self._buffer, self._state, self._calls = buffer[end:], "lead", self._calls + 1
        return True

    def _call(self, source: str) -> ParsedCall | None:
        try:
            data: Any = json.loads(source, parse_constant=reject_constant)
        except (ValueError, RecursionError):
            return None
        if not isinstance(data, dict):
            return None
        name = data.get("name")
        arguments = data["parameters"] if "parameters" in data else data.get("arguments")
        if isinstance(name, str) and name in self.tool_names and isinstance(arguments, dict):
            return ParsedCall(name, arguments)
        return None


def _skip(pattern: re.Pattern[str], text: str, pos: int) -> int:
    """Where the run of ``pattern`` (a pattern that may match nothing) from ``pos`` ends."""
    match = pattern.match(text, pos)
    return match.end() if match else pos
