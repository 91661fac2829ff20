"""The tool-call formats of Mistral's instruct models."""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any

from .base import (
    JSON_OUTSIDE,
    Brackets,
    ParsedCall,
    Schemas,
    Segment,
    coalesce,
    held_back,
    reject_constant,
)

_SPACE = re.compile(r"\s*")
_NAME = re.compile(r"[^\s\[\]{}\"]*")
_BARE_HEAD = re.compile(r"\[\s*\{")
_BARE_PREFIX = re.compile(r"\[\s*")


class MistralParser:
    """Mistral calls, after the ``[TOOL_CALLS]`` marker, anywhere in the text:

    - ``[TOOL_CALLS][{"name": ..., "arguments": {...}}, ...]`` (tokenizers up to v7;
      whitespace after the marker allowed; a lone object instead of the array too);
    - ``[TOOL_CALLS]NAME[ARGS]{...}``, repeated for more calls (v11 and later), with
      an optional ``[CALL_ID]ID`` before ``[ARGS]``; ``[ARGS]`` may be missing, as it
      is when control tokens are decoded away.

    The JSON is held until its brackets balance (strings skipped); a character that
    cannot be in JSON outside strings ends the wait. Since the marker is a control
    token a decoder may drop, an answer that starts (after whitespace) with ``[``
    and ``{`` is read as the array form too. A call needs a declared tool's name and
    an object of arguments (items: a string ``name`` and an object ``arguments``;
    other keys such as ``id`` are ignored); an array or object with an invalid call,
    or one the output ends inside, stays text, marker included.
    """

    MARKER = "[TOOL_CALLS]"

    def __init__(self, tool_names: Collection[str], schemas: Schemas | None = None) -> None:
        self.tool_names = frozenset(tool_names)
        self.schemas: Schemas = schemas or {}
        self._reset()

    def _reset(self) -> None:
        self._buffer = ""
        self._state = "lead"  # "lead" (the answer's start), "text", "marker" or "value"
        self._marked = False  # whether the buffer starts with the marker
        self._start = 0  # where the value starts in the buffer
        self._name: str | None = None  # the name before [ARGS], in that form
        self._value: Brackets | None = None

    def feed(self, text: str) -> list[Segment]:
        """Take the next chunk of output."""
        self._buffer += text
        out: list[Segment] = []
        while self._step(out):
            pass
        return coalesce(out)

    def finish(self) -> list[Segment]:
        """The output ended: whatever is held back comes out as text."""
        rest = self._buffer
        self._reset()
        return coalesce([rest])

    def _step(self, out: list[Segment]) -> bool:
        """One step of the state machine: False to wait for more text, True once the
        state moved on."""
        if self._state == "lead":
            return self._lead(out)
        if self._state == "text":
            return self._text(out)
        if self._state == "marker":
            return self._marker(out)
        return self._in_value(out)

    def _lead(self, out: list[Segment]) -> bool:
        at = _skip(_SPACE, self._buffer, 0)
        if _BARE_HEAD.match(self._buffer, at):
            out.append(self._buffer[:at])
            self._buffer = self._buffer[at:]
            self._value_at(0, None, marked=False)
            return True
        if at == len(self._buffer) or _BARE_PREFIX.fullmatch(self._buffer, at):
            return False
        self._state = "text"
        return True

    def _text(self, out: list[Segment]) -> bool:
        at = self._buffer.find(self.MARKER)
        if at < 0:
            cut = len(self._buffer) - held_back(self._buffer, self.MARKER)
            out.append(self._buffer[:cut])
            self._buffer = self._buffer[cut:]
            return False
        out.append(self._buffer[:at])
        self._buffer = self._buffer[at:]
        self._state = "marker"
        return True

    def _marker(self, out: list[Segment]) -> bool:
        buffer, at = self._buffer, _skip(_SPACE, self._buffer, len(self.MARKER))
        if at == len(buffer):
            return False
        if buffer[at] in "[{":
            self._value_at(at, None, marked=True)
            return True
        named = _named(buffer, at)
        if named is True:
            return False
        if named is False:
            return self._give_up(out)
        self._value_at(named[1], named[0], marked=True)
        return True

    def _in_value(self, out: list[Segment]) -> bool:
        assert self._value is not None
        try:
            end = self._value.end(self._buffer)
        except ValueError:
            return self._give_up(out)
        if end is None:
            return False
        calls = self._calls(self._buffer[self._start : end])
        out.extend([self._buffer[:end]] if calls is None else calls)
        self._buffer, self._state = self._buffer[end:], "text"
        return True

    def _value_at(self, start: int, name: str | None, marked: bool) -> None:
        self._state, self._start, self._name, self._marked = "value", start, name, marked
        self._value = Brackets(start, outside=JSON_OUTSIDE)

    def _give_up(self, out: list[Segment]) -> bool:
        """Not a call after all: the marker is text, and what follows is read afresh."""
        cut = len(self.MARKER) if self._marked or self._state == "marker" else 0
        out.append(self._buffer[:cut])
        self._buffer, self._state = self._buffer[cut:], "text"
        return True

    def _calls(self, source: str) -> list[ParsedCall] | None:
        """The calls in a complete JSON value, or None."""
        try:
            data: Any = json.loads(source, parse_constant=reject_constant)
        except (ValueError, RecursionError):
            return None
        if self._name is not None:
            items = [{"name": self._name, "arguments": data}]
        elif isinstance(data, list) and data:
            items = data
        else:
            items = [data]
        calls = []
        for item in items:
            call = self._call(item)
            if call is None:
                return None
            calls.append(call)
        return calls

    def _call(self, item: Any) -> ParsedCall | None:
        if not isinstance(item, dict):
            return None
        name, arguments = item.get("name"), item.get("arguments")
        if isinstance(name, str) and name in self.tool_names and isinstance(arguments, dict):
            return ParsedCall(name, arguments)
        return None


def _named(buffer: str, pos: int) -> tuple[str, int] | bool:
    """``NAME[CALL_ID]ID[ARGS]{`` at ``pos`` (both tags optional): (NAME, where ``{``
    is); True while the buffer may still become one, False when it cannot."""
    name_end = at = _skip(_NAME, buffer, pos)
    if at == pos:
        return False
    for tag, tail in (("[CALL_ID]", _NAME), ("[ARGS]", _SPACE)):
        if buffer.startswith(tag, at):
            at = _skip(tail, buffer, at + len(tag))
        elif tag.startswith(buffer[at:]):
            return True  # the buffer ends inside a tag (or right before one)
    at = _skip(_SPACE, buffer, at)
    if at == len(buffer):
        return True
    return (buffer[pos:name_end], at) if buffer[at] == "{" else False


def _skip(pattern: re.Pattern[str], text: str, pos: int) -> int:
    """Where the run of ``pattern`` (a pattern that may match nothing) from ``pos`` ends."""
    match = pattern.match(text, pos)
    return match.end() if match else pos
