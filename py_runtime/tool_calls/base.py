"""What every tool-call parser shares: segments, the parser protocol, helpers.

A parser splits generated text, fed in arbitrary chunks (token by token, say),
into *segments*: text (``str``) and parsed calls (``ParsedCall``), in output
order. Text that might be the start of a call marker is held back until it is
known not to be one; whatever cannot be read as a call to a declared tool stays
text, verbatim.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

#: Declared tools' input schemas (JSON Schema objects) by tool name.
Schemas = Mapping[str, Mapping[str, Any]]


@dataclass(frozen=True)
class ParsedCall:
    """A call the model made to a declared tool; ``arguments`` is a JSON object."""

    name: str
    arguments: dict[str, Any]


Segment = str | ParsedCall


class ToolCallParser(Protocol):
    """A streaming parser of one family's tool-call format (one answer per parser)."""

    def feed(self, text: str) -> list[Segment]:
        """Take the next chunk; return the segments now complete (text may be held back)."""
        ...

    def finish(self) -> list[Segment]:
        """The output ended: return everything still held back, then start afresh."""
        ...


class ParserFactory(Protocol):
    """What ``PARSERS`` holds: a parser class, called with the declared tools."""

    def __call__(
        self, tool_names: Collection[str], schemas: Schemas | None = None
    ) -> ToolCallParser: ...


def coalesce(segments: Iterable[Segment]) -> list[Segment]:
    """Merge adjacent text segments and drop empty ones."""
    out: list[Segment] = []
    for segment in segments:
        if isinstance(segment, str):
            if not segment:
                continue
            if out and isinstance(out[-1], str):
                out[-1] += segment
                continue
        out.append(segment)
    return out


def reject_constant(name: str) -> Any:
    """``json.loads``' ``parse_constant``: NaN and Infinity are not JSON."""
    raise ValueError(f"{name} is not JSON")


def held_back(text: str, marker: str) -> int:
    """The length of the longest end of ``text`` that is a proper start of ``marker``."""
    for size in range(min(len(text), len(marker) - 1), 0, -1):
        if text.endswith(marker[:size]):
            return size
    return 0


def held_back_any(text: str, markers: Iterable[str]) -> int:
    """``held_back`` for whichever of ``markers`` needs the most held back."""
    return max((held_back(text, marker) for marker in markers), default=0)


#: What may stand outside strings in JSON: whitespace, punctuation, numbers, literals.
JSON_OUTSIDE = frozenset(" \t\n\r,:-+.0123456789eE" + "truefalsn")


class Brackets:
    """Where a bracketed value ends, in text that grows between calls.

    Counts ``([{`` against ``)]}`` outside strings (quoted by any of ``quotes``,
    backslash escapes), from the opening bracket at ``start``. With ``outside``
    (JSON: ``[{`` and ``]}`` only), any other character outside strings raises
    ``ValueError``: the text is clearly not a value.
    """

    def __init__(self, start: int, quotes: str = '"', outside: frozenset[str] | None = None):
        self.start = self.pos = start
        self.quotes, self.outside = quotes, outside
        self.opening, self.closing = ("([{", ")]}") if outside is None else ("[{", "]}")
        self.depth, self.quote, self.escaped = 0, "", False

    def end(self, text: str) -> int | None:
        """Scan on to the end of ``text``: the index just past the closing bracket, or
        None while the value is still open."""
        for i in range(self.pos, len(text)):
            char = text[i]
            if self.quote:
                if self.escaped:
                    self.escaped = False
                elif char == "\\":
                    self.escaped = True
                elif char == self.quote:
                    self.quote = ""
            elif char in self.quotes:
                self.quote = char
            elif char in self.opening:
                self.depth += 1
            elif char in self.closing:
                self.depth -= 1
                if self.depth <= 0:
                    self.pos = i + 1
                    return i + 1
            elif self.outside is not None and char not in self.outside:
                raise ValueError(f"{char!r} cannot be in the value")
        self.pos = len(text)
        return None
