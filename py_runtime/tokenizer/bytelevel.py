"""GPT-2's byte-level alphabet: each byte written as one printable character."""

from __future__ import annotations

import functools

__all__ = ["byte_level", "byte_to_char", "char_to_byte", "token_bytes"]


@functools.cache
def byte_to_char() -> dict[int, str]:
    """GPT-2's map from bytes to printable characters, keyed by code point 0..255."""
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    table = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + extra)
            extra += 1
    return table


@functools.cache
def char_to_byte() -> dict[str, int]:
    """The inverse of GPT-2's byte-level alphabet: character -> byte."""
    return {char: b for b, char in byte_to_char().items()}


def byte_level(text: str) -> str:
    """The UTF-8 bytes of ``text``, written in the byte-level alphabet."""
    return text.encode("utf-8").decode("latin-1").translate(byte_to_char())


def token_bytes(token: str) -> bytes:
    """The bytes a token stands for, as the ByteLevel decoder reads it: its characters
    mapped back to bytes, or its UTF-8 when one is not in the alphabet."""
    table = char_to_byte()
    try:
        return bytes([table[char] for char in token])
    except KeyError:
        return token.encode("utf-8")
