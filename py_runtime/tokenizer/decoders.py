"""The ``decoder`` of a ``tokenizer.json``, as a stream: tokens in, text out.

``tokenizers`` decodes a whole list of tokens: each decoder of the chain maps the
list (``ByteLevel``, ``Replace``, ``ByteFallback``, ``Fuse``, ``Strip``,
``Metaspace``, ``BPEDecoder``), and the result is joined. Here each step is
incremental and holds back only what later tokens may still change (an incomplete
UTF-8 character, a run of ``<0xNN>`` tokens, the last token for ``BPEDecoder``, a
trailing ``Strip``), so the text streamed for any prefix of the tokens, flushed, is
what ``decode`` gives for that prefix. Steps after the tokens are joined into one
text (by ``Fuse`` or ``ByteLevel``) act on the text so far; one that cannot (a regex
``Replace``...) holds all of it until the end. Others raise ``TokenizerError``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any, Protocol

from .bytelevel import token_bytes
from .errors import TokenizerError
from .normalizers import compile_pattern

__all__ = ["DecodeStream", "Decoder", "build_decoder", "complete_length"]

# The allowed second bytes of UTF-8 sequences, where not 0x80..0xBF.
_SECOND_BYTE = {0xE0: (0xA0, 0xBF), 0xED: (0x80, 0x9F), 0xF0: (0x90, 0xBF), 0xF4: (0x80, 0x8F)}
_BYTE_TOKEN = re.compile(r"<0x([0-9A-Fa-f]{2}|\+[0-9A-Fa-f])>")  # Rust's u8::from_str_radix


def complete_length(data: bytes) -> int:
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


class _Step(Protocol):
    """One step, on tokens before the join or on text after it."""

    def push(self, item: str) -> list[str]: ...
    def finish(self) -> list[str]: ...


class _Map:
    """A step that maps each token (or each piece of text) on its own."""

    def __init__(self, function: Callable[[str], str]) -> None:
        self._function = function

    def push(self, item: str) -> list[str]:
        return [self._function(item)]

    def finish(self) -> list[str]:
        return []


class _Metaspace:
    """The replacement character becomes a space; in the first token it is removed
    (unless ``prepend_scheme`` is never)."""

    def __init__(self, replacement: str, prepend: bool) -> None:
        self._replacement, self._first = replacement, prepend

    def push(self, item: str) -> list[str]:
        out = item.replace(self._replacement, "" if self._first else " ")
        self._first = False
        return [out]

    def finish(self) -> list[str]:
        return []


class _ByteFallback:
    """Runs of ``<0xNN>`` tokens become their text, or one U+FFFD per byte if invalid."""

    def __init__(self) -> None:
        self._run = bytearray()

    def push(self, item: str) -> list[str]:
        match = _BYTE_TOKEN.fullmatch(item) if len(item) == 6 else None
        if match is not None:
            self._run.append(int(match.group(1), 16))
            return []
        return [*self.finish(), item]

    def finish(self) -> list[str]:
        if not self._run:
            return []
        run = bytes(self._run)
        self._run.clear()
        try:
            return [run.decode("utf-8")]
        except UnicodeDecodeError:
            return ["\ufffd"] * len(run)


class _Suffix:
    """``BPEDecoder``: the suffix becomes a space, or nothing in the last token."""

    def __init__(self, suffix: str) -> None:
        self._suffix: str = suffix
        self._held: str | None = None  # the last token, until another one comes

    def push(self, item: str) -> list[str]:
        out = [] if self._held is None else [self._held.replace(self._suffix, " ")]
        self._held = item
        return out

    def finish(self) -> list[str]:
        out = [] if self._held is None else [self._held.replace(self._suffix, "")]
        self._held = None
        return out


def _strip(content: str, start: int, stop: int, token: str) -> str:
    """``Strip``: up to ``start`` leading and ``stop`` trailing ``content`` characters."""
    cut = 0
    while cut < min(start, len(token)) and token[cut] == content:
        cut += 1
    end = len(token)
    while end > max(cut, len(token) - stop) and token[end - 1] == content:
        end -= 1
    return token[cut:end]


class _TextStrip:
    """``Strip`` of the whole text, streamed: trailing characters are held back."""

    def __init__(self, content: str, start: int, stop: int) -> None:
        self._content, self._start, self._stop = content, start, stop
        self._held = ""

    def push(self, item: str) -> list[str]:
        while self._start and item:
            if item[0] != self._content:
                self._start = 0
                break
            item = item[1:]
            self._start -= 1
        text = self._held + item
        end = len(text)
        while end > len(text) - self._stop and end and text[end - 1] == self._content:
            end -= 1
        self._held = text[end:]
        return [text[:end]]

    def finish(self) -> list[str]:
        self._held = ""
        return []


class _TextReplace:
    """``Replace`` of a string in the whole text, streamed: a possible start of the
    pattern at the end is held back."""

    def __init__(self, pattern: str, content: str) -> None:
        self._pattern, self._content, self._held = pattern, content, ""

    def push(self, item: str) -> list[str]:
        text, pattern = self._held + item, self._pattern
        end = position = 0
        while (position := text.find(pattern, position)) >= 0:
            position = end = position + len(pattern)
        keep = next(
            (k for k in range(min(len(pattern) - 1, len(text) - end), 0, -1)
             if text.endswith(pattern[:k])),
            0,
        )  # fmt: skip
        cut = len(text) - keep
        self._held = text[cut:]
        return [text[:cut].replace(pattern, self._content)]

    def finish(self) -> list[str]:
        held, self._held = self._held, ""
        return [held]


class _HoldAll:
    """A step on the whole text that cannot be streamed: applied at the end."""

    def __init__(self, function: Callable[[str], str]) -> None:
        self._function, self._parts = function, [""]

    def push(self, item: str) -> list[str]:
        self._parts.append(item)
        return []

    def finish(self) -> list[str]:
        text, self._parts = "".join(self._parts), [""]
        return [self._function(text)]


class _Bytes:
    """The ByteLevel join: each token's bytes, decoded as UTF-8 (lossy) once complete."""

    def __init__(self) -> None:
        self._pending = b""

    def push(self, item: str) -> list[str]:
        data = self._pending + token_bytes(item)
        cut = complete_length(data)
        self._pending = data[cut:]
        return [data[:cut].decode("utf-8", "replace")]

    def finish(self) -> list[str]:
        pending, self._pending = self._pending, b""
        return [pending.decode("utf-8", "replace")] if pending else []


