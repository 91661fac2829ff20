"""Tool calls in model output, per model family: one module per format.

Adding a family is one parser class with ``feed``/``finish`` (see ``base``) plus
one ``PARSERS`` entry and a rule in ``parser_for_model``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from .base import ParsedCall, Segment, ToolCallParser, coalesce
from .hermes import HermesParser

__all__ = [
    "PARSERS",
    "HermesParser",
    "ParsedCall",
    "Segment",
    "ToolCallParser",
    "coalesce",
    "make_parser",
    "parser_for_model",
]

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
