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

from py_runtime.models.echo import EchoModel  # noqa: E402
from py_runtime.runtime import Runtime  # noqa: E402
from py_runtime.session import Session  # noqa: E402
from py_runtime.worker import Worker  # noqa: E402


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
        return "".join(c for c in self.chunks if isinstance(c, str))

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        return [c["toolCall"] for c in self.chunks if isinstance(c, dict)]


class Echo:
    """A ``Runtime`` over a fresh ``EchoModel``; each method runs one call to the end."""

    def __init__(self, runner: asyncio.Runner) -> None:
        self.runner = runner
        self.runtime = Runtime(EchoModel())
        self.progress: list[float] = []

    def run(self, coro: Any) -> Any:
        return self.runner.run(coro)

    def create(self, activation: bool = True, **options: Any) -> int:
        def emit(event: dict[str, Any]) -> None:
            self.progress.append(event["loaded"])

        return self.run(self.runtime.create(options, activation, emit, never))["session"]

    def availability(self, **options: Any) -> str:
        return self.run(self.runtime.availability(options))

    def session(self, session_id: int) -> Session:
        return self.runtime.session(session_id)

    async def prompt_async(
        self, session_id: int, input: Any, keep: bool = True, **request: Any
    ) -> Reply:
        """prompt(); ``request`` may carry ``constraint`` and ``omit``."""
        reply = Reply()

        async def settle(value: dict[str, Any]) -> bool:
            reply.settled = value
            return keep

        def emit(event: dict[str, Any]) -> None:
            reply.chunks.append(event["chunk"])

        request = {"session": session_id, "input": input, **request}
        await self.runtime.prompt(request, emit, settle, never)
        return reply

    def prompt(self, session_id: int, input: Any, keep: bool = True, **request: Any) -> Reply:
        return self.run(self.prompt_async(session_id, input, keep, **request))

    def append(self, session_id: int, input: Any, keep: bool = True) -> None:
        async def settle(value: dict[str, Any]) -> bool:
            return keep

        self.run(self.runtime.append({"session": session_id, "input": input}, settle, never))

    def measure(
        self, session_id: int, input: Any, constraint: dict | None = None, omit: bool = False
    ) -> int:
        request = {"session": session_id, "input": input, "constraint": constraint, "omit": omit}
        return self.run(self.runtime.measure(request))

    def clone(self, session_id: int) -> int:
        return self.run(self.runtime.clone({"session": session_id}, never))["session"]

    def usage(self, session_id: int) -> int:
        return self.session(session_id).context_usage


@pytest.fixture
def echo() -> Iterator[Echo]:
    with asyncio.Runner() as runner:
        yield Echo(runner)


class WorkerHarness:
    """A ``Worker`` fed JSON strings; what it posts is parsed into ``posted``."""

    def __init__(self, runner: asyncio.Runner) -> None:
        self.runner = runner
        self.posted: list[dict[str, Any]] = []
        self.worker = Worker(Runtime(EchoModel()), lambda s: self.posted.append(json.loads(s)))

    def send(self, **message: Any) -> None:
        """Deliver one message, then let the worker run."""
        self.send_all(message)

    def send_all(self, *messages: dict[str, Any]) -> None:
        """Deliver messages back to back (no task runs in between), then let the worker run."""

        async def deliver() -> None:
            for message in messages:
                self.worker.receive(json.dumps(message))
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
