"""Constrained decoding under CPython: llguidance (the library Chromium uses).

The page uses XGrammar's web build (web/worker/grammar.mjs); XGrammar's Python
package needs torch, llguidance needs nothing beyond NumPy here. Both get the same
``Grammar`` (engine/grammar.py): the engine's own regular languages.
"""

from __future__ import annotations

import json

import llguidance
import llguidance.numpy as llg_numpy
import numpy as np

from ..engine.grammar import Grammar, GrammarError


def grammar_text(grammar: Grammar, added: dict[str, int]) -> str:
    """The grammar in llguidance's own form; ``added`` is the tokenizer's added tokens
    (llguidance matches them only as tokens, never as text)."""
    if grammar.kind == "regex":
        return llguidance.LLMatcher.grammar_from_regex(grammar.source)
    # Free text in which a trigger starts a call (the lazy rule ends the text at the
    # first trigger), as llguidance's StructTag writes it, with added tokens as tokens;
    # a call's arguments are one lexeme: the engine's regex of its schema's texts.
    rules = [
        "%llguidance {}",
        "start: (" + " | ".join(f"tag_{i}" for i in range(len(grammar.tags))) + ")* TAG_TEXT",
        "TAG_TEXT: /(.|\\n)*/",
    ]
    for index, tag in enumerate(grammar.tags):
        trigger = next(t for t in grammar.triggers if tag.begin.startswith(t))
        begin, end = _literal(tag.begin[len(trigger) :], added), _literal(tag.end, added)
        rules.append(f"ARGS_{index}: /{tag.arguments}/")
        rest = f"{begin} ARGS_{index} {end}"
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