class _Spaces:
    """No decoder: the tokens joined with spaces."""

    def __init__(self) -> None:
        self._started = False

    def push(self, item: str) -> list[str]:
        started, self._started = self._started, True
        return [" " + item if started else item]

    def finish(self) -> list[str]:
        return []


StepFactory = Callable[[], _Step]


class DecodeStream:
    """One decoding in progress: ``feed`` tokens, then ``flush``."""

    def __init__(self, steps: list[_Step]) -> None:
        self._steps = steps

    def feed(self, token: str) -> str:
        """The text that ``token`` completes (may be empty)."""
        items = [token]
        for step in self._steps:
            items = [out for item in items for out in step.push(item)]
        return "".join(items)

    def flush(self) -> str:
        """Everything still held back."""
        items: list[str] = []
        for step in self._steps:
            items = [out for item in items for out in step.push(item)]
            items += step.finish()
        return "".join(items)


class Decoder:
    """A decoder chain, ready to start streams (and to decode whole lists)."""

    def __init__(self, factories: list[StepFactory]) -> None:
        self._factories = factories

    def stream(self) -> DecodeStream:
        return DecodeStream([factory() for factory in self._factories])

    def decode(self, tokens: list[str]) -> str:
        stream = self.stream()
        return "".join(map(stream.feed, tokens)) + stream.flush()


def _flatten(spec: dict[str, Any]) -> list[dict[str, Any]]:
    if spec["type"] == "Sequence":
        return [s for d in spec["decoders"] for s in _flatten(d)]
    return [spec]


def _metaspace_prepends(spec: dict[str, Any]) -> bool:
    scheme = spec.get("prepend_scheme")
    if spec.get("add_prefix_space") is False:  # the older form
        scheme = "never"
    return scheme != "never"


def _token_step(spec: dict[str, Any]) -> StepFactory:
    """A step on the list of tokens."""
    kind = spec["type"]
    if kind == "Replace":
        return functools.partial(_Map, compile_pattern(spec["pattern"], str(spec["content"])))
    if kind == "Strip":
        strip = functools.partial(
            _strip, str(spec["content"]), int(spec.get("start", 0)), int(spec.get("stop", 0))
        )
        return functools.partial(_Map, strip)
    if kind == "Metaspace":
        return functools.partial(_Metaspace, str(spec["replacement"]), _metaspace_prepends(spec))
    if kind == "ByteFallback":
        return _ByteFallback
    if kind == "BPEDecoder":
        return functools.partial(_Suffix, str(spec.get("suffix", "</w>")))
    raise TokenizerError(f"unsupported decoder: {kind}")


def _apply(factory: StepFactory, text: str) -> str:
    step = factory()
    return "".join(step.push(text) + step.finish())


def _text_step(spec: dict[str, Any]) -> StepFactory | None:
    """A step on the text the tokens were joined into (None: nothing to do)."""
    kind = spec["type"]
    if kind == "Fuse":
        return None
    if kind == "Strip":
        content = str(spec["content"])
        return functools.partial(_TextStrip, content, int(spec["start"]), int(spec["stop"]))
    if kind == "Replace" and "String" in spec["pattern"] and spec["pattern"]["String"]:
        return functools.partial(_TextReplace, str(spec["pattern"]["String"]), str(spec["content"]))
    if kind == "Metaspace":  # all of the text is the first token
        replacement, space = str(spec["replacement"]), "" if _metaspace_prepends(spec) else " "
        return functools.partial(_Map, lambda text: text.replace(replacement, space))
    if kind == "ByteLevel":
        return functools.partial(
            _HoldAll, lambda text: token_bytes(text).decode("utf-8", "replace")
        )
    return functools.partial(_HoldAll, functools.partial(_apply, _token_step(spec)))


def build_decoder(spec: dict[str, Any] | None) -> Decoder:
    """The ``decoder`` of a tokenizer.json (None: tokens joined with spaces)."""
    if spec is None:
        return Decoder([_Spaces])
    factories: list[StepFactory] = []
    joined = False
    for part in _flatten(spec):
        if joined:
            factory = _text_step(part)
            if factory is not None:
                factories.append(factory)
        elif part["type"] in ("Fuse", "ByteLevel"):
            joined = True
            if part["type"] == "ByteLevel":
                factories.append(_Bytes)
        else:
            factories.append(_token_step(part))
    return Decoder(factories)
