"""What a constrained answer must match, in the form both grammar libraries take.

The engine decides *what* is allowed: a regular language it writes itself (a
RegExp's translation, or a JSON Schema's texts from ``json_regular.py``), or text in
which well-formed tool calls may start; the backend compiles it with its grammar
library (XGrammar in the page, llguidance under CPython) and masks the model's
choices token by token. JSON is written on one line, with ``", "`` between items and
``": "`` after keys, in both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

GrammarKind = Literal["regex", "tool-calls"]

#: JSON's separators in constrained output (items, keys), as models are trained on.
ITEM_SEPARATOR = ", "
KEY_SEPARATOR = ": "


@dataclass(frozen=True)
class ToolTag:
    """One declared tool's call: ``begin``, then ``arguments`` (the JSON texts its
    inputSchema admits, as a regex of the engine's dialect), then ``end``."""

    begin: str
    arguments: str
    end: str


@dataclass(frozen=True)
class Grammar:
    """A regular language (``source``: a regex in the dialect ``js_regex.translate``
    and ``regular.to_regex`` write), or free text in which a ``trigger`` can only
    start one of the ``tags``. ``json`` says the language is JSON texts (a schema's)."""

    kind: GrammarKind
    source: str = ""
    triggers: tuple[str, ...] = ()
    tags: tuple[ToolTag, ...] = field(default=())
    json: bool = False


class GrammarError(ValueError):
    """The backend's grammar library cannot compile a grammar."""
