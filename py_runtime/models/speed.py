"""Prefill and decode speed of a loaded causal LM, through its Backend.

The same code runs in the page (through ``promptAPIRuntime.benchmark()``) and
under CPython, so the two are measured the same way: prefill of a fixed prompt of
``prompt_tokens`` ids into an empty cache, then ``decode_tokens`` greedy steps
with end-of-sequence ignored.
"""

from __future__ import annotations

import time

from ..engine.protocol import SpeedResult
from ..engine.vocabulary import Sampling
from ..tokenizer import Tokenizer
from .backend import Backend

GREEDY = Sampling(top_k=1)


async def measure_speed(
    backend: Backend, tokenizer: Tokenizer, prompt_tokens: int, decode_tokens: int
) -> SpeedResult:
    """Milliseconds for the prefill and for the decode steps, and their rates."""
    seed = tokenizer.encode("The quick brown fox jumps over the lazy dog. ")
    ids = (seed * (prompt_tokens // len(seed) + 1))[:prompt_tokens]
    cache = backend.new_cache()
    try:
        started = time.perf_counter()
        await backend.forward(cache, ids)
        token = await backend.next_token(cache, GREEDY)
        prefilled = time.perf_counter()
        run_before = backend.run_ms
        for _ in range(decode_tokens):
            await backend.forward(cache, [token])
            token = await backend.next_token(cache, GREEDY)
        decoded = time.perf_counter()
        decode_run_ms = backend.run_ms - run_before
    finally:
        backend.release(cache)
    prefill_ms = (prefilled - started) * 1000
    decode_ms = (decoded - prefilled) * 1000
    return {
        "promptTokens": prompt_tokens,
        "decodeTokens": decode_tokens,
        "prefillMs": prefill_ms,
        "decodeMs": decode_ms,
        "prefillTokensPerSecond": prompt_tokens / prefill_ms * 1000,
        "decodeTokensPerSecond": decode_tokens / decode_ms * 1000 if decode_ms else 0.0,
        # The share of a decode step spent outside the runtime's run (bridge, glue, sampling).
        "outsideRunShare": 1 - decode_run_ms / decode_ms if decode_ms else 0.0,
    }
