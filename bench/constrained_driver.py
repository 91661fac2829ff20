"""A Runtime over one model (onnxruntime under CPython), driven as the worker drives
it, with the backend's calls counted and timed: what ``bench/constrained.py``'s parts
run their prompts through."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from py_runtime.engine.errors import PromptAPIError
from py_runtime.engine.grammar import Grammar
from py_runtime.engine.runtime import Runtime
from py_runtime.hosts.cpython import local_model
from py_runtime.hosts.llguidance_matcher import Vocabulary
from py_runtime.models.causal_lm import CausalLM

SMOLLM2 = Path.home() / ".cache" / "prompt-api-models" / "smollm2"
RANDOM = Path.home() / ".cache" / "prompt-api-bench" / "qwen2.5-0.5b-random"
THREADS = 2


@dataclass
class Counters:
    """What the backend did while they were current."""

    masked_steps: int = 0  # next_token() under a grammar
    steps: int = 0  # one-token forward calls under a grammar
    step_ms: float = 0.0  # their run_ms
    jump_calls: int = 0  # forward calls of jumped (several) tokens
    jump_tokens: int = 0
    mask_ms: float = 0.0
    compile_ms: dict[str, list[float]] = field(default_factory=dict)


@dataclass
class Answer:
    case: str
    prompt: str
    mode: str
    text: str
    calls: list[dict[str, Any]]
    seconds: float
    error: str = ""
    tokens: int = 0  # decoded (sampled or jumped), as run through the model


class Bench:
    """A Runtime over one model, driven as the worker drives it, with the backend's
    calls counted."""

    def __init__(self, label: str, folder: Path, dtype: str) -> None:
        self.label, self.folder, self.dtype = label, folder, dtype
        self.model: CausalLM = local_model(folder, dtype, threads=THREADS)  # type: ignore[arg-type]
        self.runtime = Runtime(self.model)
        self.loop = asyncio.new_event_loop()
        started = time.perf_counter()
        self.run(self.model.load(lambda _: None, lambda: False))
        self.load_s = time.perf_counter() - started
        self.counters = Counters()
        self.case = ""
        self.first_constrain_ms = 0.0
        #: Within one prompt(): None until its answer starts (the grammar is set, or the
        #: first token is chosen), then the tokens run through the model since.
        self.recording = False
        self.answer_tokens: int | None = None
        self._instrument()

    def run(self, coroutine: Any) -> Any:
        return self.loop.run_until_complete(coroutine)

    @property
    def backend(self) -> Any:
        assert self.model.backend is not None
        return self.model.backend

    def _instrument(self) -> None:
        backend = self.backend
        constrained: set[int] = set()
        constrain, forward, next_token = backend.constrain, backend.forward, backend.next_token

        async def timed_constrain(cache: int, grammar: Grammar | None) -> None:
            if grammar is None:
                constrained.discard(cache)
                await constrain(cache, None)
                return
            self._answer_starts()
            started = time.perf_counter()
            await constrain(cache, grammar)
            spent = (time.perf_counter() - started) * 1000
            self.counters.compile_ms.setdefault(self.case, []).append(spent)
            constrained.add(cache)

        async def counted_forward(cache: int, ids: list[int]) -> None:
            before = backend.run_ms
            await forward(cache, ids)
            if self.answer_tokens is not None:
                self.answer_tokens += len(ids)
            if cache in constrained:
                if len(ids) == 1:
                    self.counters.steps += 1
                    self.counters.step_ms += backend.run_ms - before
                else:
                    self.counters.jump_calls += 1
                    self.counters.jump_tokens += len(ids)

        async def counted_next_token(cache: int, sampling: Any) -> int:
            self._answer_starts()
            before = backend.mask_ms
            token = int(await next_token(cache, sampling))
            if cache in constrained:
                self.counters.masked_steps += 1
                self.counters.mask_ms += backend.mask_ms - before
            return token

        backend.constrain = timed_constrain
        backend.forward = counted_forward
        backend.next_token = counted_next_token

    def _answer_starts(self) -> None:
        if self.recording and self.answer_tokens is None:
            self.answer_tokens = 0

    @contextmanager
    def counting(self, counters: Counters | None = None) -> Iterator[Counters]:
        previous, self.counters = self.counters, counters or Counters()
        try:
            yield self.counters
        finally:
            self.counters = previous

    def vocabulary_ms(self) -> float:
        """The one-time preparation of the tokens for llguidance, timed on its own;
        then the backend's own first constrain() (preparation and a tiny grammar)."""
        tokenizer_json = (self.folder / "tokenizer.json").read_text(encoding="utf-8")
        width = self.backend._logits_width()
        started = time.perf_counter()
        Vocabulary(tokenizer_json, sorted(self.model.eos_ids), width)
        prepared = (time.perf_counter() - started) * 1000
        cache = self.backend.new_cache()
        started = time.perf_counter()
        self.run(self.backend.constrain(cache, Grammar("regex", "a")))
        self.first_constrain_ms = (time.perf_counter() - started) * 1000
        self.run(self.backend.constrain(cache, None))
        self.backend.release(cache)
        return prepared

    def plain_step_ms(self) -> float:
        """A decode step without a grammar: ``runtime.benchmark()`` (64-token prompt,
        20 greedy steps), after a warm-up."""
        self.run(self.runtime.benchmark(64, 20, lambda: False))
        result = self.run(self.runtime.benchmark(64, 20, lambda: False))
        return float(result["decodeMs"]) / 20

    def answer(
        self,
        case: str,
        options: dict[str, Any],
        prompt: str,
        constraint: dict[str, Any] | None,
        mode: str,
    ) -> Answer:
        self.case = case
        chunks: list[dict[str, Any]] = []

        async def settle(_: Any) -> bool:
            return True

        started = time.perf_counter()
        error = ""
        session = 0
        try:
            session = self.run(self.runtime.create(options, True, lambda _: None, lambda: False))[
                "session"
            ]
            self.recording, self.answer_tokens = True, None
            self.run(
                self.runtime.prompt(
                    session, prompt, constraint, False, chunks.append, settle, lambda: False
                )
            )
        except PromptAPIError as failure:
            error = f"{failure.name}: {failure}"
        except Exception as failure:  # a crash is a result here: report it, go on
            error = f"{type(failure).__name__}: {failure}"
        finally:
            if session:
                self.runtime.destroy(session)
        tokens = self.answer_tokens or 0
        self.recording, self.answer_tokens = False, None
        text = "".join(c["text"] for c in chunks if c["kind"] == "text")
        calls = [c for c in chunks if c["kind"] == "tool-call"]
        seconds = time.perf_counter() - started
        return Answer(case, prompt, mode, text, calls, seconds, error, tokens)

    def tokens(self, text: str) -> int:
        assert self.model.tokenizer is not None
        return len(self.model.tokenizer.encode(text))


def pick_random_dtype(choice: str) -> tuple[Bench, str]:
    """The random model in q8 or fp32: ``auto`` measures a 20-token decode of each
    (after a warm-up) and keeps the faster."""
    if choice != "auto":
        return Bench("random", RANDOM, choice), f"{choice} (chosen on the command line)"
    rates: dict[str, float] = {}
    for dtype in ("q8", "fp32"):
        bench = Bench("random", RANDOM, dtype)
        bench.run(bench.runtime.benchmark(64, 20, lambda: False))  # warm-up
        runs = [bench.run(bench.runtime.benchmark(64, 20, lambda: False)) for _ in range(2)]
        rates[dtype] = max(r["decodeTokensPerSecond"] for r in runs)
        print(f"  random {dtype}: 20-token decode {rates[dtype]:.1f} tok/s", flush=True)
        del bench
    best = max(rates, key=lambda d: rates[d])
    note = ", ".join(f"{d} {r:.1f} tok/s" for d, r in rates.items())
    return Bench("random", RANDOM, best), f"{best} (faster for a 20-token decode: {note})"
