"""The pythonic tool-call format: ``[f(a=1), g(b="x")]`` (Gemma 3, LFM2)."""

from __future__ import annotations

import ast
import math
import re
import warnings
from collections.abc import Collection
from typing import Any

from .base import Brackets, ParsedCall, Schemas, Segment, coalesce
from .marked import MarkedParser

#: The start of an answer that is a list of calls, and the texts that may still become one.
_LIST_HEAD = re.compile(r"\[\s*[A-Za-z_]\w*\s*\(")
_LIST_HEAD_PREFIX = re.compile(r"\[\s*(?:[A-Za-z_]\w*\s*)?")
_JSON_NAMES = {"true": True, "false": False, "null": None}


class PythonicParser(MarkedParser):
    """Python call syntax, read with ``ast`` (never evaluated), in three places:

    - LFM2: ``<|tool_call_start|>[f(a=1), g(b=2)]<|tool_call_end|>``, anywhere;
    - Gemma 3: a ```` ```tool_code ```` fence closed by ```` ``` ````, anywhere;
    - Gemma 3: the answer itself, when it starts (after whitespace) with ``[NAME(``:
      held until its brackets balance (strings skipped), then read as one list.

    A block holds a list of calls, a call, or several of either on their own lines;
    the bare answer-start form is one list. Calls name a declared tool and take
    keyword arguments only, with literal values: strings, numbers (finite), True /
    False / None (or JSON's true / false / null), lists, and dicts with string keys;
    no repeated keywords. A block or list with anything else stays text, verbatim,
    as does one the output ends inside.
    """

    LFM2 = ("<|tool_call_start|>", "<|tool_call_end|>")
    FENCE = ("```tool_code", "```")
    PAIRS = (LFM2, FENCE)

    def __init__(self, tool_names: Collection[str], schemas: Schemas | None = None) -> None:
        super().__init__(tool_names, schemas)
        self._lead: str | None = ""  # the answer's start, until it is known not to be a list
        self._list: Brackets | None = None

    def feed(self, text: str) -> list[Segment]:
        """Take the next chunk of output."""
        if self._lead is None:
            return super().feed(text)
        lead = self._lead = self._lead + text
        if self._list is None:
            at = len(lead) - len(lead.lstrip())
            if _LIST_HEAD.match(lead, at):
                self._list = Brackets(at, "'\"")
            elif at == len(lead) or _LIST_HEAD_PREFIX.fullmatch(lead, at):
                return []
            else:
                self._lead = None
                return super().feed(lead)
        at = self._list.start
        end = self._list.end(lead)
        if end is None:
            return []
        self._lead, self._list = None, None
        calls = self._read(lead[at:end], bare=True)
        head: list[Segment] = [lead[:end]] if calls is None else [lead[:at], *calls]
        return coalesce([*head, *super().feed(lead[end:])])

    def finish(self) -> list[Segment]:
        """The output ended: held-back text and any unfinished call come out as text."""
        lead, self._lead, self._list = self._lead, "", None
        return coalesce([lead]) if lead is not None else super().finish()

    def _calls(self, start: str, body: str) -> list[ParsedCall] | None:
        return self._read(body.strip(), bare=False)

    def _read(self, source: str, bare: bool) -> list[ParsedCall] | None:
        """The calls in ``source``, or None when it is not a valid set of calls."""
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # invalid escape sequences and the like
                tree = ast.parse(source, mode="eval" if bare else "exec")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        nodes: list[ast.AST]
        if isinstance(tree, ast.Expression):
            nodes = [tree.body] if isinstance(tree.body, ast.List) else []
        elif isinstance(tree, ast.Module):
            nodes = [s.value if isinstance(s, ast.Expr) else s for s in tree.body]
        else:
            return None
        calls: list[ast.AST] = []
        for node in nodes:
            if isinstance(node, ast.List):
                calls.extend(node.elts)
            else:
                calls.append(node)
        try:
            parsed = [self._call(node) for node in calls]
        except (ValueError, RecursionError):
            return None
        return parsed or None

    def _call(self, node: ast.AST) -> ParsedCall:
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name) or node.args:
            raise ValueError("not a call with keyword arguments only")
        name = node.func.id
        if name not in self.tool_names:
            raise ValueError(f"{name!r} is not a declared tool")
        arguments: dict[str, Any] = {}
        for keyword in node.keywords:
            if keyword.arg is None or keyword.arg in arguments:
                raise ValueError("** or a repeated keyword")
            arguments[keyword.arg] = literal(keyword.value)
        return ParsedCall(name, arguments)


def literal(node: ast.AST) -> Any:
    """The JSON value a literal expression stands for; ValueError for anything else."""
    if isinstance(node, ast.Constant):
        value = node.value
        if value is None or isinstance(value, str | bool | int):
            return value
        if isinstance(value, float) and math.isfinite(value):
            return value
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = literal(node.operand)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return -value if isinstance(node.op, ast.USub) else value
    elif isinstance(node, ast.List):
        return [literal(item) for item in node.elts]
    elif isinstance(node, ast.Dict):
        out: dict[str, Any] = {}
        for key, item in zip(node.keys, node.values, strict=True):
            name = literal(key) if key is not None else None
            if not isinstance(name, str):
                raise ValueError("dict keys must be strings")
            out[name] = literal(item)
        return out
    elif isinstance(node, ast.Name) and node.id in _JSON_NAMES:
        return _JSON_NAMES[node.id]
    raise ValueError(f"{ast.dump(node)[:40]} is not a literal")
