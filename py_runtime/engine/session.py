"""A ``LanguageModel`` session: its conversation, usage accounting and the prompt steps.

The session owns the conversation: the initial prompts and the kept history are
the one source the model renders from (``context()``); the model keeps only what
it computed from them. ``contextUsage`` is the model's measure of that whole
context, so it always describes what the model holds.

Every operation runs under the session's lock, so calls run in call order. An
operation changes the state in place after taking a checkpoint; the caller then
either keeps the change or rolls it back (an abort that won the race), which is
how an aborted call leaves history, model state and usage as they were.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..models.base import Chunk, ModelAdapter, ModelState, StopCallback
from .constraints import check_response_constraint, response_grammar, with_response_constraint
from .errors import Aborted, quota_exceeded, type_error
from .grammar import Grammar
from .messages import Content, Message
from .options import LanguageModelOptions, get_expected_content_types
from .prompt import validate_and_canonicalize_prompt
from .protocol import Constraint, PromptWire, SessionInfo
from .vocabulary import sampling_for


@dataclass(frozen=True)
class HistoryEntry:
    """One prefill unit (a call's input) or one response, evicted as a whole."""

    messages: tuple[Message, ...]


@dataclass(frozen=True)
class Checkpoint:
    usage: int
    history: tuple[HistoryEntry, ...]
    model: Any


@dataclass
class Outcome:
    """What a prompt or append produced, reported before it is kept."""

    chunks: list[Chunk] = field(default_factory=list)
    overflowed: bool = False


class Session:
    def __init__(
        self,
        model: ModelAdapter,
        options: LanguageModelOptions,
        state: ModelState,
        initial_usage: int,
        history: tuple[HistoryEntry, ...] = (),
        usage: int | None = None,
    ) -> None:
        self.model = model
        self.options = options
        self.state = state
        self.initial_usage = initial_usage
        self.history: tuple[HistoryEntry, ...] = history
        self.context_usage = initial_usage if usage is None else usage
        self.lock = asyncio.Lock()
        self.destroyed = False

    @property
    def context_window(self) -> float:
        return self.model.context_window

    @property
    def sampling_mode(self) -> str | None:
        """Create step 8: null when topK or temperature was given, else balanced."""
        options = self.options
        if options.sampling_mode:
            return options.sampling_mode
        if options.top_k is not None or options.temperature is not None:
            return None
        return "balanced"

    def describe(self, session_id: int) -> SessionInfo:
        """The attributes the page reads synchronously."""
        options = self.options
        sampling = sampling_for(
            options.sampling_mode, options.top_k, options.temperature, self.model.sampling_modes
        )
        return {
            "session": session_id,
            "contextUsage": self.context_usage,
            "contextWindow": self.context_window,
            "samplingMode": self.sampling_mode,  # type: ignore[typeddict-item]
            "topK": sampling.top_k,
            "temperature": sampling.temperature,
        }

    def context(self, history: tuple[HistoryEntry, ...] | None = None) -> list[Message]:
        """The conversation the model holds: initial prompts, then the kept history."""
        entries = self.history if history is None else history
        return [*self.options.initial_prompts, *(m for e in entries for m in e.messages)]

    async def measure_history(self, history: tuple[HistoryEntry, ...]) -> int:
        return await self.model.measure_context(self.context(history), self.options.tools)

    # -- checkpoints -------------------------------------------------------

    def checkpoint(self) -> Checkpoint:
        return Checkpoint(self.context_usage, self.history, self.state.checkpoint())

    def rollback(self, checkpoint: Checkpoint) -> None:
        self.context_usage = checkpoint.usage
        self.history = checkpoint.history
        self.state.rollback(checkpoint.model)

    # -- the spec's steps --------------------------------------------------

    def _canonical_input(
        self, prompt: PromptWire, constraint: Constraint | None, omit: bool, has_appended: bool
    ) -> list[Message]:
        expected_types = get_expected_content_types(self.options.expected_inputs or [])
        messages = validate_and_canonicalize_prompt(prompt, expected_types, has_appended)
        check_response_constraint(messages, constraint)
        if constraint is not None and not omit:
            messages = with_response_constraint(messages, constraint)
        return messages

    async def measure_context_usage(
        self, prompt: PromptWire, constraint: Constraint | None, omit: bool
    ) -> int:
        """measureContextUsage() steps 1-5."""
        if omit and constraint is None:
            raise type_error("omitResponseConstraintInput needs a responseConstraint.")
        return await self.model.measure(self._canonical_input(prompt, constraint, omit, False))

    async def _add_to_history(
        self, messages: tuple[Message, ...], outcome: Outcome, room: int = 0
    ) -> None:
        """Keep an entry, then evict the oldest non-initial history while it and ``room``
        more tokens pass the window."""
        history = (*self.history, HistoryEntry(messages))
        usage = await self.measure_history(history)
        while usage + room > self.context_window and len(history) > 1:
            history = history[1:]
            usage = await self.measure_history(history)
            outcome.overflowed = True
        self.history, self.context_usage = history, usage

    async def prefill(
        self,
        prompt: PromptWire,
        constraint: Constraint | None,
        omit: bool,
        stop: StopCallback,
        outcome: Outcome,
        room: int = 0,
    ) -> None:
        """The spec's "prefill" steps 2-12, with Chromium's eviction (of what leaves less
        than ``room`` tokens for the answer that follows, too)."""
        messages = self._canonical_input(prompt, constraint, omit, self.context_usage > 0)
        requested = await self.model.measure(messages)
        # Unlike spec step 9, only an input that cannot fit beside the initial
        # prompts fails; older history is evicted instead (as Chromium does).
        if self.initial_usage + requested > self.context_window:
            raise quota_exceeded(self.initial_usage + requested, self.context_window)
        if stop():
            raise Aborted
        await self._add_to_history(tuple(messages), outcome, room)
        await self.state.prefill(self.context(), messages, stop)
        if stop():
            raise Aborted

    async def generate(
        self,
        stop: StopCallback,
        on_chunk: Callable[[Chunk], None],
        grammar: Grammar | None = None,
    ) -> Outcome:
        """The spec's "generate": stream chunks (held to ``grammar``), then keep the
        response."""
        outcome = Outcome()
        async for chunk in self.state.generate(self.context(), stop, grammar):
            if stop():
                raise Aborted
            outcome.chunks.append(chunk)
            on_chunk(chunk)
        content = [Content("text", "".join(c for c in outcome.chunks if isinstance(c, str)))]
        if self.model.keeps_tool_calls:
            content.extend(
                Content("tool-call", c) for c in outcome.chunks if not isinstance(c, str)
            )
        await self._add_to_history((Message("assistant", tuple(content)),), outcome)
        return outcome

    async def prompt(
        self,
        prompt: PromptWire,
        constraint: Constraint | None,
        omit: bool,
        stop: StopCallback,
        on_chunk: Callable[[Chunk], None],
    ) -> Outcome:
        grammar = None
        if constraint is not None and self.model.enforces_constraints:
            grammar = response_grammar(constraint)  # NotSupportedError before any work
        prefilled = Outcome()
        await self.prefill(prompt, constraint, omit, stop, prefilled, self.model.reply_room)
        outcome = await self.generate(stop, on_chunk, grammar)
        outcome.overflowed = outcome.overflowed or prefilled.overflowed
        return outcome

    async def append(self, prompt: PromptWire, stop: StopCallback) -> Outcome:
        outcome = Outcome()
        await self.prefill(prompt, None, False, stop, outcome)
        return outcome

    async def clone(self, stop: StopCallback) -> Session:
        """Clone step 13: a new session over the same context, independent afterwards."""
        state = await self.state.clone(self.context())
        return Session(
            self.model, self.options, state, self.initial_usage, self.history, self.context_usage
        )

    def destroy(self) -> None:
        self.destroyed = True
        self.state.release()
