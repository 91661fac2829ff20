"""The backend seam: where a causal LM's forward passes run.

ONNX Runtime Web in the page (web/worker/ort-backend.mjs, through
``hosts/pyodide.py``) or ``onnxruntime`` under CPython
(``hosts/onnxruntime_backend.py``). KV caches stay inside the backend,
addressed by integer handles; the generation loop is the same for both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ..engine.grammar import Grammar
from ..engine.vocabulary import Sampling


class Backend(Protocol):
    """Runs the model; the KV cache and the last logits stay inside the backend."""

    #: Milliseconds spent inside the runtime's run call, in total (benchmarks).
    @property
    def run_ms(self) -> float: ...

    def new_cache(self) -> int: ...

    def resources(self) -> dict[str, int]:
        """What it holds now: ``caches``, their ``tensors`` and grammar ``matchers``."""

    async def forward(self, cache: int, ids: list[int]) -> None:
        """Run ``ids`` after the cached positions; keep the last position's logits."""

    async def next_token(self, cache: int, sampling: Sampling) -> int:
        """Choose a token from the last logits (the vocabulary never reaches Python);
        under a grammar, among the tokens it allows, which it then accepts (-1: it
        allows none)."""

    async def speculate(
        self, cache: int, draft: list[int], sampling: Sampling
    ) -> tuple[list[int], bool]:
        """Jump-forward as speculative decoding, with ``draft`` (the grammar's forced
        text, tokenized on its own) as the draft: the tokens emitted, and whether the
        last of them still needs a forward pass.

        The draft runs in one forward pass that keeps every position's logits (the
        logits before ``draft[0]`` are the cache's last ones, so a draft rejected at
        its first token runs nothing). Each draft token is then judged as
        ``next_token`` would choose at its position: the same repetition penalty (over
        the tokens before it), the grammar's mask there, then greedy: kept if it is
        the argmax; sampling: kept with its probability, else a token is sampled from
        the others, renormalised (the draft is deterministic, so this samples exactly
        what token-by-token sampling would). At the first token not kept, the cache
        is cut back to the draft tokens kept and the token chosen instead ends the
        list, taken by the grammar but not run (it may be a stop token, or -1 when the
        grammar allows none): the caller runs it, or stops on it. When the whole draft
        is kept, it has run and the cache's last logits are its last position's
        (nothing pending). A backend may judge fewer tokens than given (a cap on a
        pass; a graph that gives the last position's logits only judges the first
        token alone, pending), so greedy answers are, token for token, the ones
        ``next_token`` alone gives."""

    async def score(
        self, cache: int, ids: list[int], also: Sequence[tuple[int, int]] = ()
    ) -> list[float]:
        """The log-probability of each of ``ids`` after the ones before it, the first
        from the cache's last logits (raw: no penalty, no grammar); then, from the
        same pass, of each ``(position, token)`` of ``also``: the token after
        ``ids[:position]`` (position < len(ids)). The cache is left as it was, last
        logits included."""

    def use_tokenizer(self, tokenizer_json: str, stop_ids: list[int]) -> None:
        """The model's tokenizer.json and stop tokens, for grammars (once, at load)."""

    async def constrain(self, cache: int, grammar: Grammar | None) -> None:
        """Hold the cache's next tokens to ``grammar`` (None: free them again).
        ``GrammarError`` when the grammar library cannot compile it."""

    def accept(self, cache: int, ids: list[int]) -> bool:
        """Advance the cache's grammar over ``ids`` (a prefix, forced tokens); False
        when it rejects one."""

    def forced(self, cache: int) -> str:
        """The text the cache's grammar allows next, and nothing else ('' if none)."""

    def cache_length(self, cache: int) -> int: ...

    def truncate(self, cache: int, length: int) -> None:
        """Keep only the first ``length`` positions."""

    async def clone(self, cache: int) -> int: ...

    def release(self, cache: int) -> None: ...
