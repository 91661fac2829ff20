"""Tool calls in model output, per model family: one module per format.

Adding a family is one parser class with ``feed``/``finish`` (see ``base``) plus
one ``PARSERS`` entry and a rule in ``parser_for_model``.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from .base import ParsedCall, ParserFactory, Schemas, Segment, ToolCallParser, coalesce
from .hermes import HermesParser
from .llama import LlamaJsonParser
from .mistral import MistralParser
from .pythonic import PythonicParser
from .qwen_xml import QwenXmlParser

__all__ = [
    "PARSERS",
    "HermesParser",
    "LlamaJsonParser",
    "MistralParser",
    "ParsedCall",
    "ParserFactory",
    "PythonicParser",
    "QwenXmlParser",
    "Schemas",
    "Segment",
    "ToolCallParser",
    "coalesce",
    "make_parser",
    "parser_for_model",
]

#: Parser classes by family name; each takes the declared tool names (and schemas).
PARSERS: dict[str, ParserFactory] = {
    "hermes": HermesParser,
    "qwen_xml": QwenXmlParser,
    "llama": LlamaJsonParser,
    "pythonic": PythonicParser,
    "mistral": MistralParser,
}

_HERMES_MODEL_TYPES = frozenset({"qwen2", "qwen2_moe", "qwen3", "qwen3_moe"})

#: Template text that names a family's call syntax, checked in this order.
_MARKERS = (
    ("<function=", "qwen_xml"),
    ("<tool_call>", "hermes"),
    ("[TOOL_CALLS]", "mistral"),
    ("<|tool_call_start|>", "pythonic"),
    ("tool_code", "pythonic"),
    ("<|python_tag|>", "llama"),
)

#: Model types (prefixes) whose family holds when their template handles tools at all.
_MODEL_TYPES = (
    (("llama",), "llama"),
    (("lfm2",), "pythonic"),
    (("gemma",), "pythonic"),
    (("mistral", "mixtral", "ministral"), "mistral"),
)

#: A template that handles tools reads ``tools`` or messages' ``tool_calls``.
_TOOL_SUPPORT = re.compile(r"\btools\b|\btool_calls\b")
_LLAMA_TOOL_SUPPORT = re.compile(r'"parameters"|\bipython\b')


def parser_for_model(model_type: str, chat_template: str) -> str:
    """The ``PARSERS`` family for a model, from config.json's ``model_type`` and its
    chat template source.

    First by type: Qwen3.5 (``qwen3_5*``) is ``qwen_xml``, Qwen2/Qwen3 ``hermes``
    (unless the template writes ``<function=``). Then by the call syntax the
    template writes (``_MARKERS``). Then by type again, for a template that handles
    tools (reads ``tools``/``tool_calls``; Llama: writes ``"parameters"`` or
    ``ipython``): llama*, lfm2*, gemma*, mistral/mixtral/ministral*.
    ``NotImplementedError`` otherwise: the template cannot show the model tools.
    """
    kind = model_type.lower()
    if kind.startswith("qwen3_5"):
        return "qwen_xml"
    if kind in _HERMES_MODEL_TYPES and "<function=" not in chat_template:
        return "hermes"
    for marker, family in _MARKERS:
        if marker in chat_template:
            return family
    for prefixes, family in _MODEL_TYPES:
        if kind.startswith(prefixes):
            support = _LLAMA_TOOL_SUPPORT if family == "llama" else _TOOL_SUPPORT
            if support.search(chat_template):
                return family
            raise NotImplementedError(
                f"The chat template of this {model_type!r} model has no tool-call support "
                f"(the {family} format needs one that renders tools)."
            )
    raise NotImplementedError(
        f"No tool-call format is known for model type {model_type!r}: its chat template "
        "writes no known tool-call syntax."
    )


def make_parser(
    family: str, tool_names: Collection[str], schemas: Schemas | None = None
) -> ToolCallParser:
    """A fresh parser of ``family`` for the declared ``tool_names``; ``schemas`` (tool
    name -> input schema) type the values of formats whose values are text."""
    try:
        factory = PARSERS[family]
    except KeyError:
        raise NotImplementedError(f"No tool-call parser for {family!r}.") from None
    return factory(tool_names, schemas)
