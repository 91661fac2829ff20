"""The runtime: one model, its sessions, and the static methods of ``LanguageModel``.

Requests are plain data (the worker protocol's payloads); each method takes the
callbacks it needs, so the same code runs in the Pyodide worker and in tests.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from itertools import count
from typing import Any

from .errors import PromptAPIError, quota_exceeded
from .messages import ToolCall
from .models.base import Chunk, ModelAdapter, StopCallback
from .options import (
    Availability,
    compute_language_model_options_availability,
    validate_and_canonicalize_language_model_options,
)
from .session import Aborted, Outcome, Session

Emit = Callable[[dict[str, Any]], None]
Settle = Callable[[dict[str, Any]], Awaitable[bool]]


def round_progress(loaded: float) -> float:
    """Download progress is reported in multiples of 1/65536, rounded down."""
    return int(loaded * 65536) / 65536


def chunk_to_wire(chunk: Chunk) -> str | dict[str, Any]:
    if isinstance(chunk, ToolCall):
        return {
            "toolCall": {"callId": chunk.call_id, "name": chunk.name, "arguments": chunk.arguments}
        }
    return chunk


class Runtime:
    def __init__(self, model: ModelAdapter) -> None:
        self.model = model
        self.sessions: dict[int, Session] = {}
        self._ids = count(1)

    def session(self, session_id: int) -> Session:
        session = self.sessions.get(session_id)
        if session is None or session.destroyed:
            raise PromptAPIError("InvalidStateError", "The session has been destroyed.")
        return session

    async def _availability(self, raw_options: dict[str, Any]) -> tuple[Any, Availability | None]:
        options = validate_and_canonicalize_language_model_options(raw_options)
        availability = compute_language_model_options_availability(
            options, await self.model.availability(), self.model.capabilities
        )
        return options, availability

    async def availability(self, raw_options: dict[str, Any]) -> Availability:
        """``LanguageModel.availability()``; a transient failure (null) reads as unavailable."""
        return (await self._availability(raw_options))[1] or "unavailable"

    async def create(
        self, raw_options: dict[str, Any], activation: bool, emit: Emit, stop: StopCallback
    ) -> dict[str, Any]:
        """``LanguageModel.create()``: validate, check availability, download, initialise."""
        options, availability = await self._availability(raw_options)
        if availability is None or availability == "unavailable":
            raise PromptAPIError("NotSupportedError", "These options are not supported.")
        if availability != "available" and not activation:
            raise PromptAPIError(
                "NotAllowedError", "Creating a model that must be downloaded needs user activation."
            )

        def on_progress(loaded: float) -> None:
            emit({"type": "progress", "loaded": round_progress(loaded)})

        # Progress is always reported from 0 to 1, even when nothing is downloaded.
        on_progress(0)
        await self.model.load(on_progress, stop)
        if stop():
            raise Aborted
        initial_usage = self.model.measure_initial(options.initial_prompts, options.tools)
        if initial_usage > self.model.context_window:
            raise quota_exceeded(initial_usage, self.model.context_window)
        state = await self.model.new_state(options, stop)
        on_progress(1)
        return self._add(Session(self.model, options, state, initial_usage))

    def _add(self, session: Session) -> dict[str, Any]:
        session_id = next(self._ids)
        self.sessions[session_id] = session
        return {"session": session_id, **session.describe()}

    async def _run(
        self,
        session: Session,
        operation: Callable[[], Awaitable[Outcome]],
        settle: Settle,
    ) -> None:
        """Run one state-changing call in call order, then keep or undo it."""
        async with session.lock:
            if session.destroyed:
                raise PromptAPIError("InvalidStateError", "The session has been destroyed.")
            checkpoint = session.checkpoint()
            try:
                outcome = await operation()
            except BaseException:
                session.rollback(checkpoint)
                raise
            keep = await settle(
                {"contextUsage": session.context_usage, "overflowed": outcome.overflowed}
            )
            if not keep or session.destroyed:
                session.rollback(checkpoint)

    async def prompt(
        self, request: dict[str, Any], emit: Emit, settle: Settle, stop: StopCallback
    ) -> None:
        session = self.session(request["session"])

        def on_chunk(chunk: Chunk) -> None:
            emit({"type": "chunk", "chunk": chunk_to_wire(chunk)})

        await self._run(
            session,
            lambda: session.prompt(
                request["input"],
                request.get("constraint"),
                request.get("omit", False),
                stop,
                on_chunk,
            ),
            settle,
        )

    async def append(self, request: dict[str, Any], settle: Settle, stop: StopCallback) -> None:
        session = self.session(request["session"])
        await self._run(session, lambda: session.append(request["input"], stop), settle)

    async def measure(self, request: dict[str, Any]) -> int:
        session = self.session(request["session"])
        return session.measure_context_usage(
            request["input"], request.get("constraint"), request.get("omit", False)
        )

    async def clone(self, request: dict[str, Any], stop: StopCallback) -> dict[str, Any]:
        session = self.session(request["session"])
        async with session.lock:
            clone = await session.clone(stop)
        if stop():
            clone.destroy()
            raise Aborted
        return self._add(clone)

    async def benchmark(
        self, request: dict[str, Any], emit: Emit, stop: StopCallback
    ) -> dict[str, Any]:
        """Prefill/decode speed of the loaded model (``promptAPIRuntime.benchmark()``)."""
        from .models.causal_lm import CausalLM
        from .speed import measure_speed

        if not isinstance(self.model, CausalLM):
            raise PromptAPIError("NotSupportedError", "Benchmarks need a real model.")
        await self.model.load(lambda loaded: None, stop)
        return await measure_speed(self.model, request["promptTokens"], request["decodeTokens"])

    def destroy(self, session_id: int) -> None:
        session = self.sessions.pop(session_id, None)
        if session is not None:
            session.destroy()
