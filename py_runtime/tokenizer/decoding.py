"""Streaming decoding: ids in one at a time, text out, as ``decode`` would give it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .tokenizer import Tokenizer

__all__ = ["StreamDecoder"]


class StreamDecoder:
    """Incremental decoding for streaming: feed ids one at a time, get the new text.

    What later ids may still change is held back (an incomplete UTF-8 character, a
    run of ``<0xNN>`` byte tokens, a trailing space a ``Strip`` decoder removes...),
    so the chunks, then ``flush()``, join to ``decode`` of the ids fed so far."""

    def __init__(self, tokenizer: Tokenizer, skip_special_tokens: bool = False) -> None:
        self._tokenizer = tokenizer
        self._skip = skip_special_tokens
        self._stream = tokenizer.decode_stream()

    def feed(self, token_id: int) -> str:
        """The text that ``token_id`` completes (may be empty)."""
        token = self._tokenizer.token_text(token_id, self._skip)
        return "" if token is None else self._stream.feed(token)

    def flush(self) -> str:
        """Whatever is left (incomplete bytes decoded with replacement)."""
        return self._stream.flush()
