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
  bounded range of at most ``RANGE`` values; the numbers the request writes (in digits
  or words; where the property names a unit of time, its durations in that unit); for
  a string, the request's passages (quoted ones, runs of up to ``MAX_WORDS`` words, and
  its dates, times and currencies in standard form) and the model's own value (greedy,
  up to its closing quote), scored both in the call and in a focused conversation (the
  request, then the property's description); what is written is the likeliest passage
  not yet written, one the request states outright (quoted, a name) first; the model's
  own value is never written where the request has a passage: it beating them all says
  the request does not state the value (the call is not grounded); where the
  description spells out a form
  ("Date as YYYY-MM-DD", "currency code"), the first value in that form the request
  states that no earlier property took, and what such properties take is not offered
  to the object's other strings; an object's properties likewise, one by one.

Every candidate is checked against the arguments' language (the grammar the call is
held to). Where a value has no candidate (an array, a union, a number the request
does not write), the runtime stops and the model writes the rest of the call itself,
held to that grammar. Whether the request states what is written (every value from
it, one at least outright: a number, a named enum value, a date in the form asked, a
quoted passage, a name, not only a run of its words, which any request has; no string
written twice, where a request states each value once) tells the decision to call
(``tool_choice.py``) what the model's margin alone does not.
Nothing here names a tool or a request.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, NamedTuple

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
#: log P(text | label) for each text, in a conversation of the request alone, the
#: answer beginning with ``label`` (a property's description and a colon).
FocusTexts = Callable[[str, Sequence[str]], Awaitable[list[float]]]


_MONTHS = "january february march april may june july august september october november december"
_MONTH = rf"(?P<month>{'|'.join(m[:3] + '[a-z]*' for m in _MONTHS.split())})\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>\d{4})"
_DATES = [
    re.compile(rf"(?<!\w){_MONTH} {_DAY},? {_YEAR}(?!\w)", re.IGNORECASE),  # March 14, 2026
    re.compile(rf"(?<!\w){_DAY} (?:of )?{_MONTH},? {_YEAR}(?!\w)", re.IGNORECASE),  # 14 March 2026
]
_TIME = re.compile(r"(?<![\w:])(\d{1,2})(?::(\d{2}))? ?([ap])\.?m\.?(?!\w)", re.IGNORECASE)
#: The ISO 4217 codes of the most traded currencies, by the names people write for
#: them (a bare "dollars" taken as US dollars, as people mostly mean) and their signs.
CURRENCIES = {
    "USD": ("US dollars?|U\\.S\\. dollars?|American dollars?|dollars?|bucks", "$"),
    "EUR": ("euros?", "€"),
    "GBP": ("British pounds?|pounds? sterling|sterling|pounds?", "£"),
    "JPY": ("Japanese yen|yen", "¥"),
    "CHF": ("Swiss francs?", ""),
    "CAD": ("Canadian dollars?", ""),
    "AUD": ("Australian dollars?", ""),
    "NZD": ("New Zealand dollars?", ""),
    "HKD": ("Hong Kong dollars?", ""),
    "SGD": ("Singapore dollars?", ""),
    "CNY": ("Chinese yuan|yuan|renminbi", ""),
    "INR": ("Indian rupees?|rupees?", "₹"),
    "KRW": ("South Korean won|Korean won", "₩"),
    "MXN": ("Mexican pesos?", ""),
    "BRL": ("Brazilian reals?|reais", ""),
    "SEK": ("Swedish kron(?:a|or)", ""),
    "NOK": ("Norwegian kron(?:e|er)", ""),
    "DKK": ("Danish kron(?:e|er)", ""),
    "PLN": ("Polish zloty|zloty", ""),
    "ZAR": ("South African rand|rand", ""),
    "TRY": ("Turkish lira", ""),
    "RUB": ("Russian roubles?|rubles?|roubles?", ""),
}
_CURRENCY = re.compile(
    "|".join(
        rf"(?P<{code}>(?<!\w)(?:{names})(?!\w){'|' + re.escape(sign) if sign else ''})"
        for code, (names, sign) in CURRENCIES.items()
    ),
    re.IGNORECASE,
)
#: The standard forms a property's description may spell out ("Date as YYYY-MM-DD",
#: "Three-letter currency code"): ISO 8601 dates and times, ISO 4217 codes.
SPELLED_FORMS = {
    "YYYY-MM-DD": re.compile(r"\d{4}-\d{2}-\d{2}"),
    "HH:MM": re.compile(r"\d{2}:\d{2}"),
    "currency code": re.compile(r"[A-Z]{3}"),
}


