"""Grammars for tool calls: free text in which a call's marker can only start a
well-formed call to a declared tool, with arguments that match its ``inputSchema``.

One call syntax per family, the one its parser reads (and, for models whose
template has no tool format, the syntax ``models/prompted_tools.py`` teaches).
Families whose calls are not JSON objects after a marker (Pythonic, Qwen's XML
parameters) and Mistral's (its marker is a special token) are not held to a
grammar: their calls are parsed as before.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..engine.errors import PromptAPIError
from ..engine.grammar import Grammar, ToolTag
from ..engine.json_regular import schema_language
from ..engine.json_schema import enforceable
from ..engine.regular import to_regex

#: Per family: the trigger, and the text before and after a call's arguments
#: (``{name}`` is the tool's name as a JSON string).
CALL_SYNTAX: dict[str, tuple[str, str, str]] = {
    "hermes": ("<tool_call>", '<tool_call>\n{{"name": {name}, "arguments": ', "}\n</tool_call>"),
    "prompted": ("<tool_call>", '<tool_call>{{"name": {name}, "arguments": ', "}</tool_call>"),
    "llama": ('{"name": ', '{{"name": {name}, "parameters": ', "}"),
}

#: What a tool's arguments are held to when its schema has a keyword the engine
#: cannot hold: a JSON object.
ANY_OBJECT = {"type": "object"}


def arguments_language(schema: Any) -> str:
    """The arguments ``schema`` admits, as a regex (any JSON object when the schema
    cannot be held)."""
    try:
        return to_regex(schema_language(enforceable(schema)))
    except PromptAPIError:
        return to_regex(schema_language(ANY_OBJECT))


def call_openings(family: str, names: list[str]) -> dict[str, str]:
    """Per tool, the text that opens a call to it in ``family``'s syntax, up to its name
    (``<tool_call>{"name": "get_weather"``); empty for families without a grammar."""
    syntax = CALL_SYNTAX.get(family)
    if syntax is None:
        return {}
    begin = syntax[1]
    head = begin[: begin.index("{name}") + len("{name}")]
    return {name: head.format(name=json.dumps(name, ensure_ascii=False)) for name in names}


def tool_call_grammar(family: str, schemas: Mapping[str, Any]) -> Grammar | None:
    """The grammar for answers that may call the tools in ``schemas`` (name ->
    inputSchema) in ``family``'s syntax, or None for families without one."""
    syntax = CALL_SYNTAX.get(family)
    if syntax is None or not schemas:
        return None
    trigger, begin, end = syntax
    tags = []
    for name, schema in schemas.items():
        name_text = json.dumps(name, ensure_ascii=False)
        tags.append(ToolTag(begin.format(name=name_text), arguments_language(schema), end))
    return Grammar("tool-calls", triggers=(trigger,), tags=tuple(tags))
