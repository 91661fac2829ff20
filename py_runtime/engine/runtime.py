"""The runtime: one model, its sessions, and the static methods of ``LanguageModel``.

Methods take the decoded pieces of a request (see ``protocol.py``) and the
callbacks they need, so the same code runs in the Pyodide worker and in tests.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from itertools import count

from ..models.base import Chunk, ModelAdapter, StopCallback
from .errors import Aborted, PromptAPIError, quota_exceeded
from .options import (
    LanguageModelOptions,
    compute_language_model_options_availability,
    validate_and_canonicalize_language_model_options,
)
from .protocol import (
    ChunkWire,
    Constraint,
    CoreOptionsWire,
    CreateOptionsWire,
    PromptWire,
    RuntimeStats,
    SessionInfo,
    Settlement,
    SpeedResult,
)
from .session import Outcome, Session
from .vocabulary import Availability

ProgressCallback = Callable[[float], None]
ChunkCallback = Callable[[ChunkWire], None]
Settle = Callable[[Settlement], Awaitable[bool]]


def round_progress(loaded: float) -> float:
    """Download progress is reported in multiples of 1/65536, rounded down."""
    return int(loaded * 65536) / 65536


def chunk_to_wire(chunk: Chunk) -> ChunkWire:
    if isinstance(chunk, str):
        return {"kind": "text", "text": chunk}
    return {
        "kind": "tool-call",
        "callId": chunk.call_id,
        "name": chunk.name,
        "arguments": chunk.arguments,
    }


def destroyed() -> PromptAPIError:
    return PromptAPIError("InvalidStateError", "The session has been destroyed.")


class Runtime:
    def __init__(self, model: ModelAdapter) -> None:
        self.model = model
        self.sessions: dict[int, Session] = {}
        self._ids = count(1)

    def session(self, session_id: int) -> Session:
        session = self.sessions.get(session_id)
        if session is None or session.destroyed:
            raise destroyed()
        return session

    async def _availability(
        self, raw_options: CoreOptionsWire
    ) -> tuple[LanguageModelOptions, Availability | None]:
        options = validate_and_canonicalize_language_model_options(raw_options)
        availability = compute_language_model_options_availability(
            options, await self.model.availability(), self.model.capabilities
        )
        return options, availability

    async def availability(self, raw_options: CoreOptionsWire) -> Availability:
        """``LanguageModel.availability()``; a transient failure (null) reads as unavailable."""
        return (await self._availability(raw_options))[1] or "unavailable"

    async def create(
        self,
        raw_options: CreateOptionsWire,
        activation: bool,
        on_progress: ProgressCallback,
        stop: StopCallback,
    ) -> SessionInfo:
        """``LanguageModel.create()``: validate, check availability, download, initialise."""
        options, availability = await self._availability(raw_options)
        if availability is None or availability == "unavailable":
            raise PromptAPIError("NotSupportedError", "These options are not supported.")
        if availability != "available" and not activation:
            raise PromptAPIError(
                "NotAllowedError", "Creating a model that must be downloaded needs user activation."
            )

        def progress(loaded: float) -> None:
            on_progress(round_progress(loaded))

        # Progress is always reported from 0 to 1, even when nothing is downloaded.
        progress(0)
        await self.model.load(progress, stop)
        if stop():
            raise Aborted
        initial_usage = await self.model.measure_context(options.initial_prompts, options.tools)
        if initial_usage > self.model.context_window:
            raise quota_exceeded(initial_usage, self.model.context_window)
        state = await self.model.new_state(options, stop)
        progress(1)
        return self._add(Session(self.model, options, state, initial_usage))

    def _add(self, session: Session) -> SessionInfo:
        session_id = next(self._ids)
        self.sessions[session_id] = session
        return session.describe(session_id)

    async def _run(
        self, session: Session, operation: Callable[[], Awaitable[Outcome]], settle: Settle
    ) -> None:
        """Run one state-changing call in call order, then keep or undo it."""
        async with session.lock:
            if session.destroyed:
                raise destroyed()
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
        self,
        session_id: int,
        prompt: PromptWire,
        constraint: Constraint | None,
        omit: bool,
        on_chunk: ChunkCallback,
        settle: Settle,
        stop: StopCallback,
    ) -> None:
        session = self.session(session_id)
        await self._run(
            session,
            lambda: session.prompt(
                prompt, constraint, omit, stop, lambda chunk: on_chunk(chunk_to_wire(chunk))
            ),
            settle,
        )

    async def append(
        self, session_id: int, prompt: PromptWire, settle: Settle, stop: StopCallback
    ) -> None:
        session = self.session(session_id)
        await self._run(session, lambda: session.append(prompt, stop), settle)

    async def measure(
        self, session_id: int, prompt: PromptWire, constraint: Constraint | None, omit: bool
    ) -> int:
        return await self.session(session_id).measure_context_usage(prompt, constraint, omit)

    async def clone(self, session_id: int, stop: StopCallback) -> SessionInfo:
        session = self.session(session_id)
        async with session.lock:
            clone = await session.clone(stop)
        if stop():
            clone.destroy()
            raise Aborted
        return self._add(clone)

    async def benchmark(
        self, prompt_tokens: int, decode_tokens: int, stop: StopCallback
    ) -> SpeedResult:
        """Prefill/decode speed of the loaded model (``promptAPIRuntime.benchmark()``)."""
        benchmark = getattr(self.model, "benchmark", None)
        if benchmark is None:
            raise PromptAPIError("NotSupportedError", "This model cannot measure its speed.")
        await self.model.load(lambda loaded: None, stop)
        result: SpeedResult = await benchmark(prompt_tokens, decode_tokens)
        return result

    def stats(self) -> RuntimeStats:
        """Live sessions and what the model's backend holds (``promptAPIRuntime.stats()``)."""
        backend = getattr(self.model, "backend", None)
        held = backend.resources() if backend is not None else {}
        return {
            "sessions": len(self.sessions),
            "caches": held.get("caches", 0),
            "tensors": held.get("tensors", 0),
            "matchers": held.get("matchers", 0),
        }

    def destroy(self, session_id: int) -> None:
        session = self.sessions.pop(session_id, None)
        if session is not None:
            session.destroy()
