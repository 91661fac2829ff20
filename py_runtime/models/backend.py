"""The backend seam: where a causal LM's forward passes run.

ONNX Runtime Web in the page (web/worker/ort-backend.mjs, through
``hosts/pyodide.py``) or ``onnxruntime`` under CPython
(``hosts/onnxruntime_backend.py``). KV caches stay inside the backend,
addressed by integer handles; the generation loop is the same for both.
"""

from __future__ import annotations

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
