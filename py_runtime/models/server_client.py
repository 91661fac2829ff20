"""Requests to a model server: the host's HTTP seam, each step of a request held to
a timeout and to the call's abort, and a streamed answer's server-sent events.

A server that goes silent, cannot be reached or breaks the connection is a
NetworkError; an abort cancels the request (the server sees the connection close).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from ..engine.errors import Aborted, PromptAPIError, operation_error
from .base import StopCallback

#: How often a pending read checks whether its call was aborted, in seconds.
POLL_SECONDS = 0.05

T = TypeVar("T")


class Exchange(Protocol):
    """One HTTP request, made by the host (page: fetch; CPython: urllib)."""

    async def start(self) -> int:
        """Send the request; the response's status. ``ConnectionError`` when the
        server cannot be reached."""

    async def read(self) -> str | None:
        """The next piece of the body, decoded; None at its end. ``ConnectionError``
        when the connection breaks."""

    def cancel(self) -> None:
        """Abort the request (the server sees the connection close)."""


class Http(Protocol):
    def open(
        self, method: str, url: str, headers: dict[str, str], body: str | None
    ) -> Exchange: ...


def network_error(message: str) -> PromptAPIError:
    return PromptAPIError("NetworkError", message)


@dataclass
class Reply:
    """A whole (non-streamed) response."""

    status: int
    text: str

    def json(self) -> Any:
        try:
            return json.loads(self.text)
        except ValueError:
            return None

    def object(self) -> dict[str, Any]:
        """The body's JSON object on a 200 status; else empty."""
        body = self.json() if self.status == 200 else None
        return body if isinstance(body, dict) else {}


class ServerClient:
    """Requests to one server: its OpenAI-compatible API at ``base_url``, its own
    endpoints (llama.cpp's /props, /tokenize) beside /v1 at ``root_url``."""

    def __init__(self, base_url: str, http: Http, api_key: str | None, timeout: float) -> None:
        self.base_url = base_url.rstrip("/")
        self.root_url = self.base_url.removesuffix("/v1")
        self.http = http
        self.api_key = api_key
        #: Seconds a request may go without a byte from the server.
        self.timeout = timeout

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    async def _within(
        self,
        step: Awaitable[T],
        exchange: Exchange,
        stop: StopCallback,
        url: str,
        reading: bool = False,
    ) -> T:
        """``step`` of ``exchange`` (its start, or a ``reading`` of its body), cancelled
        on stop or after ``timeout`` seconds without a byte."""
        task = asyncio.ensure_future(step)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout
        try:
            while not task.done():
                await asyncio.wait({task}, timeout=POLL_SECONDS)
                if task.done():
                    break
                if stop():
                    raise Aborted
                if loop.time() > deadline:
                    raise network_error(
                        f"The model server at {url} sent nothing for {self.timeout:g} s."
                    )
            return task.result()
        except ConnectionError as error:
            exchange.cancel()
            what = "broke the connection" if reading else "could not be reached"
            raise network_error(f"The model server at {url} {what} ({error}).") from None
        except BaseException:
            if not task.done():
                task.cancel()
                task.add_done_callback(lambda t: t.cancelled() or t.exception())
            exchange.cancel()
            raise

    async def send(
        self, method: str, url: str, body: Any, stop: StopCallback
    ) -> tuple[Exchange, int]:
        """Start a request: its exchange, whose body is still to read, and the status."""
        data = None if body is None else json.dumps(body, ensure_ascii=False)
        exchange = self.http.open(method, url, self._headers(), data)
        return exchange, await self._within(exchange.start(), exchange, stop, url)

    async def read(self, exchange: Exchange, stop: StopCallback, url: str) -> str | None:
        return await self._within(exchange.read(), exchange, stop, url, reading=True)

    async def read_all(self, exchange: Exchange, stop: StopCallback, url: str) -> str:
        pieces = []
        while (piece := await self.read(exchange, stop, url)) is not None:
            pieces.append(piece)
        return "".join(pieces)

    async def request(
        self, method: str, path: str, body: Any = None, stop: StopCallback = lambda: False
    ) -> Reply:
        """A whole request to ``path`` (``/models``; ``root:`` for the server's own)."""
        url = self.root_url + path[5:] if path.startswith("root:") else self.base_url + path
        exchange, status = await self.send(method, url, body, stop)
        return Reply(status, await self.read_all(exchange, stop, url))

    async def events(
        self, exchange: Exchange, stop: StopCallback, url: str
    ) -> AsyncIterator[dict[str, Any]]:
        """The stream's server-sent events' data, as JSON objects, up to ``[DONE]``."""
        buffer = ""
        while (piece := await self.read(exchange, stop, url)) is not None:
            buffer += piece
            *lines, buffer = buffer.split("\n")
            for line in lines:
                line = line.rstrip("\r")
                if not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    return
                try:
                    event = json.loads(data)
                except ValueError:
                    raise operation_error(
                        f"The model server sent an event that is not JSON: {data[:100]}"
                    ) from None
                if isinstance(event, dict):
                    yield event
