"""A ``LanguageModel`` session: its context, usage accounting and the prompt steps.

Every operation runs under the session's lock, so calls run in call order. An
operation changes the state in place after taking a checkpoint; the caller then
either keeps the change or rolls it back (an abort that won the race), which is
how an aborted call leaves history, model context and usage as they were.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from .errors import PromptAPIError, quota_exceeded
from .json_schema import check_prefix, check_response_schema
from .messages import Content, Message
from .models.base import Chunk, ModelAdapter, ModelState, StopCallback
from .options import LanguageModelOptions, get_expected_content_types
from .prompt import validate_and_canonicalize_prompt

CONSTRAINT_INTRO = (
    '\n\nRemember to respond in JSON that follows this "JSON Schema" specification:\n'
)


class Aborted(Exception):
    """The caller's stop callback said stop."""


@dataclass(frozen=True)
class HistoryEntry:
    """One prefill unit (a call's input) or one response, evicted as a whole."""

    messages: tuple[Message, ...]
    usage: int


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


def with_response_constraint(messages: list[Message], constraint: dict[str, Any]) -> list[Message]:
    """The implementation-defined guidance message of prompt step 4 (Chromium's
    prompt builder): the schema text goes at the end of the last user message."""
    if constraint["kind"] != "json-schema":
        return messages
    text = Content("text", CONSTRAINT_INTRO + constraint["json"])
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "user":
            message = messages[index]
            return [
                *messages[:index],
                replace(message, content=(*message.content, text)),
                *messages[index + 1 :],
            ]
    return [*messages, Message("user", (text,))]


def check_regexp_prefix(messages: list[Message], constraint: dict[str, Any] | None) -> None:
    """A ``^``-anchored RegExp must admit the assistant prefix the answer starts with."""
    if not constraint or constraint["kind"] != "regexp" or not messages[-1].prefix:
        return
    source = constraint["source"]
    if source.startswith("^") and not source[1:].startswith(messages[-1].text()):
        raise PromptAPIError(
            "NotSupportedError", "The response constraint cannot start with the prefix."
        )


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

    def describe(self) -> dict[str, Any]:
        """The attributes the page reads synchronously."""
        return {
            "contextUsage": self.context_usage,
            "contextWindow": self.context_window,
            "samplingMode": self.sampling_mode,
        }

    # -- checkpoints -------------------------------------------------------

    def checkpoint(self) -> Checkpoint:
        return Checkpoint(self.context_usage, self.history, self.state.checkpoint())

    def rollback(self, checkpoint: Checkpoint) -> None:
        self.context_usage = checkpoint.usage
        self.history = checkpoint.history
        self.state.rollback(checkpoint.model)

    # -- the spec's steps --------------------------------------------------

    def _canonical_input(
        self, prompt: Any, constraint: dict[str, Any] | None, omit: bool, has_appended: bool
    ) -> list[Message]:
        expected_types = get_expected_content_types(self.options.expected_inputs or [])
        messages = validate_and_canonicalize_prompt(prompt, expected_types, has_appended)
        check_regexp_prefix(messages, constraint)
        if constraint is not None and constraint["kind"] == "json-schema":
            schema = json.loads(constraint["json"])
            check_response_schema(schema)
            if messages[-1].prefix:
                check_prefix(schema, messages[-1].text())
        if constraint is not None and not omit:
            messages = with_response_constraint(messages, constraint)
        return messages

    def measure_context_usage(
        self, prompt: Any, constraint: dict[str, Any] | None, omit: bool
    ) -> int:
        """measureContextUsage() steps 1-5."""
        if omit and constraint is None:
            raise PromptAPIError(
                "TypeError", "omitResponseConstraintInput needs a responseConstraint."
            )
        return self.model.measure(self._canonical_input(prompt, constraint, omit, False))

    def _add_to_history(self, messages: tuple[Message, ...], usage: int, outcome: Outcome) -> None:
        """Keep an entry, then evict the oldest non-initial history while over the window."""
        self.history = (*self.history, HistoryEntry(messages, usage))
        self.context_usage += usage
        while self.context_usage > self.context_window and len(self.history) > 1:
            evicted, *rest = self.history
            self.history = tuple(rest)
            self.context_usage -= evicted.usage
            self.state.evict(evicted.messages)
            outcome.overflowed = True

    async def prefill(
        self,
        prompt: Any,
        constraint: dict[str, Any] | None,
        omit: bool,
        stop: StopCallback,
        outcome: Outcome,
    ) -> None:
        """The spec's "prefill" steps 2-12, with Chromium's eviction."""
        messages = self._canonical_input(prompt, constraint, omit, self.context_usage > 0)
        requested = self.model.measure(messages)
        # Unlike spec step 9, only an input that cannot fit beside the initial
        # prompts fails; older history is evicted instead (as Chromium does).
        if self.initial_usage + requested > self.context_window:
            raise quota_exceeded(self.initial_usage + requested, self.context_window)
        if stop():
            raise Aborted
        await self.state.prefill(messages, stop)
        if stop():
            raise Aborted
        self._add_to_history(tuple(messages), requested, outcome)

    async def generate(self, stop: StopCallback, on_chunk: Callable[[Chunk], None]) -> Outcome:
        """The spec's "generate": stream chunks, then count the response text."""
        outcome = Outcome()
        async for chunk in self.state.generate(stop):
            if stop():
                raise Aborted
            outcome.chunks.append(chunk)
            on_chunk(chunk)
        text = "".join(c for c in outcome.chunks if isinstance(c, str))
        # Tool calls add nothing to usage or history (as in Chromium).
        response = Message("assistant", (Content("text", text),))
        self._add_to_history((response,), self.model.measure((response,)), outcome)
        return outcome

    async def prompt(
        self,
        prompt: Any,
        constraint: dict[str, Any] | None,
        omit: bool,
        stop: StopCallback,
        on_chunk: Callable[[Chunk], None],
    ) -> Outcome:
        prefilled = Outcome()
        await self.prefill(prompt, constraint, omit, stop, prefilled)
        outcome = await self.generate(stop, on_chunk)
        outcome.overflowed = outcome.overflowed or prefilled.overflowed
        return outcome

    async def append(self, prompt: Any, stop: StopCallback) -> Outcome:
        outcome = Outcome()
        await self.prefill(prompt, None, False, stop, outcome)
        return outcome

    async def clone(self, stop: StopCallback) -> Session:
        """Clone step 13: a new session over the same context, independent afterwards."""
        context = [*self.options.initial_prompts, *(m for e in self.history for m in e.messages)]
        state = await self.state.clone(context)
        return Session(
            self.model, self.options, state, self.initial_usage, self.history, self.context_usage
        )

    def destroy(self) -> None:
        self.destroyed = True
        self.state.release()
