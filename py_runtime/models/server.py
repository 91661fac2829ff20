"""A model served by an OpenAI-compatible server engine (llama.cpp's server, vLLM).

Opt-in only: the page names the server (``data-model="openai:URL"``, README
"Server backend"); nothing leaves the device otherwise. The session's
conversation is the client-side history, sent whole with every answer (the
server's prompt cache reuses what it already computed), so ``clone`` and abort
need nothing from the server. What maps where:

- answers: ``POST {base}/chat/completions`` with ``stream: true`` (server-sent
  events); an abort closes the request, which stops the engine's generation;
- sampling: ``temperature`` and ``top_k`` (greedy: temperature 0);
- tools: ``tools`` and the answer's ``tool_calls`` (the engine's chat template must
  have a tool format; llama.cpp's Hermes one holds arguments to the schema);
- constraints: a JSON schema as ``response_format`` ``json_schema``; a RegExp as
  llama.cpp's ``grammar`` (GBNF, ``gbnf.py``; after an assistant prefix, what may
  follow it); NotSupportedError where the server has no way to hold it;
- ``contextWindow``: llama.cpp's ``/props`` (its per-slot ``n_ctx``), else the
  model list's ``max_model_len`` (vLLM) or ``context_length``;
- usage: the engine's own tokenizer (llama.cpp ``/apply-template`` + ``/tokenize``,
  or vLLM's chat ``/tokenize``); without one, UTF-8 bytes / 4 (an approximation).

Every request is read with a timeout between pieces: a server that goes silent is
a NetworkError, as is one that cannot be reached or cuts an answer off; an error
status is an OperationError with the server's message. The requests are
``server_client.py``'s, the format ``chat_completions.py``'s.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..engine.errors import PromptAPIError, operation_error
from ..engine.grammar import Grammar
from ..engine.messages import Content, Message
from ..engine.options import LanguageModelOptions, ToolDeclaration
from ..engine.vocabulary import SAMPLING_MODES, Availability, Sampling, SamplingModes, sampling_for
from .base import CHAT_CAPABILITIES, Chunk, ProgressCallback, StopCallback
from .chat_completions import (
    ToolCallDelta,
    constraint_fields,
    error_message,
    sampling_fields,
    to_openai_messages,
)
from .hf_messages import tool_declarations_to_hf
from .server_client import Http, ServerClient, network_error

#: The marker before a server's base URL in ``data-model``.
SCHEME = "openai:"
#: The longest one answer may be, in tokens (as for local models).
MAX_RESPONSE_TOKENS = 512
#: Seconds a request may go without a byte from the server (``serverTimeout``).
DEFAULT_TIMEOUT = 60.0
#: Used when the server states no context size.
FALLBACK_WINDOW = 4096
#: The fixed system turn inputs are measured after (as ``causal_lm`` does).
_BASE = (Message("system", (Content("text", ""),)),)
_USER = Message("user", (Content("text", ""),))


def server_url(model: str) -> str | None:
    """The base URL in a ``data-model`` value, or None when it names no server."""
    if not model.startswith(SCHEME):
        return None
    return model[len(SCHEME) :].rstrip("/")


class ServerModel:
    """The ModelAdapter over a server: no weights here, only requests."""

    capabilities = CHAT_CAPABILITIES
    keeps_tool_calls = True
    reply_room = 0  # the server engine opens the answer's turn and bounds it itself
    sampling_modes: SamplingModes = SAMPLING_MODES
    enforces_constraints = True

    def __init__(
        self,
        base_url: str,
        http: Http,
        model: str | None = None,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        context_cap: int | None = None,
    ) -> None:
        self.client = ServerClient(base_url, http, api_key, timeout)
        self.model = model
        self.context_cap = context_cap
        self.model_id: str | None = None
        self._window = float(context_cap or FALLBACK_WINDOW)
        #: How usage is counted: "llama.cpp", "vllm" or "bytes" (found at load).
        self.counter = "bytes"
        #: The counts of the fixed conversations measures subtract, once measured.
        self._fixed_counts: dict[tuple[Message, ...], int] = {}
        self._loading: asyncio.Future[None] | None = None

    @property
    def context_window(self) -> float:
        return self._window

    # -- loading -----------------------------------------------------------

    async def _served(self) -> dict[str, Any]:
        """The model's entry in the server's model list (``model`` or the only one)."""
        reply = await self.client.request("GET", "/models")
        if reply.status != 200:
            raise operation_error(
                f"The model server at {self.client.base_url} answered {reply.status}: "
                f"{error_message(reply.text)}"
            )
        entries = reply.object().get("data")
        if not isinstance(entries, list):
            raise operation_error(f"The model server at {self.client.base_url} lists no models.")
        for entry in entries:
            if isinstance(entry, dict) and (self.model is None or entry.get("id") == self.model):
                return entry
        raise operation_error(
            f"The model server at {self.client.base_url} does not serve the model {self.model!r}."
        )

    async def availability(self) -> Availability | None:
        """Available when the server answers and serves the model; else unavailable."""
        try:
            await self._served()
        except PromptAPIError:
            return "unavailable"
        return "available"

    async def load(self, on_progress: ProgressCallback, stop: StopCallback) -> None:
        """Find the model, its context window and how to count its tokens (once)."""
        if self.model_id is not None:
            return
        if self._loading is None:
            self._loading = asyncio.ensure_future(self._load())
        loading = self._loading
        try:
            await loading
        finally:
            if loading.done():
                self._loading = None
        on_progress(1)

    async def _load(self) -> None:
        entry = await self._served()
        window = await self._server_window(entry)
        if self.context_cap:
            window = min(window, self.context_cap)
        self._window = float(window)
        self.counter = await self._find_counter(str(entry["id"]))
        self.model_id = str(entry["id"])

    async def _server_window(self, entry: dict[str, Any]) -> int:
        props = await self.client.request("GET", "root:/props")
        settings = props.object().get("default_generation_settings")
        n_ctx = settings.get("n_ctx") if isinstance(settings, dict) else None
        for value in (n_ctx, entry.get("max_model_len"), entry.get("context_length")):
            if isinstance(value, int) and value > 0:
                return value
        return FALLBACK_WINDOW

    async def _find_counter(self, model_id: str) -> str:
        probe = [{"role": "user", "content": "Hi"}]
        reply = await self.client.request("POST", "root:/apply-template", {"messages": probe})
        if isinstance(reply.object().get("prompt"), str):
            return "llama.cpp"
        reply = await self.client.request(
            "POST", "root:/tokenize", {"model": model_id, "messages": probe}
        )
        if isinstance(reply.object().get("count"), int):
            return "vllm"
        return "bytes"

    # -- usage ---------------------------------------------------------------

    async def _count(self, messages: Sequence[Message], tools: Sequence[ToolDeclaration]) -> int:
        """Tokens of the conversation as the server renders it. Servers read a last
        assistant message as one to continue (and refuse one with tool calls): a
        finished one is counted with an empty user turn after it, less that turn."""
        if messages and messages[-1].role == "assistant" and not messages[-1].prefix:
            user_turn = await self._fixed((*_BASE, _USER)) - await self._fixed(_BASE)
            return await self._render_count([*messages, _USER], tools) - user_turn
        return await self._render_count(messages, tools)

    async def _fixed(self, messages: tuple[Message, ...]) -> int:
        """The count of a fixed conversation without tools (the same every time)."""
        if messages not in self._fixed_counts:
            self._fixed_counts[messages] = await self._render_count(messages, ())
        return self._fixed_counts[messages]

    async def _render_count(
        self, messages: Sequence[Message], tools: Sequence[ToolDeclaration]
    ) -> int:
        body: dict[str, Any] = {"messages": to_openai_messages(messages)}
        if tools:
            body["tools"] = tool_declarations_to_hf(tools)
        if self.counter == "llama.cpp":
            template = await self._tokenizer("root:/apply-template", body)
            tokens = await self._tokenizer(
                "root:/tokenize", {"content": template.get("prompt"), "add_special": False}
            )
            return len(tokens.get("tokens") or [])
        if self.counter == "vllm":
            body["model"] = self.model_id
            return int((await self._tokenizer("root:/tokenize", body)).get("count") or 0)
        text = json.dumps(body, ensure_ascii=False)
        return math.ceil(len(text.encode()) / 4)

    async def _tokenizer(self, path: str, body: Any) -> dict[str, Any]:
        reply = await self.client.request("POST", path, body)
        if reply.status != 200 or not reply.object():
            raise operation_error(
                f"The model server's tokenizer answered {reply.status}: {error_message(reply.text)}"
            )
        return reply.object()

    async def measure(self, messages: Sequence[Message]) -> int:
        """Tokens the messages add after a fixed system turn."""
        return await self._count([*_BASE, *messages], ()) - await self._fixed(_BASE)

    async def measure_context(
        self, messages: Sequence[Message], tools: Sequence[ToolDeclaration]
    ) -> int:
        if not messages and not tools:
            return 0
        if messages:
            return await self._count(messages, tools)
        return await self._count([_USER], tools) - await self._fixed((_USER,))

    async def new_state(self, options: LanguageModelOptions, stop: StopCallback) -> ServerState:
        sampling = sampling_for(options.sampling_mode, options.top_k, options.temperature)
        return ServerState(self, tuple(options.tools), sampling)

    # -- answers -------------------------------------------------------------

    async def stream(
        self,
        context: Sequence[Message],
        tools: Sequence[ToolDeclaration],
        sampling: Sampling,
        grammar: Grammar | None,
        stop: StopCallback,
    ) -> AsyncIterator[Chunk]:
        """One answer to ``context``, chunk by chunk."""
        assert self.model_id is not None
        body: dict[str, Any] = {
            "model": self.model_id,
            "messages": to_openai_messages(context),
            "stream": True,
            "max_tokens": MAX_RESPONSE_TOKENS,
            **sampling_fields(sampling),
        }
        if tools:
            body["tools"] = tool_declarations_to_hf(tools)
        prefix = context[-1].text() if context and context[-1].prefix else ""
        if grammar is not None:
            body.update(constraint_fields(grammar, prefix))
        url = self.client.base_url + "/chat/completions"
        exchange, status = await self.client.send("POST", url, body, stop)
        if status != 200:
            message = error_message(await self.client.read_all(exchange, stop, url))
            if grammar is not None and status == 400:
                raise PromptAPIError(
                    "NotSupportedError",
                    f"The model server cannot hold this response constraint: {message}",
                )
            raise operation_error(f"The model server answered {status}: {message}")
        calls: dict[int, ToolCallDelta] = {}
        finished = False
        #: llama.cpp's answer to a prefix starts with the prefix again: held back until
        #: it is known whether it does, then dropped (vLLM's continues after it).
        held: str | None = "" if prefix else None
        try:
            async for event in self.client.events(exchange, stop, url):
                if event.get("error"):
                    raise operation_error(
                        f"The model server failed: {error_message(json.dumps(event))}"
                    )
                for choice in event.get("choices") or []:
                    delta = choice.get("delta") or {}
                    text = str(delta.get("content") or "")
                    if held is not None and text:
                        held += text
                        if prefix.startswith(held):
                            continue
                        text = held.removeprefix(prefix)
                        held = None
                    if text:
                        yield text
                    for part in delta.get("tool_calls") or []:
                        call = calls.setdefault(int(part.get("index", 0)), ToolCallDelta())
                        call.call_id = part.get("id") or call.call_id
                        function = part.get("function") or {}
                        call.name += function.get("name") or ""
                        call.arguments.append(function.get("arguments") or "")
                    finished = finished or choice.get("finish_reason") is not None
        finally:
            exchange.cancel()
        if not finished:
            raise network_error(f"The model server at {url} cut the answer off.")
        for index in sorted(calls):
            yield calls[index].finish(tools)


@dataclass
class ServerState:
    """A session's state: nothing held on the server (the history is the session's)."""

    model: ServerModel
    tools: tuple[ToolDeclaration, ...]
    sampling: Sampling

    def checkpoint(self) -> None:
        return None

    def rollback(self, checkpoint: Any) -> None:
        pass

    async def prefill(
        self, context: Sequence[Message], added: Sequence[Message], stop: StopCallback
    ) -> None:
        """Nothing to compute ahead: the server reads the whole context with the next answer."""

    def generate(
        self, context: Sequence[Message], stop: StopCallback, grammar: Grammar | None = None
    ) -> AsyncIterator[Chunk]:
        return self.model.stream(context, self.tools, self.sampling, grammar, stop)

    async def clone(self, context: Sequence[Message]) -> ServerState:
        return ServerState(self.model, self.tools, self.sampling)

    def release(self) -> None:
        pass
