"""The engine's end of the worker protocol, over any transport.

``receive`` takes each message from the page (JSON text) and ``post`` sends the
replies: the worker's ``postMessage`` in the page, a list in tests, and an
extension port later. A call is answered with ``progress`` and ``chunk`` replies,
then one ``return`` or ``throw``. A prompt's or append's ``return`` waits for the
page's ``settle`` (it keeps the effects unless the call was aborted meanwhile);
``abort`` stops a running call within one decode step.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .errors import PromptAPIError, error_to_wire
from .protocol import (
    Abort,
    AppendRequest,
    AvailabilityRequest,
    BenchmarkRequest,
    Call,
    Chunk,
    ChunkWire,
    CloneRequest,
    CreateRequest,
    DestroyRequest,
    Init,
    MeasureRequest,
    Progress,
    PromptRequest,
    Reply,
    Return,
    Settle,
    Settlement,
    StatsRequest,
    Throw,
)
from .runtime import Runtime
from .wire import MAX_MESSAGE_DEPTH, decode_request, encode, nests_deeper

Post = Callable[[str], None]


@dataclass
class Control:
    """A running call's stop flag and its pending settle answer."""

    stopped: bool = False
    settled: asyncio.Future[bool] | None = None
    kept: list[bool] = field(default_factory=list)


class Endpoint:
    def __init__(self, runtime: Runtime, post: Post) -> None:
        self.runtime = runtime
        self._post = post
        self._controls: dict[int, Control] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def post(self, reply: Reply) -> None:
        self._post(encode(reply))

    def receive(self, text: str) -> None:
        """Entry point for every message from the page."""
        try:
            message = decode_request(text)
        except PromptAPIError as error:
            self._malformed(text, error)
            return
        match message:
            case Abort(target=target) | Settle(target=target):
                control = self._controls.get(target)
                if control is None:
                    return
                if isinstance(message, Abort):
                    control.stopped = True
                keep = isinstance(message, Settle) and message.keep
                if control.settled is not None and not control.settled.done():
                    control.settled.set_result(keep)
                else:
                    control.kept.append(keep)
            case Init():
                self._malformed(text, PromptAPIError("OperationError", "The runtime is started."))
            case _ if message.id in self._controls:
                # Only a broken page side reuses a running call's id: answering would
                # reach that call's handlers, so the message is dropped.
                print(f"[prompt-api] dropped a message: id {message.id} is in use", file=sys.stderr)
            case _:
                control = self._controls[message.id] = Control()
                task = asyncio.ensure_future(self._handle(message, control))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

    def _malformed(self, text: str, error: PromptAPIError) -> None:
        """Answer a call we could not read, if its id can be found; else log it."""
        request_id = _id_of(text)
        if request_id is None:
            print(f"[prompt-api] dropped a message: {error.message}", file=sys.stderr)
        else:
            self.post(Throw(request_id, error_to_wire(error)))

    async def _handle(self, call: Call, control: Control) -> None:
        request_id = call.id

        def stop() -> bool:
            return control.stopped

        async def settle(value: Settlement) -> bool:
            if control.kept:
                return control.kept[0]
            control.settled = asyncio.get_running_loop().create_future()
            self.post(Return(request_id, value))
            return await control.settled

        try:
            value = await self._dispatch(call, settle, stop)
            if not isinstance(call, PromptRequest | AppendRequest):
                self.post(Return(request_id, value))
        except BaseException as error:  # every failure rejects the call, never hangs it
            self.post(Throw(request_id, error_to_wire(error)))
            if not isinstance(error, Exception):
                raise
        finally:
            del self._controls[request_id]

    async def _dispatch(self, call: Call, settle: Any, stop: Callable[[], bool]) -> Any:
        runtime = self.runtime
        request_id = call.id

        def on_progress(loaded: float) -> None:
            self.post(Progress(request_id, loaded))

        def on_chunk(chunk: ChunkWire) -> None:
            self.post(Chunk(request_id, chunk))

        match call:
            case AvailabilityRequest(options=options):
                return await runtime.availability(options)
            case CreateRequest(options=options, activation=activation):
                return await runtime.create(options, activation, on_progress, stop)
            case PromptRequest(session=session, input=prompt, constraint=constraint, omit=omit):
                return await runtime.prompt(
                    session, prompt, constraint, omit, on_chunk, settle, stop
                )
            case AppendRequest(session=session, input=prompt):
                return await runtime.append(session, prompt, settle, stop)
            case MeasureRequest(session=session, input=prompt, constraint=constraint, omit=omit):
                return await runtime.measure(session, prompt, constraint, omit)
            case CloneRequest(session=session):
                return await runtime.clone(session, stop)
            case DestroyRequest(session=session):
                return runtime.destroy(session)
            case BenchmarkRequest(promptTokens=prompt_tokens, decodeTokens=decode_tokens):
                return await runtime.benchmark(prompt_tokens, decode_tokens, stop)
            case StatsRequest():
                return runtime.stats()


def _id_of(text: str) -> int | None:
    """The ``id`` of a message that failed to decode, when it has a usable one."""
    if nests_deeper(text, MAX_MESSAGE_DEPTH):  # never parsed: too deep for the parser
        return None
    try:
        message = json.loads(text)
    except (ValueError, RecursionError):
        return None
    request_id = message.get("id") if isinstance(message, dict) else None
    return request_id if type(request_id) is int else None
