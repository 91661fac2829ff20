"""The ``normalizer`` of a ``tokenizer.json``, built once as a function on text.

Supported: NFC/NFD/NFKC/NFKD, ``Sequence``, ``Replace`` (string or regex pattern),
``Prepend``, ``Lowercase``, ``Strip``, ``StripAccents``, ``Nmt`` and ``ByteLevel``, as
``tokenizers`` applies them. Others (``Precompiled``, ``BertNormalizer``...) raise
``TokenizerError``.
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Callable
from typing import Any

from .bytelevel import byte_level
from .errors import TokenizerError
from .regex import compile_regex, replace_all
from .unicode import WHITE_SPACE

__all__ = ["Normalizer", "build_normalizer", "compile_pattern", "WHITE_SPACE_CHARS"]

Normalizer = Callable[[str], str]

#: Rust's ``char::is_whitespace`` (Unicode White_Space), for ``str.strip``.
WHITE_SPACE_CHARS = "".join(chr(cp) for first, last in WHITE_SPACE for cp in range(first, last + 1))

# Nmt: controls removed, and other code points that become a space.
_NMT_REMOVED = dict.fromkeys([*range(0x01, 0x09), 0x0B, *range(0x0E, 0x20), 0x7F, 0x8F, 0x9F])
_NMT_SPACES = [0x09, 0x0A, 0x0C, 0x0D, 0x1680, *range(0x200B, 0x2010), 0x2028, 0x2029, 0x2581]
_NMT_TABLE: dict[int, str | None] = {
    **_NMT_REMOVED,
    **dict.fromkeys(_NMT_SPACES + [0xFEFF, 0xFFFD], " "),
}


def compile_pattern(pattern: dict[str, str], content: str) -> Callable[[str], str]:
    """Replace every match of a ``{"String": ...}`` or ``{"Regex": ...}`` pattern (as the
    ``Replace`` normalizer and decoder do) with ``content``, taken literally; an empty
    pattern matches between characters, but not in an empty text."""
    if "Regex" in pattern:
        return functools.partial(replace_all, compile_regex(pattern["Regex"]), content)
    string = pattern["String"]
    if not isinstance(string, str):
        raise TypeError("a Replace pattern is not a string")
    return lambda text: text.replace(string, content) if text else text  # "" has no match


def _lowercase(text: str) -> str:
    """Rust's ``char::to_lowercase``, character by character: no final-sigma rule."""
    if "\u03a3" not in text:
        return text.lower()
    return "".join(char.lower() for char in text)


def _strip_accents(text: str) -> str:
    """Remove the combining marks (general category M)."""
    if text.isascii():
        return text
    return "".join(char for char in text if unicodedata.category(char)[0] != "M")


def _strip(left: bool, right: bool, text: str) -> str:
    if left:
        text = text.lstrip(WHITE_SPACE_CHARS)
    return text.rstrip(WHITE_SPACE_CHARS) if right else text


def _prepend(prefix: str, text: str) -> str:
    return prefix + text if text else text


def _sequence(steps: list[Normalizer], text: str) -> str:
    for step in steps:
        text = step(text)
    return text


def build_normalizer(spec: dict[str, Any] | None) -> Normalizer | None:
    """The ``normalizer`` of a tokenizer.json as a function (None: no normalizer)."""
    if spec is None:
        return None
    kind = spec["type"]
    if kind in ("NFC", "NFD", "NFKC", "NFKD"):
        return functools.partial(unicodedata.normalize, kind)
    if kind == "Sequence":
        steps = [s for s in map(build_normalizer, spec["normalizers"]) if s is not None]
        return functools.partial(_sequence, steps)
    if kind == "Replace":
        return compile_pattern(spec["pattern"], str(spec["content"]))
    if kind == "Prepend":
        return functools.partial(_prepend, str(spec["prepend"]))
    if kind == "Lowercase":
        return _lowercase
    if kind == "Strip":
        return functools.partial(
            _strip, bool(spec.get("strip_left", True)), bool(spec.get("strip_right", True))
        )
    if kind == "StripAccents":
        return _strip_accents
    if kind == "Nmt":
        return lambda text: text.translate(_NMT_TABLE)
    if kind == "ByteLevel":
        return byte_level
    raise TokenizerError(f"unsupported normalizer: {kind}")
