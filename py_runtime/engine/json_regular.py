"""JSON Schemas as the engine's own regular languages.

A response constraint's schema (after ``json_schema.enforceable``) becomes a tree of
``regular.py``: the JSON texts the engine holds an answer to. Both hosts compile that
one language (XGrammar in the page, llguidance under CPython), so no grammar
library's own reading of a schema decides what is valid, and the engine can tell at
any point how an answer ends soonest (``regular.Prefix``).

What the language is (every text in it validates against the schema):

- JSON on one line: no whitespace, ``", "`` between items, ``": "`` after keys.
- Strings (``json_strings.py``): any character but ``"``, ``\\`` and controls, or the
  escapes ``\\" \\\\ \\/ \\b \\f \\n \\r \\t``; ``minLength``/``maxLength`` count
  characters; ``pattern`` (and the date/time formats) hold the value whole, written as JSON.
- Numbers: ``numbers.number_node`` (bounds held exactly, at most 15 significant digits).
- Objects: declared properties in their declared order, required ones always,
  optional ones maybe; no others when ``properties`` are declared (as XGrammar's strict
  mode did); an object without ``properties`` takes any keys with values of its
  ``additionalProperties`` schema.
- Arrays: ``prefixItems``, then ``items``, with ``minItems``/``maxItems``.
- ``enum``/``const``: their JSON texts; ``anyOf`` (and ``oneOf``): any branch, each
  with the keywords beside it; local ``$ref``.
- Recursion (``$ref`` cycles, values of any type) is unrolled ``MAX_DEPTH`` levels deep.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .errors import PromptAPIError
from .grammar import ITEM_SEPARATOR, KEY_SEPARATOR
from .json_strings import FORMAT_REGEXES, STRING_CHAR, lengths, string_value, within
from .numbers import number_node
from .regular import EMPTY, NOTHING, Node, alt, literal, parse, repeat, seq

#: How many times a ``$ref`` may be expanded inside itself.
MAX_DEPTH = 3
#: How deep containers nest (values of any type stop at ``MAX_ANY_DEPTH``).
MAX_NESTING = 12
MAX_ANY_DEPTH = 2
QUOTE = literal('"')
ITEMS = literal(ITEM_SEPARATOR)
KEY = literal(KEY_SEPARATOR)


def _unsupported(message: str) -> PromptAPIError:
    return PromptAPIError("NotSupportedError", f"Unsupported response constraint: {message}")


def json_text(value: Any) -> str:
    """``value`` as the grammar writes JSON."""
    return json.dumps(
        value, ensure_ascii=False, separators=(ITEM_SEPARATOR, KEY_SEPARATOR), allow_nan=False
    )


class _Compiler:
    def __init__(self, root: Any) -> None:
        self.root = root
        #: The references being expanded, outermost first (recursion is unrolled).
        self.refs: list[str] = []

    def resolve(self, ref: str) -> Any:
        if not ref.startswith("#"):
            raise _unsupported(f"the reference {ref!r} is not local.")
        target = self.root
        for part in ref[1:].split("/")[1:] if ref != "#" else []:
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(target, Mapping) or part not in target:
                raise _unsupported(f"the reference {ref!r} points nowhere.")
            target = target[part]
        return target

    def value(self, schema: Any, depth: int) -> Node:
        """The JSON texts valid against ``schema``."""
        if schema is True or schema == {}:
            return self.any_value(depth)
        if schema is False:
            return NOTHING
        if not isinstance(schema, Mapping):
            raise _unsupported("a schema is not an object.")
        if "$ref" in schema:
            ref = schema["$ref"]
            if self.refs.count(ref) >= MAX_DEPTH:
                return NOTHING
            rest = {k: v for k, v in schema.items() if k != "$ref"}
            target = self.resolve(ref)
            self.refs.append(ref)
            try:
                return self.value(_merge(target, rest) if rest else target, depth)
            finally:
                self.refs.pop()
        branches = schema.get("anyOf")
        if branches is not None:
            rest = {k: v for k, v in schema.items() if k != "anyOf"}
            return alt(*(self.value(_merge(branch, rest), depth) for branch in branches))
        if "const" in schema:
            values = [schema["const"]]
        elif "enum" in schema:
            values = list(schema["enum"])
        else:
            values = None
        if values is not None:
            return alt(*(literal(json_text(v)) for v in values if _allowed(v, schema)))
        kinds = schema.get("type")
        kinds = [kinds] if isinstance(kinds, str) else kinds or _implied_types(schema)
        return alt(*(self.typed(kind, schema, depth) for kind in kinds))

    def typed(self, kind: str, schema: Mapping[str, Any], depth: int) -> Node:
        if kind == "null":
            return literal("null")
        if kind == "boolean":
            return alt(literal("true"), literal("false"))
        if kind in ("integer", "number"):
            return number_node({**schema, "type": kind})
        if kind == "string":
            return seq(QUOTE, self.string(schema), QUOTE)
        if kind == "array":
            return self.array(schema, depth)
        if kind == "object":
            return self.object(schema, depth)
        raise _unsupported(f"the type {kind!r} is not a JSON schema type.")

    def string(self, schema: Mapping[str, Any]) -> Node:
        low, high = schema.get("minLength", 0), schema.get("maxLength")
        pattern = schema.get("pattern")
        if pattern is None and schema.get("format") in FORMAT_REGEXES:
            pattern = FORMAT_REGEXES[schema["format"]]
        elif pattern is not None and pattern.startswith("^(") and pattern.endswith(")$"):
            pattern = pattern[2:-2]  # json_schema.enforceable anchors patterns
        if pattern is None:
            return repeat(STRING_CHAR, low, high)
        node = parse(pattern)
        shortest, longest = lengths(node)
        if high is not None and (longest is None or longest > high):
            node = within(node, high)
            shortest, longest = lengths(node)
        if shortest < low or (high is not None and (longest is None or longest > high)):
            raise _unsupported(
                "a pattern together with minLength/maxLength can be held only where the "
                "pattern's own lengths can be made to fit them."
            )
        held = string_value(node)
        if held == NOTHING:
            raise _unsupported("the pattern admits no JSON string.")
        return held

    def array(self, schema: Mapping[str, Any], depth: int) -> Node:
        low, high = schema.get("minItems", 0), schema.get("maxItems")
        if depth >= MAX_NESTING:
            return literal("[]") if low == 0 else NOTHING
        slots = [self.value(item, depth + 1) for item in schema.get("prefixItems", [])]
        items = schema.get("items", True)
        rest = self.value(items, depth + 1) if items is not False else NOTHING

        def after(count: int) -> Node:
            """What may follow ``count`` (>= 1) items."""
            if count >= len(slots):
                if rest == NOTHING:
                    return EMPTY if count >= low else NOTHING
                top = None if high is None else high - count
                return repeat(seq(ITEMS, rest), max(low - count, 0), top)
            more = seq(ITEMS, slots[count], after(count + 1))
            if high is not None and count >= high:
                more = NOTHING
            return alt(EMPTY, more) if count >= low else more

        first = slots[0] if slots else rest
        body = NOTHING if high == 0 else seq(first, after(1))
        if low == 0:
            body = alt(EMPTY, body)
        return seq(literal("["), body, literal("]"))

    def object(self, schema: Mapping[str, Any], depth: int) -> Node:
        properties = schema.get("properties") or {}
        required = set(schema.get("required") or [])
        missing = required - set(properties)
        extra = schema.get("additionalProperties", True)
        if depth >= MAX_NESTING:
            return literal("{}") if not required else NOTHING
        if not properties:
            if missing:
                raise _unsupported("required properties must be declared in properties.")
            if extra is False:
                return literal("{}")
            value = self.value(extra, depth + 1)
            pair = seq(QUOTE, repeat(STRING_CHAR, 1, None), QUOTE, KEY, value)
            return seq(
                literal("{"), alt(EMPTY, seq(pair, repeat(seq(ITEMS, pair), 0, None))), literal("}")
            )
        if missing:
            raise _unsupported(
                f"the required properties {sorted(missing)} are not declared in properties."
            )
        pairs = [
            (name in required, seq(literal(json_text(name)), KEY, self.value(sub, depth + 1)))
            for name, sub in properties.items()
        ]
        # after[i][first]: properties i.. written after nothing (first) or after some.
        after: list[tuple[Node, Node]] = [(EMPTY, EMPTY)]
        for is_required, pair in reversed(pairs):
            next_first, next_more = after[0]
            with_first = seq(pair, next_more)
            if is_required:
                after.insert(0, (with_first, seq(ITEMS, pair, next_more)))
            else:
                maybe = seq(repeat(seq(ITEMS, pair), 0, 1), next_more)
                after.insert(0, (alt(with_first, next_first), maybe))
        return seq(literal("{"), after[0][0], literal("}"))

    def any_value(self, depth: int) -> Node:
        scalars = [
            literal("null"),
            literal("true"),
            literal("false"),
            number_node({"type": "number"}),
            seq(QUOTE, repeat(STRING_CHAR, 0, None), QUOTE),
        ]
        if depth >= MAX_ANY_DEPTH:
            return alt(*scalars, literal("[]"), literal("{}"))
        return alt(*scalars, self.array({}, depth), self.object({}, depth))


def _implied_types(schema: Mapping[str, Any]) -> list[str]:
    """The types a schema without ``type`` can have, from its keywords."""
    if any(k in schema for k in ("properties", "required", "additionalProperties")):
        return ["object"]
    if any(k in schema for k in ("items", "prefixItems", "minItems", "maxItems")):
        return ["array"]
    if any(k in schema for k in ("minLength", "maxLength", "pattern", "format")):
        return ["string"]
    if any(
        k in schema
        for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
    ):
        return ["number"]
    return ["null", "boolean", "number", "string", "array", "object"]


def _allowed(value: Any, schema: Mapping[str, Any]) -> bool:
    """Whether an ``enum``/``const`` value has one of the schema's types."""
    kinds = schema.get("type")
    if kinds is None:
        return True
    kinds = [kinds] if isinstance(kinds, str) else kinds
    kind_of = {
        type(None): "null",
        bool: "boolean",
        str: "string",
        list: "array",
        dict: "object",
    }.get(type(value))
    if isinstance(value, bool):
        kind_of = "boolean"
    elif isinstance(value, int):
        return "integer" in kinds or "number" in kinds
    elif isinstance(value, float):
        return "number" in kinds or ("integer" in kinds and value.is_integer())
    return kind_of in kinds


def _merge(schema: Any, siblings: Mapping[str, Any]) -> Any:
    """``schema`` with the keywords beside it (a ``$ref``'s or an ``anyOf``'s)."""
    if not siblings:
        return schema
    if schema is True:
        return dict(siblings)
    if not isinstance(schema, Mapping):
        return schema
    clash = set(schema) & set(siblings)
    if clash:
        raise _unsupported(
            f"the keywords {sorted(clash)} appear both beside and inside anyOf/oneOf/$ref."
        )
    return {**siblings, **schema}


def schema_language(schema: Any) -> Node:
    """The JSON texts the engine holds an answer to for ``schema`` (an enforceable
    schema: ``json_schema.enforceable``); NotSupportedError when none."""
    node = _Compiler(schema).value(schema, 0)
    if node == NOTHING:
        raise _unsupported("the schema admits no JSON value the engine can write.")
    return node