class Reading(NamedTuple):
    """A value a request writes in words, read in its standard form."""

    value: str  # "2026-03-14"
    start: int  # where the request writes it
    written: str  # "March 14, 2026"


def standard_forms(request: str) -> list[Reading]:
    """The dates, times of day and currencies a request writes in words, in the
    standard forms schemas ask for: "March 14, 2026" and "14th of March 2026" as
    "2026-03-14", "3pm" as "15:00", "7:30 a.m." as "07:30" (ISO 8601); "Swiss francs"
    as "CHF" (ISO 4217)."""
    months = _MONTHS.split()
    found: list[Reading] = []
    for pattern in _DATES:
        for match in pattern.finditer(request):
            word, day = match["month"].lower(), int(match["day"])
            month = next((n for n, name in enumerate(months, 1) if name.startswith(word)), 0)
            if month and 1 <= day <= 31:
                date = f"{match['year']}-{month:02}-{day:02}"
                found.append(Reading(date, match.start(), match[0]))
    for match in _TIME.finditer(request):
        hour, minute, half = match.groups()
        if 1 <= int(hour) <= 12 and int(minute or 0) < 60:
            hours = int(hour) % 12 + (12 if half.lower() == "p" else 0)
            found.append(Reading(f"{hours:02}:{minute or '00'}", match.start(), match[0]))
    for match in _CURRENCY.finditer(request):
        code = next(code for code, name in match.groupdict().items() if name)
        found.append(Reading(code, match.start(), match[0]))
    return found


def quotations(request: str) -> list[str]:
    """The passages a request quotes ("..." or “...”)."""
    return [next(q for q in pair if q) for pair in re.findall(r'"([^"]+)"|“([^”]+)”', request)]


def names(request: str) -> list[str]:
    """The passages a request begins with a name: a capitalised word where no sentence
    starts, not "I" ("Tokyo", "Anna", "Book club")."""
    found = []
    for passage in passages(request):
        first = passage.split()[0]
        if not passage[0].isupper() or first == "I" or first.startswith(("I'", "I’")):
            continue
        for match in re.finditer(re.escape(passage), request):
            before = request[: match.start()].rstrip(" \"'“”(")
            if before and before[-1] not in ".!?":
                found.append(passage)
                break
    return found


def passages(request: str) -> list[str]:
    """The strings a request offers: its quoted passages, its runs of up to
    ``MAX_WORDS`` words without the punctuation around them, and the dates and times it
    writes, in their standard form (``standard_forms``)."""
    found: dict[str, None] = dict.fromkeys(r.value for r in standard_forms(request))
    found |= dict.fromkeys(quotations(request))
    words = request.split()
    for start in range(len(words)):
        for end in range(start + 1, min(len(words), start + MAX_WORDS) + 1):
            run = " ".join(words[start:end]).strip(".,;:!?\"'“”()")
            if run:
                found[run] = None
    return list(found)


_UNITS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen "
    "fourteen fifteen sixteen seventeen eighteen nineteen"
).split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_NUMBER = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?)(?![\w.]*\d)"  # digits: 75.5, 2026
    rf"|\b(?:({'|'.join(_TENS)})(?:[- ]({'|'.join(_UNITS[1:10])}))?|({'|'.join(_UNITS)}))\b",
    re.IGNORECASE,
)


