"""The engine fuzzer's driver and its property: only the spec's errors come out.

``EngineDriver`` drives an ``Endpoint`` the way the worker does: JSON text in through
``receive``, replies out through ``post`` (decoded and checked against the protocol),
the page's ``settle`` answered as soon as a prompt or append returns. It runs on an
event loop of its own in a thread, so a hang is a timeout, not a stuck test run, and a
browser test's running loop in the main thread does not matter.

Sizes (small by default, so CI stays fast):

- ``PROMPT_API_FUZZ_EXAMPLES``: generated engine cases, all tests together (default
  300; the full run is 10,000);
- ``PROMPT_API_FUZZ_PAGE_CASES``: generated page cases in Chromium (default 100; the
  full run is 1,000), ``PROMPT_API_FUZZ_SEED`` to replay one page run (it prints its
  seed).
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections import Counter
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from itertools import count
from typing import Any, TypeVar

from py_runtime.engine.endpoint import Endpoint
from py_runtime.engine.protocol import RESULTS, Return, Throw
from py_runtime.engine.runtime import Runtime
from py_runtime.engine.wire import check, decode_reply, to_wire
from py_runtime.models.base import ModelAdapter

T = TypeVar("T")


def env_int(name: str, default: int) -> int:
    """A positive integer from the environment, or ``default``."""
    value = os.environ.get(name, "").strip()
    return max(1, int(value)) if value else default


#: Engine cases in all, shared by the tests in proportion to their weights.
TOTAL_EXAMPLES = env_int("PROMPT_API_FUZZ_EXAMPLES", 300)


def share(weight: float) -> int:
    """This test's part of ``TOTAL_EXAMPLES`` (weights add up to 1)."""
    return max(3, round(TOTAL_EXAMPLES * weight))


#: Cases tried and failures seen per test, for the figures of a full run.
TALLY: Counter[str] = Counter()

#: The names an engine error may carry: the spec's (TypeError, RangeError and the
#: DOMException names it uses), QuotaExceededError, AbortError, and the page's own
#: exception rethrown (JSException). OperationError only for a malformed message.
SPEC_ERROR_NAMES = frozenset(
    {
        "TypeError",
        "RangeError",
        "SyntaxError",
        "NotSupportedError",
        "NotAllowedError",
        "InvalidStateError",
        "DataError",
        "QuotaExceededError",
        "AbortError",
        "JSException",
    }
)
MALFORMED = "The runtime received a malformed message"


class FuzzFailure(AssertionError):
    """The property failed: an error that is not the spec's, a hang, a broken session."""


def check_error(error: dict[str, Any], *, threw: set[int], malformed_ok: bool) -> str:
    """The error's name if it is one the page may see; ``FuzzFailure`` otherwise.

    ``threw``: the page-exception indexes the request carried (a ``JSException`` must
    name one of them); ``malformed_ok``: the request may be malformed (OperationError).
    """
    name, message = error.get("name"), error.get("message")
    if not isinstance(name, str) or not isinstance(message, str):
        raise FuzzFailure(f"an error without a name or message: {error!r}")
    if "internal error" in message:
        raise FuzzFailure(f"an engine bug reached the page: {error!r}")
    if name == "OperationError":
        if malformed_ok and (message.startswith(MALFORMED) or message == "The runtime is started."):
            return name
        raise FuzzFailure(f"an OperationError the docs do not document: {error!r}")
    if name not in SPEC_ERROR_NAMES:
        raise FuzzFailure(f"an error the spec does not name: {error!r}")
    if name == "QuotaExceededError":
        requested, quota = error.get("requested"), error.get("quota")
        if not (isinstance(requested, int | float) and isinstance(quota, int | float)):
            raise FuzzFailure(f"a QuotaExceededError without requested/quota: {error!r}")
        if not requested > quota:
            raise FuzzFailure(f"a QuotaExceededError that fits: {error!r}")
    if name == "JSException" and error.get("index") not in threw:
        raise FuzzFailure(f"a JSException naming no exception the page threw: {error!r}")
    return name


def threw_indexes(value: Any) -> set[int]:
    """Every ``{"threw": i}`` probe inside a request."""
    found: set[int] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if set(item) == {"threw"} and type(item["threw"]) is int:
                found.add(item["threw"])
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


