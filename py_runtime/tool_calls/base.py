"""What every tool-call parser shares: segments, the parser protocol, helpers.

A parser splits generated text, fed in arbitrary chunks (token by token, say),
into *segments*: text (``str``) and parsed calls (``ParsedCall``), in output
order. Text that might be the start of a call marker is held back until it is
known not to be one; whatever cannot be read as a call to a declared tool stays
text, verbatim.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol


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
    raise ValueError(f"{name} is not JSON")


def held_back(text: str, marker: str) -> int:
    """The length of the longest end of ``text`` that is a proper start of ``marker``."""
    for size in range(min(len(text), len(marker) - 1), 0, -1):
        if text.endswith(marker[:size]):
            return size
    return 0
