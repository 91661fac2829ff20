"""Streaming decoding that never splits a UTF-8 character across chunks."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .bpe import Tokenizer

__all__ = ["StreamDecoder"]

# The allowed second bytes of UTF-8 sequences, where not 0x80..0xBF.
_SECOND_BYTE = {0xE0: (0xA0, 0xBF), 0xED: (0x80, 0x9F), 0xF0: (0x90, 0xBF), 0xF4: (0x80, 0x8F)}


def _complete_length(data: bytes) -> int:
    """How much of ``data`` can be decoded now: all but a trailing incomplete but
    still valid UTF-8 sequence, which more bytes may complete."""
    n = len(data)
    for start in range(n - 1, max(n - 4, -1), -1):
        lead = data[start]
        if 0x80 <= lead <= 0xBF:
            continue  # a continuation byte: look further back
        if 0xC2 <= lead <= 0xDF:
            need = 2
        elif 0xE0 <= lead <= 0xEF:
            need = 3
        elif 0xF0 <= lead <= 0xF4:
            need = 4
        else:
            return n
        tail = data[start:]
        if len(tail) >= need:
            return n
        if len(tail) > 1:
            low, high = _SECOND_BYTE.get(lead, (0x80, 0xBF))
            if not low <= tail[1] <= high:
                return n
        return start
    return n


class StreamDecoder:
    """Incremental decoding for streaming: feed ids one at a time, get the new text,
    never splitting a UTF-8 character across chunks (bytes of an incomplete character
    are held back until complete)."""

    def __init__(self, tokenizer: Tokenizer, skip_special_tokens: bool = False) -> None:
        self._tokenizer = tokenizer
        self._skip = skip_special_tokens
        self._pending = b""
        self._started = False

    def feed(self, token_id: int) -> str:
        """The text that ``token_id`` completes (may be empty)."""
        data = self._tokenizer.token_bytes(token_id, self._skip)
        if data is None:
            return ""
        if not self._tokenizer.byte_level:  # tokens joined by spaces
            text = (" " if self._started else "") + data.decode("utf-8")
            self._started = True
            return text
        data = self._pending + data
        cut = _complete_length(data)
        self._pending = data[cut:]
        return data[:cut].decode("utf-8", "replace")

    def flush(self) -> str:
        """Whatever is left (incomplete bytes decoded with replacement)."""
        text = self._pending.decode("utf-8", "replace")
        self._pending = b""
        return text