class LoopThread:
    """An event loop in a daemon thread; ``run`` waits for a coroutine with a timeout."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()

    def run(self, coroutine: Coroutine[Any, Any, T], timeout: float) -> T:
        future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        try:
            return future.result(timeout)
        except TimeoutError:
            future.cancel()
            raise FuzzFailure(f"the engine did not answer within {timeout} s (a hang)") from None

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)
        if not self.loop.is_running():
            self.loop.close()


@dataclass
class Outcome:
    """One call as the page sees it: chunks, then a value or an error."""

    kind: str
    chunks: list[Any] = field(default_factory=list)
    progress: list[float] = field(default_factory=list)
    value: Any = None
    error: dict[str, Any] | None = None

    @property
    def text(self) -> str:
        return "".join(c["text"] for c in self.chunks if c["kind"] == "text")


class EngineDriver:
    """An ``Endpoint`` over ``model``, driven through JSON text as the worker drives it."""

    def __init__(self, model: ModelAdapter, loop: LoopThread, timeout: float = 20) -> None:
        self.model = model
        self.loop = loop
        self.timeout = timeout
        self.ids = count(1)
        self.endpoint = Endpoint(Runtime(model), self._on_post)
        self._calls: dict[int, tuple[Outcome, asyncio.Future[Outcome], bool]] = {}
        #: Replies to calls this driver did not make (``raw`` messages).
        self.stray: list[dict[str, Any]] = []
        #: While set, every reply is stray (raw messages may reuse any id).
        self.raw_mode = False

    @property
    def runtime(self) -> Runtime:
        return self.endpoint.runtime

    def _on_post(self, text: str) -> None:
        reply = decode_reply(text)  # every reply must be a well-formed protocol message
        wire = to_wire(reply)
        entry = None if self.raw_mode else self._calls.get(wire.get("id", -1))
        if entry is None:
            self.stray.append(wire)
            return
        outcome, done, keep = entry
        if done.done():
            raise FuzzFailure(f"a reply after the call ended: {wire!r}")
        match wire["kind"]:
            case "progress":
                outcome.progress.append(wire["loaded"])
            case "chunk":
                outcome.chunks.append(wire["chunk"])
            case "return":
                assert isinstance(reply, Return)
                check(RESULTS[outcome.kind], reply.value, "value")
                outcome.value = reply.value
                if outcome.kind in ("prompt", "append"):
                    # The page's answer; the endpoint waits for it before finishing.
                    self.endpoint.receive(
                        json.dumps({"kind": "settle", "target": reply.id, "keep": keep})
                    )
                done.set_result(outcome)
            case "throw":
                assert isinstance(reply, Throw)
                outcome.error = dict(reply.error)
                done.set_result(outcome)

    async def _call(self, request: dict[str, Any], keep: bool, abort: bool) -> Outcome:
        request_id = request["id"]
        done: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        self._calls[request_id] = (Outcome(request["kind"]), done, keep)
        self.endpoint.receive(json.dumps(request))
        if abort:
            self.endpoint.receive(json.dumps({"kind": "abort", "target": request_id}))
        outcome = await done
        # The call's task ends after its settle: wait for it, so state reads are final.
        while request_id in self.endpoint._controls:
            await asyncio.sleep(0)
        return outcome

    def call(
        self, kind: str, payload: dict[str, Any], keep: bool = True, abort: bool = False
    ) -> Outcome:
        """Send one call and wait for its end (``keep``: the page's settle answer)."""
        request = {"kind": kind, "id": next(self.ids), **payload}
        return self.loop.run(self._call(request, keep, abort), self.timeout)

    def raw(self, text: str) -> list[dict[str, Any]]:
        """Deliver any text; returns the replies it caused (to ids nobody waits for)."""

        async def deliver() -> None:
            self.endpoint.receive(text)
            for _ in range(50):  # let a call the text started run to its end
                await asyncio.sleep(0)
            while self.endpoint._controls:
                for control in self.endpoint._controls.values():
                    if control.settled is not None and not control.settled.done():
                        control.settled.set_result(False)
                await asyncio.sleep(0)

        before = len(self.stray)
        self.raw_mode = True
        try:
            self.loop.run(deliver(), self.timeout)
        finally:
            self.raw_mode = False
        return self.stray[before:]

    # -- the calls, as the shim sends them --------------------------------

    def create(self, options: dict[str, Any], activation: bool = True) -> Outcome:
        return self.call("create", {"options": options, "activation": activation})

    def prompt(
        self,
        session: int,
        input: Any,
        constraint: dict[str, Any] | None = None,
        omit: bool = False,
        keep: bool = True,
        abort: bool = False,
    ) -> Outcome:
        payload = {"session": session, "input": input, "constraint": constraint, "omit": omit}
        return self.call("prompt", payload, keep, abort)


def require_answer(driver: EngineDriver, session: int, answer: Callable[[str], bool]) -> None:
    """The session answers a normal prompt (``answer`` judges the text)."""
    outcome = driver.prompt(session, "ping")
    if outcome.error is not None:
        raise FuzzFailure(f"session {session} no longer answers: {outcome.error!r}")
    if not answer(outcome.text):
        raise FuzzFailure(f"session {session} answered a normal prompt with {outcome.text!r}")
