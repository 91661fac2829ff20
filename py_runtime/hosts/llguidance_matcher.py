"""Constrained decoding under CPython: llguidance (the library Chromium uses).

The page uses XGrammar's web build (web/worker/grammar.mjs); XGrammar's Python
package needs torch, llguidance needs nothing beyond NumPy here. Both get the same
``Grammar`` (engine/grammar.py) and write JSON the same way: one line, ``", "`` and
``": "`` as separators.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import llguidance
import llguidance.numpy as llg_numpy

if TYPE_CHECKING:
    from llguidance._lib import JsonCompileOptions
import numpy as np

from ..engine.grammar import ITEM_SEPARATOR, KEY_SEPARATOR, Grammar, GrammarError

#: llguidance's JSON options (``x-guidance``): no free whitespace, the separators above.
JSON_OPTIONS: JsonCompileOptions = {
    "whitespace_flexible": False,
    "item_separator": ITEM_SEPARATOR,
    "key_separator": KEY_SEPARATOR,
}


def _with_options(schema_text: str) -> dict[str, Any] | bool:
    schema = json.loads(schema_text)
    return {**schema, "x-guidance": dict(JSON_OPTIONS)} if isinstance(schema, dict) else schema


def grammar_text(grammar: Grammar, added: dict[str, int]) -> str:
    """The grammar in llguidance's own form; ``added`` is the tokenizer's added tokens
    (llguidance matches them only as tokens, never as text)."""
    if grammar.kind == "regex":
        return llguidance.LLMatcher.grammar_from_regex(grammar.source)
    if grammar.kind == "json-schema":
        schema = json.loads(grammar.source)
        return llguidance.LLMatcher.grammar_from_json_schema(
            schema if isinstance(schema, dict) else {"anyOf": [schema]}, overrides=JSON_OPTIONS
        )
    # Free text in which a trigger starts a call (the lazy rule ends the text at the
    # first trigger), as llguidance's StructTag writes it, with added tokens as tokens.
    rules = [
        "%llguidance {}",
        "start: (" + " | ".join(f"tag_{i}" for i in range(len(grammar.tags))) + ")* TAG_TEXT",
        "TAG_TEXT: /(.|\\n)*/",
    ]
    for index, tag in enumerate(grammar.tags):
        trigger = next(t for t in grammar.triggers if tag.begin.startswith(t))
        arguments = json.dumps(_with_options(tag.schema))
        begin, end = _literal(tag.begin[len(trigger) :], added), _literal(tag.end, added)
        rest = f"{begin} %json {arguments} {end}"
        if trigger in added:
            rules.append(f"tag_{index}: TAG_TEXT <[{added[trigger]}]> {rest}")
        else:
            rules.append(f"tag_{index}_trigger[lazy]: TAG_TEXT {json.dumps(trigger)}")
            rules.append(f"tag_{index}: tag_{index}_trigger {rest}")
    return "\n".join(rules) + "\n"


def _literal(text: str, added: dict[str, int]) -> str:
    """``text`` as Lark: quoted strings, and ``<[id]>`` for the added tokens in it."""
    parts: list[str] = []
    while text:
        found = [(text.find(t), t) for t in added if t and t in text]
        if not found:
            parts.append(json.dumps(text))
            break
        at, token = min(found, key=lambda f: (f[0], -len(f[1])))
        if at:
            parts.append(json.dumps(text[:at]))
        parts.append(f"<[{added[token]}]>")
        text = text[at + len(token) :]
    return " ".join(parts) or '""'


class Vocabulary:
    """The model's tokens for llguidance, prepared once (0.3 s for 49k tokens, 6 s for 152k)."""

    def __init__(self, tokenizer_json: str, stop_ids: list[int], logits_width: int) -> None:
        self.tokenizer = llguidance.LLTokenizer(
            tokenizer_json, n_vocab=logits_width, eos_token=stop_ids or None
        )
        self.width = logits_width
        self.added = {t["content"]: t["id"] for t in json.loads(tokenizer_json)["added_tokens"]}

    def matcher(self, grammar: Grammar) -> Matcher:
        text = grammar_text(grammar, self.added)
        error = llguidance.LLMatcher.validate_grammar(text, self.tokenizer)
        if error:
            raise GrammarError(error)
        return Matcher(llguidance.LLMatcher(self.tokenizer, text, log_level=0), self.width)


class Matcher:
    """One answer's position in its grammar, and the mask of the tokens it allows."""

    def __init__(self, matcher: llguidance.LLMatcher, width: int) -> None:
        self.matcher = matcher
        self.bitmask = llg_numpy.allocate_token_bitmask(1, width)
        self.width = width

    def mask(self, logits: np.ndarray) -> np.ndarray | None:
        """``logits`` with every token the grammar forbids at -inf (a copy), or None
        when it allows none."""
        llg_numpy.fill_next_token_bitmask(self.matcher, self.bitmask)
        if self.matcher.is_error():
            raise GrammarError(self.matcher.get_error())
        bits = np.unpackbits(self.bitmask[0].view(np.uint8), bitorder="little")[: self.width]
        if not bits.any():
            return None
        return np.where(bits.astype(bool), logits, -np.inf).astype(np.float32)

    def accept(self, ids: list[int]) -> bool:
        return all(self.matcher.consume_token(token) for token in ids)

    def forced(self) -> str:
        """The text the grammar allows next and nothing else (jump-forward), up to the
        first special token (llguidance writes those as 0xFF and the token's id)."""
        forced = self.matcher.compute_ff_bytes().split(b"\xff", 1)[0]
        return forced.decode("utf-8", errors="ignore")
