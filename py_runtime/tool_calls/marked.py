"""The streaming loop of formats whose calls sit between a start and an end marker."""

from __future__ import annotations

from collections.abc import Collection

from .base import ParsedCall, Schemas, Segment, coalesce, held_back_any


class MarkedParser:
    """Calls between one of ``PAIRS``' start markers and its end marker, anywhere in
    the text. A subclass reads a block's body in ``_calls``; a block it rejects
    (None), or one the output ends inside, stays text, markers included. The first
    end marker after a start ends the block.
    """

    PAIRS: tuple[tuple[str, str], ...] = ()

    def __init__(self, tool_names: Collection[str], schemas: Schemas | None = None) -> None:
        self.tool_names = frozenset(tool_names)
        self.schemas: Schemas = schemas or {}
        self._buffer = ""
        self._start = self._end = ""  # the open block's markers; "" outside blocks
        self._scan = 0  # where to look for the end marker in the buffer next

    def feed(self, text: str) -> list[Segment]:
        """Take the next chunk of output."""
        self._buffer += text
        out: list[Segment] = []
        while True:
            if not self._end:
                at, start, end = self._find_start()
                if at < 0:
                    cut = len(self._buffer) - held_back_any(self._buffer, self._starts())
                    out.append(self._buffer[:cut])
                    self._buffer = self._buffer[cut:]
                    break
                out.append(self._buffer[:at])
                self._buffer = self._buffer[at + len(start) :]
                self._start, self._end, self._scan = start, end, 0
            else:
                at = self._buffer.find(self._end, self._scan)
                if at < 0:
                    self._scan = max(0, len(self._buffer) - len(self._end) + 1)
                    break
                body = self._buffer[:at]
                self._buffer = self._buffer[at + len(self._end) :]
                calls = self._calls(self._start, body)
                out.extend([self._start + body + self._end] if calls is None else calls)
                self._start = self._end = ""
        return coalesce(out)

    def finish(self) -> list[Segment]:
        """The output ended: held-back text and any unterminated block come out as text."""
        rest = self._start + self._buffer
        self._buffer, self._start, self._end, self._scan = "", "", "", 0
        return coalesce([rest])

    def _calls(self, start: str, body: str) -> list[ParsedCall] | None:
        """The calls in a block opened by ``start``, or None: the block stays text."""
        raise NotImplementedError

    def _starts(self) -> list[str]:
        return [start for start, _ in self.PAIRS]

    def _find_start(self) -> tuple[int, str, str]:
        """The first start marker in the buffer: (index or -1, start, end)."""
        found = (-1, "", "")
        for start, end in self.PAIRS:
            at = self._buffer.find(start)
            if at >= 0 and (found[0] < 0 or at < found[0]):
                found = (at, start, end)
        return found
