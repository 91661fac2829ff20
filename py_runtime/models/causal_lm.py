"""Causal language models in the Transformers.js / Optimum layout.

A base location holds ``config.json``, ``generation_config.json``,
``tokenizer.json``, ``tokenizer_config.json`` (with the chat template, or a
``chat_template.jinja`` beside it) and ``onnx/model{suffix}.onnx``. The
generation loop below is the same in the page and under CPython; only the
``Backend`` that runs the forward passes differs.

The KV cache is reused across turns: each call renders the whole conversation
with the chat template, tokenizes it, and runs only the tokens after the longest
prefix already in the cache.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..backends.base import Backend, Sampling
from ..chat_template import ChatTemplate, messages_to_hf, tool_declarations_to_hf
from ..errors import PromptAPIError
from ..messages import Content, Message, ToolCall
from ..options import Availability, Capabilities, LanguageModelOptions, ToolDeclaration
from ..tokenizer import StreamDecoder, Tokenizer
from ..tool_calls import ParsedCall, make_parser, parser_for_model
from .base import Chunk, ProgressCallback, StopCallback

#: (temperature, top-k) per samplingMode; "most-predictable" is greedy.
SAMPLING_MODES: dict[str, Sampling] = {
    "most-predictable": Sampling(top_k=1),
    "predictable": Sampling(top_k=3, temperature=0.3),
    "slightly-predictable": Sampling(top_k=5, temperature=0.5),
    "balanced": Sampling(top_k=8, temperature=0.7),
    "slightly-creative": Sampling(top_k=16, temperature=0.9),
    "creative": Sampling(top_k=32, temperature=1.1),
    "most-creative": Sampling(top_k=64, temperature=1.3),
}


class ModelFiles(Protocol):
    """Reads the model's small files (the ONNX weights are the backend's business)."""

    async def read_text(self, name: str) -> str | None:
        """The file's text, or None when it does not exist."""


BackendFactory = Callable[[dict[str, Any], ProgressCallback], Awaitable[Backend]]


def sampling_for(mode: str | None, top_k: float | None, temperature: float | None) -> Sampling:
    """The sampling of a session: its mode, or its legacy topK/temperature."""
    if mode is not None:
        return SAMPLING_MODES[mode]
    base = SAMPLING_MODES["balanced"]
    k = base.top_k if top_k is None else max(1, int(min(top_k, 1 << 20)))
    t = base.temperature if temperature is None else temperature
    return Sampling(top_k=k, temperature=t)


