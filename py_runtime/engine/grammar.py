"""What a constrained answer must match, in the form both grammar libraries take.

The engine decides *what* is allowed (a response constraint's JSON Schema or
regular expression, or text with well-formed tool calls); the backend compiles it
with its grammar library (XGrammar in the page, llguidance under CPython) and masks
the model's choices token by token. JSON is written on one line, with ``", "``
between items and ``": "`` after keys, in both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

GrammarKind = Literal["json-schema", "regex", "tool-calls"]

#: JSON's separators in constrained output (items, keys), as models are trained on.
ITEM_SEPARATOR = ", "
KEY_SEPARATOR = ": "


@dataclass(frozen=True)
class ToolTag:
    """One declared tool's call: ``begin``, then arguments matching ``schema``, then ``end``."""

    begin: str
    schema: str  # the tool's inputSchema, as JSON text
    end: str


@dataclass(frozen=True)
class Grammar:
    """A JSON Schema (``source`` is its JSON text), a regular expression in the
    dialect both libraries read (``js_regex.translate``), or free text in which a
    ``trigger`` can only start one of the ``tags``."""

    kind: GrammarKind
    source: str = ""
    triggers: tuple[str, ...] = ()
    tags: tuple[ToolTag, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        """The plain object the page's backend takes (web/worker/grammar.mjs)."""
        if self.kind != "tool-calls":
            return {"kind": self.kind, "source": self.source}
        return {
            "kind": self.kind,
            "triggers": list(self.triggers),
            "tags": [{"begin": t.begin, "schema": t.schema, "end": t.end} for t in self.tags],
        }


class GrammarError(ValueError):
    """The backend's grammar library cannot compile a grammar."""
