"""The CPython backend: ``onnxruntime`` and NumPy (tests and benchmarks).

It drives the graph that is there: its inputs and outputs are read by
``graph_signature.py`` (Optimum's and onnxruntime-genai's exports, with or without
``position_ids``, ``num_logits_to_keep`` / ``logits_to_keep``, KV caches and recurrent
states such as LFM2's convolutions).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort

from ..engine.grammar import Grammar
from ..engine.vocabulary import Sampling
from .graph_signature import KEEP_INPUTS, Signature, read_signature
from .llguidance_matcher import Matcher, Vocabulary


@dataclass
class _Cache:
    past: dict[str, np.ndarray] = field(default_factory=dict)
    length: int = 0
    logits: np.ndarray | None = None
    ids: list[int] = field(default_factory=list)  # the tokens in the cache
    matcher: Matcher | None = None  # the grammar the next tokens are held to


#: The most draft tokens one ``speculate`` runs (it keeps their logits: k x vocabulary).
MAX_DRAFT = 32


def apply_repetition_penalty(logits: np.ndarray, ids: list[int], penalty: float) -> np.ndarray:
    """Transformers' RepetitionPenaltyLogitsProcessor, over the tokens in ``ids``."""
    seen = np.unique(np.array(ids, dtype=np.int64))
    penalized = logits.copy()
    values = penalized[seen]
    penalized[seen] = np.where(values > 0, values / penalty, values * penalty)
    return penalized


def choose(
    logits: np.ndarray,
    sampling: Sampling,
    rng: np.random.Generator,
    proposed: int | None = None,
) -> int:
    """Argmax, or a draw from the softmax of the ``top_k`` largest (finite) logits at
    ``temperature``. A ``proposed`` token (a draft's) is kept with its probability, else
    one of the others is drawn renormalised: together, a draw from the same softmax."""
    if sampling.greedy:
        return int(np.argmax(logits))
    k = min(sampling.top_k, int(np.isfinite(logits).sum()))
    top = np.argpartition(logits, -k)[-k:]
    scaled = logits[top] / sampling.temperature
    weights = np.exp(scaled - scaled.max())
    probabilities = weights / weights.sum()
    if proposed is not None:
        others = top != proposed
        if rng.random() < probabilities[~others].sum() or not others.any():
            return proposed
        top, probabilities = top[others], probabilities[others] / probabilities[others].sum()
    return int(rng.choice(top, p=probabilities))


def _log_sum_exp(row: np.ndarray) -> float:
    top = float(row.max())
    return top + float(np.log(np.exp(row - top).sum()))


