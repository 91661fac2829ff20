"""The backend seam: KV caches held by the backend, addressed by handles."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

#: Model file suffix per dtype, as in Transformers.js / Optimum exports.
DTYPE_SUFFIXES = {
    "fp32": "",
    "fp16": "_fp16",
    "q8": "_quantized",
    "int8": "_int8",
    "uint8": "_uint8",
    "q4": "_q4",
    "q4f16": "_q4f16",
    "bnb4": "_bnb4",
}


def model_file(dtype: str) -> str:
    """``onnx/model{suffix}.onnx`` for a dtype."""
    if dtype not in DTYPE_SUFFIXES:
        raise ValueError(f"Unknown dtype {dtype!r}; use one of {', '.join(DTYPE_SUFFIXES)}.")
    return f"onnx/model{DTYPE_SUFFIXES[dtype]}.onnx"


@dataclass(frozen=True)
class Sampling:
    """How the next token is chosen; ``top_k`` 1 (or temperature 0) is greedy."""

    top_k: int = 1
    temperature: float = 1.0

    @property
    def greedy(self) -> bool:
        return self.top_k <= 1 or self.temperature <= 0


class Backend(Protocol):
    """Runs the model; the KV cache and the last logits stay inside the backend."""

    #: Milliseconds spent inside the runtime's run call, in total (benchmarks).
    run_ms: float

    def new_cache(self) -> int: ...

    async def forward(self, cache: int, ids: list[int]) -> None:
        """Run ``ids`` after the cached positions; keep the last position's logits."""

    async def next_token(self, cache: int, sampling: Sampling) -> int:
        """Choose a token from the last logits (the vocabulary never reaches Python)."""

    def cache_length(self, cache: int) -> int: ...

    def truncate(self, cache: int, length: int) -> None:
        """Keep only the first ``length`` positions."""

    async def clone(self, cache: int) -> int: ...

    def release(self, cache: int) -> None: ...
