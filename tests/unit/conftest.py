"""Fixtures: the echo model behind a ``Runtime``, and the worker protocol.

Both drive the engine on one event loop per test (``asyncio.Runner``), as the
Pyodide worker does. Data builders are in ``builders.py``.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
for path in (REPO_ROOT, HERE):  # `py_runtime` without installing; `builders` for the tests
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from py_runtime.engine.endpoint import Endpoint  # noqa: E402
from py_runtime.engine.protocol import (  # noqa: E402
    RESULTS,
    Constraint,
    CoreOptionsWire,
    CreateOptionsWire,
    PromptWire,
    Return,
)
from py_runtime.engine.runtime import Runtime  # noqa: E402
from py_runtime.engine.session import Session  # noqa: E402
from py_runtime.engine.wire import check, decode_reply, to_wire  # noqa: E402
from py_runtime.models.echo import EchoModel  # noqa: E402


def never() -> bool:
    """A stop callback that never stops."""
    return False


@dataclass
class Reply:
    """One prompt() as the page sees it: wire chunks, then the settle value."""

    chunks: list[Any] = field(default_factory=list)
    settled: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return "".join(c["text"] for c in self.chunks if c["kind"] == "text")

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        return [c for c in self.chunks if c["kind"] == "tool-call"]


class Echo:
    """A ``Runtime`` over a fresh ``EchoModel``; each method runs one call to the end.
    Inputs are checked against the protocol first, so the builders cannot drift from it."""

    def __init__(self, runner: asyncio.Runner) -> None:
        self.runner = runner
        self.runtime = Runtime(EchoModel())
        self.progress: list[float] = []

    def run(self, coro: Any) -> Any:
        return self.runner.run(coro)

    def create(self, activation: bool = True, **options: Any) -> int:
        check(CreateOptionsWire, options, "options")
        return self.run(
            self.runtime.create(options, activation, self.progress.append, never)  # type: ignore[arg-type]
        )["session"]

    def availability(self, **options: Any) -> str:
        check(CoreOptionsWire, options, "options")
        return self.run(self.runtime.availability(options))

    def session(self, session_id: int) -> Session:
        return self.runtime.session(session_id)

    async def prompt_async(
        self, session_id: int, input: Any, keep: bool = True, **request: Any
    ) -> Reply:
        """prompt(); ``request`` may carry ``constraint`` and ``omit``."""
        reply = Reply()

        async def settle(value: Any) -> bool:
            reply.settled = value
            return keep

        constraint, omit = request.get("constraint"), request.get("omit", False)
        check(PromptWire, input, "input")
        check(Constraint | None, constraint, "constraint")
        await self.runtime.prompt(
            session_id, input, constraint, omit, reply.chunks.append, settle, never
        )
        return reply

    def prompt(self, session_id: int, input: Any, keep: bool = True, **request: Any) -> Reply:
        return self.run(self.prompt_async(session_id, input, keep, **request))

    def append(self, session_id: int, input: Any, keep: bool = True) -> None:
        async def settle(value: Any) -> bool:
            return keep

        check(PromptWire, input, "input")
        self.run(self.runtime.append(session_id, input, settle, never))

    def measure(
        self, session_id: int, input: Any, constraint: dict | None = None, omit: bool = False
    ) -> int:
        return self.run(self.runtime.measure(session_id, input, constraint, omit))

    def clone(self, session_id: int) -> int:
        return self.run(self.runtime.clone(session_id, never))["session"]

    def usage(self, session_id: int) -> int:
        return self.session(session_id).context_usage


@pytest.fixture
def echo() -> Iterator[Echo]:
    with asyncio.Runner() as runner:
        yield Echo(runner)


class WorkerHarness:
    """An ``Endpoint`` fed JSON strings; what it posts is decoded against the protocol
    (each ``return`` value against its call's result type) into ``posted``."""

    def __init__(self, runner: asyncio.Runner) -> None:
        self.runner = runner
        self.posted: list[dict[str, Any]] = []
        self.kinds: dict[int, str] = {}  # request id -> kind, to check return values
        self.endpoint = Endpoint(Runtime(EchoModel()), self._receive)

    def _receive(self, text: str) -> None:
        reply = decode_reply(text)
        if isinstance(reply, Return) and reply.id in self.kinds:
            check(RESULTS[self.kinds[reply.id]], reply.value, "value")
        self.posted.append(to_wire(reply))

    def send(self, **message: Any) -> None:
        """Deliver one message, then let the worker run."""
        self.send_all(message)

    def send_all(self, *messages: dict[str, Any]) -> None:
        """Deliver messages back to back (no task runs in between), then let the worker run."""

        async def deliver() -> None:
            for message in messages:
                if "id" in message:
                    self.kinds[message["id"]] = message["kind"]
                self.endpoint.receive(json.dumps(message))
            await self._drain()

        self.runner.run(deliver())

    async def _drain(self) -> None:
        for _ in range(20):  # let the request tasks run until they finish or await a settle
            await asyncio.sleep(0)

    def replies(self, request_id: int) -> list[dict[str, Any]]:
        return [m for m in self.posted if m.get("id") == request_id]

    def last(self, request_id: int) -> dict[str, Any]:
        return self.replies(request_id)[-1]


@pytest.fixture
def worker() -> Iterator[WorkerHarness]:
    with asyncio.Runner() as runner:
        yield WorkerHarness(runner)