def common_prefix_length(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


class CausalLM:
    """A chat model whose answers come from its ONNX graph."""

    capabilities = Capabilities(
        languages=("en",),
        input_types=("text", "tool-call", "tool-response"),
        output_types=("text", "tool-call"),
    )

    def __init__(
        self,
        files: ModelFiles,
        make_backend: BackendFactory,
        context_cap: int | None = None,
    ) -> None:
        self.files = files
        self.make_backend = make_backend
        self.context_cap = context_cap
        self.backend: Backend | None = None
        self.config: dict[str, Any] = {}
        self.tokenizer: Tokenizer | None = None
        self.template: ChatTemplate | None = None
        self.eos_ids: set[int] = set()
        self.parser_family: str | None = None

    # -- loading -----------------------------------------------------------

    async def _json(self, name: str, required: bool = True) -> dict[str, Any]:
        text = await self.files.read_text(name)
        if text is None:
            if required:
                raise PromptAPIError("OperationError", f"The model file {name} is missing.")
            return {}
        try:
            value = json.loads(text)
        except ValueError as error:
            raise PromptAPIError(
                "OperationError", f"The model file {name} is not valid JSON: {error}."
            ) from None
        if not isinstance(value, dict):
            raise PromptAPIError("OperationError", f"The model file {name} is not a JSON object.")
        return value

    async def load(self, on_progress: ProgressCallback, stop: StopCallback) -> None:
        """Read the configuration, then start the backend while the tokenizer and the
        template are fetched and parsed (the runtime's files and the model's download
        overlap the tokenizer's parsing)."""
        if self.backend is not None:
            return
        self.config = await self._json("config.json")
        backend = asyncio.ensure_future(self.make_backend(self.config, on_progress))
        try:
            generation, tokenizer_text, tokenizer_config, template_text = await asyncio.gather(
                self._json("generation_config.json", required=False),
                self.files.read_text("tokenizer.json"),
                self._json("tokenizer_config.json"),
                self.files.read_text("chat_template.jinja"),
            )
            self.tokenizer = self._tokenizer(tokenizer_text)
            self.template = ChatTemplate.from_tokenizer_config(tokenizer_config, template_text)
        except BaseException:
            # The backend's own failure, if any, is not the one to report.
            backend.add_done_callback(lambda task: task.cancelled() or task.exception())
            backend.cancel()
            raise
        eos = generation.get("eos_token_id", self.config.get("eos_token_id"))
        self.eos_ids = set(eos if isinstance(eos, list) else [eos] if eos is not None else [])
        try:
            self.parser_family = parser_for_model(
                self.config.get("model_type", ""), self.template.source()
            )
        except NotImplementedError:
            self.parser_family = None  # answers stay text; tools cannot be called
        self.backend = await backend

    @staticmethod
    def _tokenizer(text: str | None) -> Tokenizer:
        if text is None:
            raise PromptAPIError("OperationError", "The model file tokenizer.json is missing.")
        try:
            return Tokenizer.from_json(text)
        except (ValueError, KeyError, TypeError) as error:
            raise PromptAPIError(
                "OperationError", f"The model file tokenizer.json is malformed: {error!r}."
            ) from None

    # -- the adapter interface ----------------------------------------------

    @property
    def context_window(self) -> float:
        window = int(self.config.get("max_position_embeddings", 2048))
        return min(window, self.context_cap) if self.context_cap else window

    async def availability(self) -> Availability | None:
        if self.backend is not None:
            return "available"
        return "downloadable" if await self.files.read_text("config.json") else "unavailable"

    def _render(
        self, messages: Sequence[Message], tools: Sequence[ToolDeclaration], generate: bool
    ) -> str:
        assert self.template is not None
        prefix = bool(messages) and messages[-1].prefix
        return self.template.render(
            messages_to_hf(messages),
            tools=tool_declarations_to_hf(tools) if tools else None,
            add_generation_prompt=generate and not prefix,
            continue_final_message=generate and prefix,
        )

    def _count(self, text: str) -> int:
        assert self.tokenizer is not None
        return len(self.tokenizer.encode(text))

    def measure(self, messages: Sequence[Message]) -> int:
        """Tokens the messages add to a conversation (after a fixed system turn)."""
        base = [Message("system", (Content("text", ""),))]
        return self._count(self._render([*base, *messages], (), False)) - self._count(
            self._render(base, (), False)
        )

    def measure_initial(self, messages: Sequence[Message], tools: Sequence[ToolDeclaration]) -> int:
        """Tokens of the initial prompts and tool declarations, as rendered."""
        if messages:
            return self._count(self._render(messages, tools, False))
        if not tools:
            return 0
        # Templates render nothing for an empty chat: measure beside an empty user turn.
        empty = [Message("user", (Content("text", ""),))]
        return self._count(self._render(empty, tools, False)) - self.measure(empty)

    async def new_state(self, options: LanguageModelOptions, stop: StopCallback) -> CausalLMState:
        assert self.backend is not None
        sampling = sampling_for(options.sampling_mode, options.top_k, options.temperature)
        state = CausalLMState(
            self,
            list(options.initial_prompts),
            options.tools,
            self.backend.new_cache(),
            [],
            sampling,
        )
        if options.initial_prompts:
            await state.sync(self._render(state.conversation, options.tools, False), stop)
        return state


@dataclass
class CausalLMState:
    """One session's conversation and the backend cache that holds its tokens."""

    model: CausalLM
    conversation: list[Message]
    tools: Sequence[ToolDeclaration]
    cache: int
    cached: list[int] = field(default_factory=list)
    sampling: Sampling = field(default_factory=lambda: SAMPLING_MODES["balanced"])

    @property
    def backend(self) -> Backend:
        assert self.model.backend is not None
        return self.model.backend

    def checkpoint(self) -> tuple[list[Message], list[int]]:
        return list(self.conversation), list(self.cached)

    def rollback(self, checkpoint: tuple[list[Message], list[int]]) -> None:
        self.conversation, cached = list(checkpoint[0]), list(checkpoint[1])
        keep = common_prefix_length(self.cached, cached)
        self.backend.truncate(self.cache, keep)
        self.cached = self.cached[:keep]

    async def sync(self, text: str, stop: StopCallback) -> None:
        """Make the cache hold ``text``'s tokens, running only what is not there yet."""
        assert self.model.tokenizer is not None
        ids = self.model.tokenizer.encode(text)
        keep = common_prefix_length(self.cached, ids)
        if keep == len(ids) and keep > 0:
            keep -= 1  # re-run the last token: its logits are needed
        if keep < len(self.cached):
            self.backend.truncate(self.cache, keep)
        if stop():
            from ..session import Aborted

            raise Aborted
        await self.backend.forward(self.cache, ids[keep:])
        self.cached = ids

    async def prefill(self, messages: Sequence[Message], stop: StopCallback) -> None:
        self.conversation.extend(messages)
        await self.sync(self.model._render(self.conversation, self.tools, False), stop)

    async def generate(self, stop: StopCallback) -> AsyncIterator[Chunk]:
        """Decode until an end-of-sequence token, streaming text and tool calls."""
        from ..session import Aborted

        model = self.model
        assert model.tokenizer is not None
        await self.sync(model._render(self.conversation, self.tools, True), stop)
        decoder = StreamDecoder(model.tokenizer, skip_special_tokens=True)
        names = {tool.name for tool in self.tools}
        parser = make_parser(model.parser_family, names) if names and model.parser_family else None
        text, calls = [], []
        while len(self.cached) < model.context_window:
            if stop():
                raise Aborted
            token = await self.backend.next_token(self.cache, self.sampling)
            if token in model.eos_ids:
                break
            segments = [decoder.feed(token)]
            await self.backend.forward(self.cache, [token])
            self.cached.append(token)
            for chunk in self._chunks(segments, parser, text, calls):
                yield chunk
        for chunk in self._chunks([decoder.flush()], parser, text, calls, final=True):
            yield chunk
        # An assistant prefix message and its continuation become one answer.
        answer = "".join(text)
        if self.conversation and self.conversation[-1].prefix:
            answer = self.conversation.pop().text() + answer
        content = [Content("text", answer)] if answer else []
        content.extend(Content("tool-call", call) for call in calls)
        self.conversation.append(Message("assistant", tuple(content)))

    @staticmethod
    def _chunks(
        pieces: list[str], parser: Any, text: list[str], calls: list[ToolCall], final: bool = False
    ) -> list[Chunk]:
        """Turn decoded text into chunks, splitting out tool calls when tools exist."""
        segments: list[Any] = []
        for piece in pieces:
            segments.extend(parser.feed(piece) if parser else [piece])
        if final and parser:
            segments.extend(parser.finish())
        chunks: list[Chunk] = []
        for segment in segments:
            if isinstance(segment, ParsedCall):
                call = ToolCall(f"call_{secrets.token_hex(12)}", segment.name, segment.arguments)
                calls.append(call)
                chunks.append(call)
            elif segment:
                text.append(segment)
                chunks.append(segment)
        return chunks

    def evict(self, messages: Sequence[Message]) -> None:
        """Drop evicted history from the conversation; the cache re-syncs lazily."""
        for message in messages:
            if message in self.conversation:
                self.conversation.remove(message)

    async def clone(self, context: Sequence[Message]) -> CausalLMState:
        return CausalLMState(
            self.model,
            list(self.conversation),
            self.tools,
            await self.backend.clone(self.cache),
            list(self.cached),
            self.sampling,
        )

    def release(self) -> None:
        self.backend.release(self.cache)