class OnnxRuntimeBackend:
    def __init__(
        self,
        model_path: str | Path,
        threads: int | None = None,
        config: dict[str, Any] | None = None,
    ) -> None:
        options = ort.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
        # As in the page (ort-session.mjs): constant weights are dequantized once, at
        # load, not on every step.
        options.add_session_config_entry("session.disable_quant_qdq", "1")
        self.session = ort.InferenceSession(
            str(model_path), options, providers=["CPUExecutionProvider"]
        )
        # A keep input may be an initializer a feed overrides, as well as an input.
        keep = [i for i in self.session.get_overridable_initializers() if i.name in KEEP_INPUTS]
        self.signature: Signature = read_signature(
            [(i.name, list(i.shape), i.type) for i in [*self.session.get_inputs(), *keep]],
            [o.name for o in self.session.get_outputs()],
            config or {},
        )
        self._output_names = [o.name for o in self.session.get_outputs()]
        logits = next(o for o in self.session.get_outputs() if o.name == "logits")
        #: Whether one pass can give logits for several positions (jump-forward's
        #: verification needs them): the graph keeps as many as asked, or all of them.
        self.speculates = self.signature.keep_input is not None or logits.shape[1] != 1
        self._caches: dict[int, _Cache] = {}
        self._next = 0
        #: Positions run through the model, in total (for KV-reuse tests).
        self.forwarded = 0
        #: Forward passes (``InferenceSession.run`` calls), in total.
        self.passes = 0
        #: Milliseconds spent inside ``InferenceSession.run``, in total (benchmarks).
        self.run_ms = 0.0
        #: Milliseconds spent computing and applying grammar masks, in total.
        self.mask_ms = 0.0
        self._tokenizer: tuple[str, list[int]] | None = None
        self._vocabulary: Vocabulary | None = None
        self._rng = np.random.default_rng()

    def _empty_past(self) -> dict[str, np.ndarray]:
        """Every state's first value: empty KV caches, zero recurrent states."""
        return {
            state.input: np.zeros(
                state.shape, dtype=np.float16 if state.dtype == "float16" else np.float32
            )
            for state in self.signature.states
        }

    def new_cache(self) -> int:
        self._next += 1
        self._caches[self._next] = _Cache(self._empty_past())
        return self._next

    async def forward(self, cache: int, ids: list[int]) -> None:
        self._run(self._caches[cache], ids, 1)

    def _run(self, state: _Cache, ids: list[int], keep: int) -> np.ndarray:
        """Run ``ids`` after the cache's positions; the logits of the last ``keep``
        positions (fewer when the graph gives fewer), as float32 rows. The last row is
        the cache's last logits."""
        total = state.length + len(ids)
        signature = self.signature
        feeds: dict[str, Any] = {"input_ids": np.array([ids], dtype=np.int64), **state.past}
        if "attention_mask" in signature.inputs:
            feeds["attention_mask"] = np.ones((1, total), dtype=np.int64)
        if "position_ids" in signature.inputs:
            feeds["position_ids"] = np.arange(state.length, total, dtype=np.int64)[None, :]
        if signature.keep_input is not None:
            feeds[signature.keep_input] = np.array(
                [keep] if signature.keep_rank else keep, dtype=np.int64
            )
        started = time.perf_counter()
        outputs = dict(zip(self._output_names, self.session.run(None, feeds), strict=True))
        self.run_ms += (time.perf_counter() - started) * 1000
        rows: np.ndarray = outputs["logits"][0, -keep:].astype(np.float32)
        state.logits = rows[-1]
        state.past = {s.input: outputs[s.output] for s in signature.states}
        state.length = total
        state.ids.extend(ids)
        self.forwarded += len(ids)
        self.passes += 1
        return rows

    def use_tokenizer(self, tokenizer_json: str, stop_ids: list[int]) -> None:
        self._tokenizer = (tokenizer_json, stop_ids)

    def _logits_width(self) -> int:
        width = self.session.get_outputs()[0].shape[-1]
        if isinstance(width, int):
            return width
        assert self._tokenizer is not None
        return int(json.loads(self._tokenizer[0])["model"].get("vocab_size", 0)) or 0

    async def constrain(self, cache: int, grammar: Grammar | None) -> None:
        state = self._caches[cache]
        if grammar is None:
            state.matcher = None
            return
        if self._vocabulary is None:
            assert self._tokenizer is not None, "use_tokenizer() must run first"
            self._vocabulary = Vocabulary(*self._tokenizer, self._logits_width())
        state.matcher = self._vocabulary.matcher(grammar)

    def accept(self, cache: int, ids: list[int]) -> bool:
        matcher = self._caches[cache].matcher
        return matcher is None or matcher.accept(ids)

    def forced(self, cache: int) -> str:
        matcher = self._caches[cache].matcher
        return matcher.forced() if matcher else ""

    async def next_token(self, cache: int, sampling: Sampling) -> int:
        state = self._caches[cache]
        assert state.logits is not None, "forward() must run first"
        return self._take(state, state.logits, state.ids, sampling, None)

    async def speculate(
        self, cache: int, draft: list[int], sampling: Sampling
    ) -> tuple[list[int], bool]:
        """Backend.speculate: verify ``draft`` (the grammar's forced text, tokenized) as
        speculative decoding does, its tokens' logits from one forward pass."""
        state = self._caches[cache]
        assert state.logits is not None, "forward() must run first"
        draft = draft[:MAX_DRAFT]
        if not draft:
            return [], False
        # The first token needs no pass: the cache's last logits decide it.
        first = self._take(state, state.logits, state.ids, sampling, draft[0])
        if first != draft[0] or len(draft) == 1 or not self.speculates:
            return [first], True
        base, before = state.length, state.logits
        rows = self._run(state, draft, len(draft))
        if len(rows) < len(draft):  # the graph kept fewer positions: verify one at a time
            self.speculates = False
            self.truncate(cache, base)
            state.logits = before
            return [first], True
        for i in range(1, len(draft)):
            token = self._take(state, rows[i - 1], state.ids[: base + i], sampling, draft[i])
            if token != draft[i]:
                self.truncate(cache, base + i)
                state.logits = rows[i - 1]
                return [*draft[:i], token], True
        return draft, False

    async def score(
        self, cache: int, ids: list[int], also: Sequence[tuple[int, int]] = ()
    ) -> list[float]:
        """Backend.score: the positions after the first run in one pass where the graph
        keeps their logits, else one at a time."""
        state = self._caches[cache]
        assert state.logits is not None, "forward() must run first"
        if not ids:
            return []
        base, before = state.length, state.logits
        rows = [before]
        if len(ids) > 1 and self.speculates:
            rows += list(self._run(state, ids[:-1], len(ids) - 1))
            if len(rows) < len(ids):  # the graph kept fewer positions
                self.speculates = False
                self.truncate(cache, base)
                rows = [before]
        while len(rows) < len(ids):
            rows.append(self._run(state, [ids[len(rows) - 1]], 1)[-1])
        self.truncate(cache, base)
        state.logits = before
        totals = [_log_sum_exp(row) for row in rows]
        pairs = [*enumerate(ids), *also]
        return [float(rows[at][token] - totals[at]) for at, token in pairs]

    def _take(
        self,
        state: _Cache,
        logits: np.ndarray,
        ids: list[int],
        sampling: Sampling,
        proposed: int | None,
    ) -> int:
        """The token chosen from one position's ``logits`` (after ``ids``): repetition
        penalty, the grammar's mask, then argmax or top-k sampling, which the grammar
        then takes (-1: it allows none). With a ``proposed`` token (a draft's), the
        choice is speculative decoding's: greedy takes the argmax as ever (the proposal
        when it is that); sampling accepts the proposal with its probability, else
        samples the others renormalised, which together is sampling from the
        distribution itself."""
        if sampling.repetition_penalty != 1.0:
            logits = apply_repetition_penalty(logits, ids, sampling.repetition_penalty)
        if state.matcher is None:
            return self._choose(logits, sampling, proposed)
        started = time.perf_counter()
        masked = state.matcher.mask(logits)
        self.mask_ms += (time.perf_counter() - started) * 1000
        if masked is None:
            return -1  # the grammar is complete and allows no stop token
        token = self._choose(masked, sampling, proposed)
        state.matcher.accept([token])
        return token

    def _choose(self, logits: np.ndarray, sampling: Sampling, proposed: int | None = None) -> int:
        return choose(logits, sampling, self._rng, proposed)

    def cache_length(self, cache: int) -> int:
        return self._caches[cache].length

    def truncate(self, cache: int, length: int) -> None:
        state = self._caches[cache]
        if length >= state.length:
            return
        if self.signature.recurrent:  # a state replaced whole: run the kept tokens again
            kept = state.ids[:length]
            state.past, state.length, state.ids = self._empty_past(), 0, []
            if kept:
                self._run(state, kept, 1)
        else:
            state.past = {
                s.input: state.past[s.input][(slice(None),) * (s.axis or 0) + (slice(0, length),)]
                for s in self.signature.states
            }
        state.length = length
        state.ids = state.ids[:length]
        state.logits = None

    async def clone(self, cache: int) -> int:
        source = self._caches[cache]
        self._next += 1
        self._caches[self._next] = _Cache(
            {k: v.copy() for k, v in source.past.items()},
            source.length,
            source.logits,
            list(source.ids),
        )
        return self._next

    def release(self, cache: int) -> None:
        self._caches.pop(cache, None)

    def resources(self) -> dict[str, int]:
        caches = list(self._caches.values())
        return {
            "caches": len(caches),
            "tensors": sum(len(c.past) for c in caches),
            "matchers": sum(c.matcher is not None for c in caches),
        }
