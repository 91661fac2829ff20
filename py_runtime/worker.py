"""The worker protocol: JSON messages between the page's shim and the runtime.

Requests ``{"id", "kind", ...}`` come in through ``receive``; replies go out
through ``post`` as ``{"id", "type": "progress" | "chunk" | "return" | "throw"}``.
Two control messages target a running request: ``{"kind": "abort", "target"}``
and ``{"kind": "settle", "target", "keep"}``, the page's answer to a prompt's or
append's ``return`` (it keeps the result unless the call was aborted meanwhile).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .errors import PromptAPIError
from .models import create_model
from .runtime import Runtime
from .session import Aborted


@dataclass
class Control:
    """A running request's stop flag and its pending settle answer."""

    stopped: bool = False
    settled: asyncio.Future[bool] | None = None
    kept: list[bool] = field(default_factory=list)


class Worker:
    def __init__(self, runtime: Runtime, post: Callable[[str], None]) -> None:
        self.runtime = runtime
        self._post = post
        self._controls: dict[int, Control] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def post(self, message: dict[str, Any]) -> None:
        # ASCII-only JSON: safe for any string, lone surrogates included.
        self._post(json.dumps(message))

    def receive(self, text: str) -> None:
        """Entry point for every message from the page."""
        message = json.loads(text)
        kind = message["kind"]
        if kind in ("abort", "settle"):
            control = self._controls.get(message["target"])
            if control is None:
                return
            if kind == "abort":
                control.stopped = True
            keep = kind == "settle" and message["keep"]
            if control.settled is not None and not control.settled.done():
                control.settled.set_result(keep)
            else:
                control.kept.append(keep)
            return
        control = self._controls[message["id"]] = Control()
        task = asyncio.ensure_future(self._handle(message, control))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _handle(self, request: dict[str, Any], control: Control) -> None:
        request_id = request["id"]

        def emit(reply: dict[str, Any]) -> None:
            self.post({"id": request_id, **reply})

        def stop() -> bool:
            return control.stopped

        async def settle(value: dict[str, Any]) -> bool:
            if control.kept:
                return control.kept[0]
            control.settled = asyncio.get_running_loop().create_future()
            emit({"type": "return", "value": value})
            return await control.settled

        try:
            value = await self._dispatch(request, emit, settle, stop)
            if request["kind"] not in ("prompt", "append"):
                emit({"type": "return", "value": value})
        except PromptAPIError as error:
            emit({"type": "throw", "error": error.to_wire()})
        except Aborted:
            emit({"type": "throw", "error": {"name": "AbortError", "message": "Aborted."}})
        except Exception as error:  # an engine bug must reject, never hang the page
            emit({"type": "throw", "error": {"name": "OperationError", "message": repr(error)}})
        finally:
            del self._controls[request_id]

    async def _dispatch(self, request: dict[str, Any], emit, settle, stop) -> Any:  # noqa: ANN001
        runtime, kind = self.runtime, request["kind"]
        if kind == "availability":
            return await runtime.availability(request["options"])
        if kind == "create":
            return await runtime.create(request["options"], request["activation"], emit, stop)
        if kind == "prompt":
            return await runtime.prompt(request, emit, settle, stop)
        if kind == "append":
            return await runtime.append(request, settle, stop)
        if kind == "measure":
            return await runtime.measure(request)
        if kind == "clone":
            return await runtime.clone(request, stop)
        if kind == "destroy":
            return runtime.destroy(request["session"])
        if kind == "benchmark":
            return await runtime.benchmark(request, emit, stop)
        raise PromptAPIError("OperationError", f"Unknown request kind {kind!r}.")


def start(config_json: str, post: Callable[[str], None], create_backend: Any = None) -> Worker:
    """Called once by the worker script after Pyodide booted; ``create_backend``
    is ONNX Runtime Web's factory (web/worker/ort-backend.mjs) for real models."""
    return Worker(Runtime(create_model(json.loads(config_json), create_backend)), post)
