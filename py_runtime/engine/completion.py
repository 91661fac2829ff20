"""How a constrained answer ends soonest: the token budget's last resort.

An answer is capped (``MAX_RESPONSE_TOKENS``, the context window); a model held to a
grammar may still be writing when the cap nears (digits of a number, one more array
item, a dotted word before an e-mail's ``@``). The generation loop asks the
``Completer`` for the shortest text that ends the answer in the grammar's language,
and writes it while it still fits, so a constrained answer is always whole:

- a regular language (a RegExp, a JSON Schema): the shortest match of what may
  follow the answer so far (``regular.Prefix``);
- tool calls: the rest of the call that is open (its name, its arguments' shortest
  JSON, its end), or nothing outside a call.

The next token may open what then needs an ending (a call, a JSON string): the loop
stops while there is room for ``opening`` (the shortest whole call) and one token more,
and takes back a step after which the ending no longer fits.
"""

from __future__ import annotations

from .grammar import Grammar
from .regular import NOTHING, Node, Prefix, alt, literal, parse, seq, shortest


class Completer:
    """Follows an answer held to ``grammar`` and says how it ends soonest."""

    def __init__(self, grammar: Grammar) -> None:
        self.grammar = grammar
        self._language = parse(grammar.source) if grammar.kind == "regex" else None
        self._prefix: Prefix | None = None
        self._fed = ""  # the text ``_prefix`` has followed
        self._calls: dict[str, Node] = {}
        #: The shortest whole tool call ('' for a regular language).
        self.opening = ""
        if self._language is None:
            calls = [
                seq(literal(t.begin), parse(t.arguments), literal(t.end)) for t in grammar.tags
            ]
            self.opening = min((shortest(c) or "" for c in calls), key=len, default="")

    def completion(self, text: str) -> str | None:
        """The shortest text that ends an answer that is ``text`` so far validly ('' when
        it may end now; None when nothing ends it, which a held answer never meets)."""
        if self._language is None:
            return self._call_completion(text)
        if self._prefix is None or not text.startswith(self._fed):
            self._prefix, self._fed = Prefix(self._language), ""
        if not self._prefix.feed(text[len(self._fed) :]):
            self._prefix = None
            return None
        self._fed = text
        return self._prefix.completion()

    def _call_completion(self, text: str) -> str | None:
        """Inside an open call: the rest of it; elsewhere nothing."""
        grammar = self.grammar
        opened = max(
            ((text.rfind(trigger), trigger) for trigger in grammar.triggers),
            default=(-1, ""),
        )
        at, trigger = opened
        if at < 0:
            return ""
        rest = text[at + len(trigger) :]
        if trigger not in self._calls:
            self._calls[trigger] = alt(
                *(
                    seq(literal(t.begin[len(trigger) :]), parse(t.arguments), literal(t.end))
                    for t in grammar.tags
                    if t.begin.startswith(trigger)
                )
            )
        language = self._calls[trigger]
        if language == NOTHING:
            return ""
        prefix = Prefix(language)
        if not prefix.feed(rest):
            return ""  # the call ended (its text goes on after it) or is not one
        return prefix.completion()