def numbers(text: str) -> list[int | float]:
    """The numbers a text writes, in digits or as words up to ninety-nine ("two
    adults", "twenty-five"), each time it writes one."""
    found: list[int | float] = []
    for digits, tens, unit, alone in _NUMBER.findall(text):
        if digits:
            found.append(float(digits) if "." in digits else int(digits))
        elif tens:
            value = 20 + 10 * _TENS.index(tens.lower())
            found.append(value + (_UNITS.index(unit.lower()) if unit else 0))
        else:
            found.append(_UNITS.index(alone.lower()))
    return found


#: Units of time, in seconds, by the words that name them.
_SECONDS = {"second": 1, "sec": 1, "minute": 60, "min": 60, "hour": 3600, "hr": 3600, "day": 86400}
_DURATION = re.compile(
    rf"(?<![\w.])(\d+(?:\.\d+)?|an?|half an?|{'|'.join(_TENS + _UNITS)})"
    rf"(?:[- ]({'|'.join(_UNITS[1:10])}))? ?"
    rf"({'|'.join(_SECONDS)})s?\b( and a half)?",
    re.IGNORECASE,
)


def quantities(schema: Any, request: str, name: str = "") -> list[int | float]:
    """The numbers a request states for property ``name`` of ``schema``: those it
    writes (``numbers``); where the property's name or description names a unit of
    time ("duration_minutes", "Length in minutes"), its durations in that unit only
    ("2 hours" states 120 minutes; "an hour and a half", 90; "home by 8", none)."""
    description = schema.get("description") if isinstance(schema, dict) else None
    said = " ".join([name.replace("_", " "), description if isinstance(description, str) else ""])
    unit = next((u for u in _SECONDS if re.search(rf"\b{u}s?\b", said, re.IGNORECASE)), None)
    if unit is None:
        return numbers(request)
    durations: list[int | float] = []
    for amount, unit_word, named, half in _DURATION.findall(request):
        word = amount.lower()
        count = 0.5 if word.startswith("half") else 1 if word in ("a", "an") else numbers(amount)[0]
        count += numbers(unit_word)[0] if unit_word else 0
        value = (count + (0.5 if half else 0)) * _SECONDS[named.lower()] / _SECONDS[unit]
        durations.append(int(value) if value == int(value) else round(value, 4))
    return durations


def candidates(schema: Any, request: str, name: str = "") -> list[str] | None:
    """The JSON texts offered for a value of ``schema``, property ``name`` (None: the
    model writes it)."""
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
        return [
            json.dumps(value) for value in dict.fromkeys(quantities(schema, request, name))
        ] or None
    if kind == "string":
        return [json.dumps(text, ensure_ascii=False) for text in passages(request)]
    return None


def spelled_form(schema: Any) -> re.Pattern[str] | None:
    """The form the schema's description spells out ("Date as YYYY-MM-DD"), if any."""
    description = schema.get("description") if isinstance(schema, dict) else None
    if not isinstance(description, str):
        return None
    return next((form for spelled, form in SPELLED_FORMS.items() if spelled in description), None)


