"""A call's arguments written by the runtime, each value chosen by the model's scores.

Given the right tool, SmolLM2-135M-Instruct writes its arguments right for a few
requests in ten (docs/tool-use.md): it copies the wrong passage (the message as the
recipient), drops what the request states ("tomorrow"), misreads a name it has just
read. So when the runtime has opened a call (``tool_choice.py``), it writes the
arguments object itself, in the schema's order. At each step it takes what the model
scores highest (the log-probability of the text's tokens after the call so far) among
what may come next:

- the next property (an optional one, or the next required one) or the object's end;
- a value: enum and ``const`` values; ``true`` and ``false``; every integer of a
  bounded range of at most ``RANGE`` values; the numbers the request writes in digits;
  for a string, the request's passages (quoted ones, and runs of up to ``MAX_WORDS``
  words) and the model's own value (greedy, up to its closing quote); an object's
  properties likewise, one by one.

Every candidate is checked against the arguments' language (the grammar the call is
held to). Where a value has no candidate (an array, a union, a number the request
does not write), the runtime stops and the model writes the rest of the call itself,
held to that grammar. Whether every value written is one the request states tells
the decision to call (``tool_choice.py``) what the model's margin alone does not.
Nothing here names a tool or a request.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from ..engine.regular import NOTHING, Prefix

#: The longest run of the request's words offered as a string value.
MAX_WORDS = 6
#: Bounded integer ranges up to this many values are offered whole.
RANGE = 16
#: Values scored in full: those starting with one of the model's likeliest first tokens.
STARTS = 3
#: What may follow a value inside an object.
DELIMITERS = (", ", "}")

#: log P(text | the call so far) for each text, the call so far being ``prefix``; with a
#: count, of the text's first tokens only (after those all the texts share).
ScoreTexts = Callable[[str, Sequence[str], int | None], Awaitable[list[float]]]
#: The model's own string value after ``prefix`` (which ends with the opening quote).
GreedyString = Callable[[str], Awaitable[str | None]]


def passages(request: str) -> list[str]:
    """The strings a request offers: its quoted passages and its runs of up to
    ``MAX_WORDS`` words, without the punctuation around them."""
    found: dict[str, None] = {}
    for quoted in re.findall(r'"([^"]+)"|“([^”]+)”', request):
        found[next(q for q in quoted if q)] = None
    words = request.split()
    for start in range(len(words)):
        for end in range(start + 1, min(len(words), start + MAX_WORDS) + 1):
            run = " ".join(words[start:end]).strip(".,;:!?\"'“”()")
            if run:
                found[run] = None
    return list(found)


def numbers(text: str) -> list[int | float]:
    """The numbers a text writes in digits, each time it writes one."""
    return [
        float(digits) if "." in digits else int(digits)
        for digits in re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.]*\d)", text)
    ]


def candidates(schema: Any, request: str) -> list[str] | None:
    """The JSON texts offered for a value of ``schema`` (None: the model writes it)."""
    if not isinstance(schema, dict):
        return None
    if "const" in schema:
        return [json.dumps(schema["const"], ensure_ascii=False)]
    if isinstance(schema.get("enum"), list):
        return [json.dumps(value, ensure_ascii=False) for value in schema["enum"]]
    kind = schema.get("type")
    if kind == "boolean":
        return ["true", "false"]
    if kind == "integer":
        low, high = schema.get("minimum"), schema.get("maximum")
        if isinstance(low, int) and isinstance(high, int) and 0 <= high - low < RANGE:
            return [str(value) for value in range(low, high + 1)]
    if kind in ("integer", "number"):
        return [json.dumps(value) for value in dict.fromkeys(numbers(request))] or None
    if kind == "string":
        return [json.dumps(text, ensure_ascii=False) for text in passages(request)]
    return None


def _free(schema: Any) -> bool:
    """Whether ``schema`` is a string of any words (no enum, no ``const``)."""
    return (
        isinstance(schema, dict)
        and schema.get("type") == "string"
        and "enum" not in schema
        and "const" not in schema
    )


class ArgumentWriter:
    """Writes one call's arguments (see the module's docstring)."""

    def __init__(
        self,
        language: Prefix,
        request: str,
        score: ScoreTexts,
        greedy: GreedyString,
    ) -> None:
        self.language, self.request = language, request  # the arguments' language
        self.score, self.greedy = score, greedy
        self._passages = {text.casefold() for text in passages(request)}
        self._sources = {"request": 0, "elsewhere": 0}  # where the values written came from

    async def write(self, opening: str, schema: Any) -> tuple[str, bool]:
        """The arguments' text after the call's ``opening``: a whole object, or as far
        as the runtime could choose (the model writes the rest); and whether the call
        is grounded in the request: whole, with at least one value, every value (but
        booleans) one the request states: a passage of it, an enum value it names, a
        number it writes."""
        text, whole = await self._object(opening, "", schema)
        grounded = whole and self._sources["request"] > 0 and not self._sources["elsewhere"]
        return text, grounded

    def _begins(self, text: str) -> bool:
        """Whether ``text`` begins an object the call's grammar accepts."""
        return self.language.after(text) != NOTHING

    async def _best(self, prefix: str, texts: list[str]) -> str:
        if len(texts) == 1:
            return texts[0]
        scores = await self.score(prefix, texts, None)
        return texts[max(range(len(texts)), key=lambda i: scores[i])]

    def _stated(self, schema: Any, offered: list[str], text: str) -> list[str] | None:
        """Of the values offered for ``schema``, those the request states (None: values
        it cannot state: free strings, which are its own words, and booleans): an enum
        or ``const`` string it names, as a word; a number it writes that the arguments
        so far did not take."""
        if _free(schema):
            return None
        values = [json.loads(value) for value in offered]
        if any(isinstance(v, bool) or not isinstance(v, (str, int, float)) for v in values):
            return None
        if all(isinstance(value, str) for value in values):
            return [
                offered[i]
                for i, value in enumerate(values)
                if re.search(rf"(?<!\w){re.escape(value)}(?!\w)", self.request, re.IGNORECASE)
            ]
        taken = numbers(text)
        written = numbers(self.request)
        return [
            offered[i]
            for i, value in enumerate(values)
            if value in written and written.count(value) > taken.count(value)
        ]

    async def _object(self, opening: str, text: str, schema: Any) -> tuple[str, bool]:
        """``text`` and an object of ``schema`` after it; whether it is whole."""
        properties = schema.get("properties") if isinstance(schema, dict) else None
        if not isinstance(properties, dict) or not self._begins(text + "{"):
            return text, False
        required = set(schema.get("required") or ())
        text += "{"
        names = list(properties)
        done = 0  # the properties written or passed over
        while True:
            # What may come next: the key of a property up to the next required one or
            # the next optional one whose value the request states (one whose values it
            # could state but does not is passed over), or the object's end; the one
            # the model scores highest.
            options: dict[str, str | None] = {}
            due = False  # a property that must be written comes before the end
            for name in names[done:]:
                key = (", " if text[-1] != "{" else "") + json.dumps(name) + ": "
                if not self._begins(text + key):
                    continue
                offered = candidates(properties[name], self.request)
                stated = self._stated(properties[name], offered, text) if offered else None
                if name in required or stated:
                    options[key], due = name, True  # what the request states is written
                    break
                if stated is None:
                    options[key] = name
            if not due and self._begins(text + "}"):
                options["}"] = None
            if not options:
                return text, False
            step = await self._best(opening + text, list(options))
            name = options[step]
            text += step
            if name is None:
                return text, True
            done = names.index(name) + 1
            text, whole = await self._value(opening, text, properties[name])
            if not whole:
                return text, False

    async def _value(self, opening: str, text: str, schema: Any) -> tuple[str, bool]:
        if isinstance(schema, dict) and schema.get("type") == "object":
            return await self._object(opening, text, schema)
        offered = candidates(schema, self.request)
        if offered is None:
            return text, False
        stated = self._stated(schema, offered, text)
        offered = stated or offered
        free = _free(schema)
        if free:
            own = await self.greedy(opening + text + '"')
            if own is not None:
                offered.append(json.dumps(own, ensure_ascii=False))
        # A value is whole where a delimiter may follow it; strings end at their quote,
        # other values are scored with the delimiter the model writes after them.
        texts = []
        for value in dict.fromkeys(offered):
            ends = [value + d for d in DELIMITERS if self._begins(text + value + d)]
            if value.startswith('"'):
                texts += [value] if ends else []
            else:
                texts += ends
        if not texts:
            return text, False
        if len(texts) > STARTS:
            # The texts whose first token (after what they share) is among the model's
            # STARTS likeliest: a pass each for those only.
            firsts = await self.score(opening + text, texts, 1)
            kept = sorted(set(firsts), reverse=True)[:STARTS]
            texts = [t for t, first in zip(texts, firsts, strict=True) if first >= kept[-1]]
        best = await self._best(opening + text, texts)
        for delimiter in DELIMITERS:
            if not best.startswith('"') and best.endswith(delimiter):
                best = best[: -len(delimiter)]
        if free:
            source = "request" if json.loads(best).casefold() in self._passages else "elsewhere"
            self._sources[source] += 1
        elif stated is not None:
            self._sources["request" if best in stated else "elsewhere"] += 1
        return text + best, True
