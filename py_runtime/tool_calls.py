"""Tool calls in model output, per model family: streaming parsers.

A parser splits generated text, fed in arbitrary chunks (token by token, say),
into *segments*: text (``str``) and parsed calls (``ParsedCall``), in output
order. Text that might be the start of a call marker is held back until it is
known not to be one; whatever cannot be read as a call to a declared tool stays
text, verbatim.

Adding a family is one class with ``feed``/``finish`` plus one ``PARSERS`` entry
(and a rule in ``parser_for_model``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable
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


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _held_back(text: str, marker: str) -> int:
    """The length of the longest end of ``text`` that is a proper start of ``marker``."""
    for size in range(min(len(text), len(marker) - 1), 0, -1):
        if text.endswith(marker[:size]):
            return size
    return 0


class HermesParser:
    """Qwen2.5 / Qwen3 ("Hermes") calls:
    ``<tool_call>\\n{"name": ..., "arguments": {...}}\\n</tool_call>``.

    Calls may repeat and may have text before, between and after them; the
    whitespace around the JSON is optional. A call stays text, markers included,
    when its JSON does not parse (NaN/Infinity included), is not an object with a
    string ``name`` of a declared tool and an object ``arguments``, or when the
    output ends before ``</tool_call>``. The first ``</tool_call>`` ends a call.
    """

    START = "<tool_call>"
    END = "</tool_call>"

    def __init__(self, tool_names: Collection[str]) -> None:
        self.tool_names = frozenset(tool_names)
        self._buffer = ""
        self._inside = False  # after a START, waiting for its END
        self._scan = 0  # where to look for END in the buffer next

    def feed(self, text: str) -> list[Segment]:
        """Take the next chunk of output."""
        self._buffer += text
        out: list[Segment] = []
        while True:
            if not self._inside:
                at = self._buffer.find(self.START)
                if at < 0:
                    keep = _held_back(self._buffer, self.START)
                    cut = len(self._buffer) - keep
                    out.append(self._buffer[:cut])
                    self._buffer = self._buffer[cut:]
                    break
                out.append(self._buffer[:at])
                self._buffer = self._buffer[at + len(self.START) :]
                self._inside, self._scan = True, 0
            else:
                at = self._buffer.find(self.END, self._scan)
                if at < 0:
                    self._scan = max(0, len(self._buffer) - len(self.END) + 1)
                    break
                body = self._buffer[:at]
                self._buffer = self._buffer[at + len(self.END) :]
                self._inside = False
                out.append(self._call(body))
        return coalesce(out)

    def finish(self) -> list[Segment]:
        """The output ended: held-back text and any unterminated call come out as text."""
        rest = self.START + self._buffer if self._inside else self._buffer
        self._buffer, self._inside, self._scan = "", False, 0
        return coalesce([rest])

    def _call(self, body: str) -> Segment:
        """A call, or the verbatim text when ``body`` is not a valid call."""
        try:
            data = json.loads(body, parse_constant=_reject_constant)
        except ValueError:
            data = None
        if isinstance(data, dict):
            name, arguments = data.get("name"), data.get("arguments")
            if isinstance(name, str) and name in self.tool_names and isinstance(arguments, dict):
                return ParsedCall(name, arguments)
        return self.START + body + self.END


#: Parser classes by family name; each takes the declared tool names.
PARSERS: dict[str, Callable[[Collection[str]], ToolCallParser]] = {
    "hermes": HermesParser,
}

_HERMES_MODEL_TYPES = frozenset({"qwen2", "qwen2_moe", "qwen3", "qwen3_moe"})
_XML = (
    "the Qwen3.5 XML tool-call format "
    "(<tool_call><function=NAME><parameter=K>V</parameter></function></tool_call>)"
)
_PYTHONIC = "the pythonic tool-call format ([f(a=...)], LFM2 inside <|tool_call_start|>...)"
_LLAMA_JSON = 'the Llama 3.2 JSON tool-call format ({"name": ..., "parameters": {...}})'


def parser_for_model(model_type: str, chat_template: str) -> str:
    """The ``PARSERS`` family for a model, from config.json's ``model_type`` and its
    chat template; ``NotImplementedError`` names a known format not yet supported."""
    kind = model_type.lower()
    if kind.startswith("qwen3_5") or "<function=" in chat_template:
        raise NotImplementedError(f"{_XML} is not supported yet (model type {model_type!r}).")
    if kind in _HERMES_MODEL_TYPES or "<tool_call>" in chat_template:
        return "hermes"
    if kind.startswith(("lfm2", "gemma")) or "<|tool_call_start|>" in chat_template:
        raise NotImplementedError(f"{_PYTHONIC} is not supported yet (model type {model_type!r}).")
    if kind.startswith("llama"):
        raise NotImplementedError(
            f"{_LLAMA_JSON} is not supported yet (model type {model_type!r})."
        )
    raise NotImplementedError(f"No tool-call format is known for model type {model_type!r}.")


def make_parser(family: str, tool_names: Collection[str]) -> ToolCallParser:
    """A fresh parser of ``family`` for the declared ``tool_names``."""
    try:
        factory = PARSERS[family]
    except KeyError:
        raise NotImplementedError(f"No tool-call parser for {family!r}.") from None
    return factory(tool_names)