def in_spelled_form(schema: Any, offered: list[str]) -> list[str]:
    """Of the JSON strings offered, those in the form the schema's description spells
    out, taken as JSON Schema's ``format`` would be, where some are; else all."""
    form = spelled_form(schema)
    kept = [v for v in offered if form and form.fullmatch(json.loads(v))]
    return kept or offered


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
        focus: FocusTexts,
    ) -> None:
        self.language, self.request = language, request  # the arguments' language
        self.score, self.greedy, self.focus = score, greedy, focus
        self._passages = passages(request)
        self._folded = {text.casefold() for text in self._passages}
        said = [*quotations(request), *names(request)]
        self._outright = {text.casefold() for text in said}  # quoted passages, names
        self._readings = standard_forms(request)
        self._in_forms: dict[re.Pattern[str], list[Reading]] = {}  # by form, read once
        #: Where the values written came from: stated outright, a run of the request's
        #: words, elsewhere (the model's own).
        self._sources = {"stated": 0, "passage": 0, "elsewhere": 0}
        self._strings: list[str] = []  # the string values counted, casefolded
        self._taken: list[str] = []  # the free strings written, casefolded

    async def write(self, opening: str, schema: Any) -> tuple[str, bool]:
        """The arguments' text after the call's ``opening``: a whole object, or as far
        as the runtime could choose (the model writes the rest); and whether the call
        is grounded in the request: whole, every value (but booleans) from the request,
        one at least stated outright (a number it writes, an enum value it names, a
        value in a spelled form, a passage it quotes, a name), no string written twice (the
        recipient and the message both "home by 8")."""
        text, whole = await self._object(opening, "", schema)
        grounded = whole and self._sources["stated"] > 0 and not self._sources["elsewhere"]
        grounded = grounded and len(set(self._strings)) == len(self._strings)
        return text, grounded

    def _begins(self, text: str) -> bool:
        """Whether ``text`` begins an object the call's grammar accepts."""
        return self.language.after(text) != NOTHING

    async def _best(self, prefix: str, texts: list[str]) -> str:
        if len(texts) == 1:
            return texts[0]
        scores = await self.score(prefix, texts, None)
        return texts[max(range(len(texts)), key=lambda i: scores[i])]

    def _stated(
        self, schema: Any, offered: list[str], text: str, name: str = ""
    ) -> list[str] | None:
        """Of the values offered for ``schema``, those the request states (None: values
        it cannot state: free strings, which are its own words, and booleans): an enum
        or ``const`` string it names, as a word; a number it writes that the arguments
        so far did not take; of the strings in the form the description spells out,
        the first the arguments so far did not take (people state such values in the
        order schemas declare them: "from 1200 yen to pounds", "from Paris to Rome")."""
        if _free(schema):
            form = spelled_form(schema)
            if form is None:
                return None
            in_form = [json.dumps(r.value, ensure_ascii=False) for r in self._in_form(form)]
            return [value for value in in_form if value not in text][:1]
        values = [json.loads(value) for value in offered]
        if any(isinstance(v, bool) or not isinstance(v, (str, int, float)) for v in values):
            return None
        if all(isinstance(value, str) for value in values):
            # Where the request names each; a value named only within a longer one's
            # name ("economy" in "premium economy") is not named.
            spans = [
                [m.span() for m in re.finditer(rf"(?<!\w){re.escape(v)}(?!\w)", self.request, re.I)]
                for v in values
            ]
            every = [span for found in spans for span in found]
            return [
                offered[i]
                for i, found in enumerate(spans)
                if any(
                    not any(a <= start and end <= b and b - a > end - start for a, b in every)
                    for start, end in found
                )
            ]
        taken = numbers(text)
        written = quantities(schema, self.request, name)
        return [
            offered[i]
            for i, value in enumerate(values)
            if value in written and written.count(value) > taken.count(value)
        ]

    def _in_form(self, form: re.Pattern[str]) -> list[Reading]:
        """The values the request states in ``form``, in the order it writes them:
        those it writes in words (``standard_forms``) and those it writes so."""
        if form not in self._in_forms:
            found = [r for r in self._readings if form.fullmatch(r.value)]
            for passage in self._passages:
                if form.fullmatch(passage) and (start := self.request.find(passage)) >= 0:
                    found.append(Reading(passage, start, passage))
            kept: dict[str, Reading] = {}
            for reading in sorted(found, key=lambda r: r.start):
                kept.setdefault(reading.value, reading)
            self._in_forms[form] = list(kept.values())
        return self._in_forms[form]

    async def _object(self, opening: str, text: str, schema: Any) -> tuple[str, bool]:
        """``text`` and an object of ``schema`` after it; whether it is whole."""
        properties = schema.get("properties") if isinstance(schema, dict) else None
        if not isinstance(properties, dict) or not self._begins(text + "{"):
            return text, False
        required = set(schema.get("required") or ())
        # What the properties held to a form take, as the request writes it ("March 14,
        # 2026" for a date): not offered within the object's free strings.
        forms = [form for p in properties.values() if (form := spelled_form(p))]
        claimed = [r.written.casefold() for form in forms for r in self._in_form(form)]
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
                offered = candidates(properties[name], self.request, name)
                stated = self._stated(properties[name], offered, text, name) if offered else None
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
            text, whole = await self._value(opening, text, properties[name], name, claimed)
            if not whole:
                return text, False

    async def _value(
        self, opening: str, text: str, schema: Any, name: str = "", claimed: Sequence[str] = ()
    ) -> tuple[str, bool]:
        if isinstance(schema, dict) and schema.get("type") == "object":
            return await self._object(opening, text, schema)
        offered = candidates(schema, self.request, name)
        if offered is None:
            return text, False
        stated = self._stated(schema, offered, text, name)
        offered = stated or offered
        free = _free(schema)
        if free and not stated:
            # The model's own value: where it beats every passage, the request likely
            # does not state the value, and the call is not grounded.
            own = await self.greedy(opening + text + '"')
            if own is not None:
                offered.append(json.dumps(own, ensure_ascii=False))
            offered = in_spelled_form(schema, offered)
        if free and spelled_form(schema) is None:
            unclaimed = [v for v in offered if not any(c in v.casefold() for c in claimed)]
            offered = unclaimed or offered
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
        if free and len(texts) == 1:
            self._count(texts[0], stated, free)
            return text + texts[0], True
        if free:
            # Scored twice, the scores added: in the call, and in a focused conversation
            # (the request, then the property's description: "The contact's name: "),
            # where a small model tells a name from a message better.
            label = schema.get("description") or name
            scores = await self.score(opening + text, texts, None)
            focused = await self.focus(f"{label}: ", texts)
            ranked = sorted(zip(scores, focused, texts, strict=True), key=lambda s: -s[0] - s[1])
            best = ranked[0][2]
            self._count(best, stated, free)
            return text + self._written(best, [t for *_, t in ranked]), True
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
        self._count(best, stated, free)
        return text + best, True

    def _written(self, best: str, ranked: list[str]) -> str:
        """The free string written, of those ``ranked`` (JSON, best first): the likeliest
        of the request's passages not yet written (a request states each value once),
        one it states outright first (a quoted passage or a name, not over a date, time
        or currency it writes); the model's own value only where the request has no
        passage. Whether the call is grounded is judged on the model's likeliest,
        ``best``: where its own value beats every passage, the request likely does not
        state the value, and a call opened all the same takes the request's words, not
        what the model made up."""
        folded = {text: json.loads(text).casefold() for text in ranked}
        said = [t for t in ranked if folded[t] in self._folded]
        fresh = [t for t in said if folded[t] not in self._taken]
        outright = [
            t for t in fresh if folded[t] in self._outright and not self._over_reading(folded[t])
        ]
        written = (outright or fresh or said or [best])[0]
        self._taken.append(folded[written])
        return written

    def _over_reading(self, folded: str) -> bool:
        """Whether a passage (casefolded) is written in the request over a date, time
        or currency it writes ("Dentist on March" over "March 14, 2026")."""
        spans = [(r.start, r.start + len(r.written)) for r in self._readings]
        return any(
            match.start() < end and start < match.end()
            for match in re.finditer(re.escape(folded), self.request.casefold())
            for start, end in spans
        )

    def _count(self, value: str, stated: list[str] | None, free: bool) -> None:
        """Count where a value written (JSON) came from: stated outright (one of
        ``stated``, a quoted passage, a name), a passage of the request, elsewhere; booleans
        (``stated`` None, not free) are not counted."""
        folded = json.loads(value).casefold() if value.startswith('"') else None
        if folded is not None:
            self._strings.append(folded)
        if stated and value in stated:
            source = "stated"
        elif free and folded is not None:
            outright, passage = folded in self._outright, folded in self._folded
            source = "stated" if outright else "passage" if passage else "elsewhere"
        elif stated is not None:
            source = "elsewhere"
        else:
            return
        self._sources[source] += 1
