"""Causal language models in the Transformers.js / Optimum layout.

A base location holds ``config.json``, ``generation_config.json``,
``tokenizer.json``, ``tokenizer_config.json`` (with the chat template, or a
``chat_template.jinja`` beside it) and ``onnx/model{suffix}.onnx``. The
generation loop (``generation.py``) is the same in the page and under CPython; only
the ``Backend`` that runs the forward passes differs (see ``hosts/``).

The session's conversation is rendered with the chat template at every step; the
model keeps only the KV cache and the token ids in it, and runs only the tokens
after the longest prefix already cached.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from functools import cached_property
from typing import Any, Protocol

from ..engine.errors import Aborted, PromptAPIError, operation_error
from ..engine.messages import Content, Message, user_text
from ..engine.options import LanguageModelOptions, ToolDeclaration
from ..engine.protocol import SpeedResult
from ..engine.vocabulary import (
    ADVICE_FILE,
    SAMPLING_MODES,
    Availability,
    SamplingModes,
    calibrated_modes,
    sampling_for,
)
from ..tokenizer import Tokenizer
from ..tool_calls import parser_for_model
from .backend import Backend
from .base import CHAT_CAPABILITIES, ProgressCallback, StopCallback
from .chat_template import ChatTemplate, ChatTemplateError
from .generation import CausalLMState, common_prefix_length
from .hf_messages import messages_to_hf, tool_declarations_to_hf
from .prompted_tools import with_prompted_tools
from .speed import measure_speed
from .tool_choice import (
    GROUNDED_THRESHOLD,
    KEPT_BASELINES,
    PLAIN_SYSTEM,
    THRESHOLD,
    ToolChoice,
    name_scores,
    purpose,
)


class ModelFiles(Protocol):
    """Reads the model's small files (the ONNX weights are the backend's business)."""

    async def read_text(self, name: str) -> str | None:
        """The file's text, or None when it does not exist."""

    async def cached(self) -> bool:
        """Whether every file of the model is already here (nothing to download)."""

    async def read_prepared(self, name: str) -> bytes | None:
        """What was kept with ``keep_prepared`` for the file ``name`` (None: nothing)."""

    async def keep_prepared(self, name: str, data: bytes) -> None:
        """Keep ``data``, a form of the file ``name`` slow to rebuild, beside the model
        (the page's model cache; nowhere, where there is none)."""


BackendFactory = Callable[[dict[str, Any], ProgressCallback], Awaitable[Backend]]

#: The longest one response may be, in tokens, unless the model's generation_config.json
#: sets ``max_new_tokens``: small models can repeat themselves until the context is full
#: (implementation-defined; the answer then simply ends there).
MAX_RESPONSE_TOKENS = 512
#: A tokenizer.json longer than this (characters) is read through its prepared form
#: (tokenizer/prepared.py): Qwen's and Gemma's, not SmolLM2's (2 MB).
PREPARE_FROM = 4_000_000


#: The fixed system turn inputs are measured after (templates add a default one otherwise).
_BASE = (Message("system", (Content("text", ""),)),)


def merge_prefixes(messages: Sequence[Message]) -> list[Message]:
    """An assistant prefix message and the answer that continued it, as one message."""
    merged: list[Message] = []
    for message in messages:
        previous = merged[-1] if merged else None
        if previous and previous.prefix and message.role == "assistant":
            merged[-1] = replace(message, content=(*previous.content, *message.content))
        else:
            merged.append(message)
    return merged


class CausalLM:
    """A chat model whose answers come from its ONNX graph."""

    capabilities = CHAT_CAPABILITIES
    keeps_tool_calls = True
    enforces_constraints = True

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
        self.max_response_tokens = MAX_RESPONSE_TOKENS
        self.repetition_penalty = 1.0
        #: The sampling modes' settings for this model (its folder's advice may calibrate them).
        self.sampling_modes: SamplingModes = SAMPLING_MODES
        self.parser_family = "hermes"
        #: The template has no tool format: the runtime writes one (prompted_tools.py).
        self.prompted_tools = False
        #: Where a grammar forces text, run its tokens as a draft the model verifies, in
        #: one forward pass (Backend.speculate), instead of one pass per token.
        self.jump_forward = True
        #: Draft tokens the model kept, in total (benchmarks).
        self.jumped_tokens = 0
        #: The calibrated margin at which the runtime opens a call for a model told of
        #: its tools in the prompt (tool_choice.py); None: the model's own choice only.
        self.tool_threshold: float | None = THRESHOLD
        self.grounded_threshold = GROUNDED_THRESHOLD
        #: The runtime's tool choices, in order (benchmarks).
        self.tool_choices: list[ToolChoice] = []
        #: Calibrations by the content-free conversation's text (tool_choice.py).
        self._baselines: dict[str, dict[str, float]] = {}
        self._encoded: tuple[str, list[int]] = ("", [])  # the last text encoded, and its ids
        #: The load in progress (one for every caller), and its callers' progress callbacks.
        self._loading: asyncio.Future[None] | None = None
        self._listeners: list[ProgressCallback] = []

    # -- loading -----------------------------------------------------------

    async def _json(self, name: str, required: bool = True) -> dict[str, Any]:
        text = await self.files.read_text(name)
        if text is None:
            if required:
                raise operation_error(f"The model file {name} is missing.")
            return {}
        try:
            value = json.loads(text)
        except ValueError as error:
            raise operation_error(f"The model file {name} is not valid JSON: {error}.") from None
        if not isinstance(value, dict):
            raise operation_error(f"The model file {name} is not a JSON object.")
        return value

    async def load(self, on_progress: ProgressCallback, stop: StopCallback) -> None:
        """Load once, however many calls ask at the same time (concurrent create()s
        each made a backend of their own, and sessions' caches ended up addressed to
        the wrong one: tests/reliability/test_load.py); each caller follows the one
        load's progress. A failed load is tried again by the next call."""
        if self.backend is not None:
            return
        self._listeners.append(on_progress)
        if self._loading is None:
            self._loading = asyncio.ensure_future(self._load(self._progress))
        loading = self._loading
        try:
            await loading
        finally:
            self._listeners.remove(on_progress)
            if self._loading is loading and loading.done():
                self._loading = None

    def _progress(self, loaded: float) -> None:
        for listener in list(self._listeners):
            listener(loaded)

    async def _load(self, on_progress: ProgressCallback) -> None:
        """Read the configuration, then start the backend while the tokenizer and the
        template are fetched and parsed (the runtime's files and the model's download
        overlap the tokenizer's parsing)."""
        self.config = await self._json("config.json")
        backend = asyncio.ensure_future(self.make_backend(self.config, on_progress))
        try:
            (
                generation,
                tokenizer_text,
                tokenizer_config,
                template_text,
                advice,
            ) = await asyncio.gather(
                self._json("generation_config.json", required=False),
                self.files.read_text("tokenizer.json"),
                self._json("tokenizer_config.json"),
                self.files.read_text("chat_template.jinja"),
                self._json(ADVICE_FILE, required=False),
            )
            try:
                self.sampling_modes = calibrated_modes(advice.get("samplingModes"))
            except ValueError as error:
                raise operation_error(f"The model file {ADVICE_FILE} is wrong: {error}.") from None
            self.tokenizer = await self._tokenizer(tokenizer_text)
            self.template = self._template(tokenizer_config, template_text)
        except BaseException:
            # The backend's own failure, if any, is not the one to report.
            backend.add_done_callback(lambda task: task.cancelled() or task.exception())
            backend.cancel()
            raise
        eos = generation.get("eos_token_id", self.config.get("eos_token_id"))
        self.eos_ids = set(eos if isinstance(eos, list) else [eos] if eos is not None else [])
        self.max_response_tokens = int(generation.get("max_new_tokens") or MAX_RESPONSE_TOKENS)
        self.repetition_penalty = float(generation.get("repetition_penalty") or 1.0)
        try:
            self.parser_family = parser_for_model(
                self.config.get("model_type", ""), self.template.source()
            )
        except NotImplementedError:
            # No tool format this runtime knows in the template (SmolLM2's has none):
            # the tools go into the system prompt, calls are read in the Hermes syntax.
            self.parser_family, self.prompted_tools = "hermes", True
        try:
            self.backend = await backend
        except PromptAPIError:
            raise
        except Exception as error:  # ONNX Runtime could not start (no usable backend, ...)
            raise operation_error(f"The model's runtime could not start: {error}") from None
        self.backend.use_tokenizer(tokenizer_text or "", sorted(self.eos_ids))

    async def _tokenizer(self, text: str | None) -> Tokenizer:
        """The tokenizer, from its prepared form where the files keep one (a big
        vocabulary's tokenizer.json takes seconds to read in the page otherwise)."""
        if text is None:
            raise operation_error("The model file tokenizer.json is missing.")
        blob = (
            await self.files.read_prepared("tokenizer.json") if len(text) > PREPARE_FROM else None
        )
        try:
            tokenizer, fresh = Tokenizer.from_json_prepared(text, blob)
        except ValueError as error:
            raise operation_error(
                f"The model file tokenizer.json cannot be used: {error}."
            ) from None
        if fresh is not None and len(text) > PREPARE_FROM:
            await self.files.keep_prepared("tokenizer.json", fresh)
        return tokenizer

    @staticmethod
    def _template(config: dict[str, Any], text: str | None) -> ChatTemplate:
        try:
            return ChatTemplate.from_tokenizer_config(config, text)
        except ValueError as error:
            raise operation_error(f"The model's chat template cannot be used: {error}") from None

    # -- the adapter interface ----------------------------------------------

    @property
    def context_window(self) -> float:
        window = int(self.config.get("max_position_embeddings", 2048))
        return min(window, self.context_cap) if self.context_cap else window

    async def availability(self) -> Availability | None:
        if self.backend is not None or await self.files.cached():
            return "available"
        return "downloadable" if await self.files.read_text("config.json") else "unavailable"

    def render(
        self, messages: Sequence[Message], tools: Sequence[ToolDeclaration], generate: bool
    ) -> str:
        """The chat template's text for a conversation; ``generate`` opens the answer
        (or continues a final assistant prefix)."""
        assert self.template is not None
        prefix = bool(messages) and messages[-1].prefix
        chat = messages_to_hf(merge_prefixes(messages))
        hf_tools = tool_declarations_to_hf(tools) if tools else None
        if hf_tools and self.prompted_tools:
            chat, hf_tools = with_prompted_tools(chat, hf_tools), None
        try:
            return self.template.render(
                chat,
                tools=hf_tools,
                add_generation_prompt=generate and not prefix,
                continue_final_message=generate and prefix,
                # The Prompt API has no reasoning: templates that think by default
                # (Qwen3) open the answer with an empty thought instead.
                enable_thinking=False,
            )
        except (ChatTemplateError, ValueError) as error:
            raise operation_error(f"The model's chat template failed: {error}") from None

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` (the last text is remembered: a prefill and the usage
        measured after it encode the same conversation)."""
        assert self.tokenizer is not None
        if self._encoded[0] != text:
            self._encoded = (text, self.tokenizer.encode(text))
        return self._encoded[1]

    @cached_property
    def _base_tokens(self) -> int:
        """Tokens of the fixed system turn ``measure`` counts after (rendered once)."""
        return len(self.encode(self.render(_BASE, (), False)))

    @cached_property
    def reply_room(self) -> int:
        """The generation prompt's tokens and one token of answer (rendered once)."""
        turn = [*_BASE, Message("user", (Content("text", "Hi."),))]
        opened = self.encode(self.render(turn, (), True))
        return len(opened) - len(self.encode(self.render(turn, (), False))) + 1

    async def measure(self, messages: Sequence[Message]) -> int:
        """Tokens the messages add to a conversation (after a fixed system turn)."""
        return len(self.encode(self.render([*_BASE, *messages], (), False))) - self._base_tokens

    async def measure_context(
        self, messages: Sequence[Message], tools: Sequence[ToolDeclaration]
    ) -> int:
        """Tokens of the conversation as rendered, tool declarations included."""
        if messages:
            return len(self.encode(self.render(messages, tools, False)))
        if not tools:
            return 0
        # Templates render nothing for an empty chat: measure beside an empty user turn.
        empty = [Message("user", (Content("text", ""),))]
        return len(self.encode(self.render(empty, tools, False))) - await self.measure(empty)

    async def new_state(self, options: LanguageModelOptions, stop: StopCallback) -> CausalLMState:
        assert self.backend is not None
        sampling = replace(
            sampling_for(
                options.sampling_mode, options.top_k, options.temperature, self.sampling_modes
            ),
            repetition_penalty=self.repetition_penalty,
        )
        state = CausalLMState(self, options.tools, self.backend.new_cache(), [], sampling)
        if options.initial_prompts:
            await state.prefill(options.initial_prompts, options.initial_prompts, stop)
        return state

    async def tool_baseline(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolDeclaration],
        openings: dict[str, list[int]],
        stop: StopCallback,
        session: tuple[int, Sequence[int]],
    ) -> dict[str, float]:
        """The tools' name scores after a content-free conversation (tool_choice.py),
        scored once per conversation text and kept; in a copy of the ``session``'s
        cache (and the ids it holds), which runs only what the two do not share."""
        assert self.backend is not None
        ids = self.encode(self.render(messages, tools, True))
        key = json.dumps([ids, sorted(openings)])
        if key not in self._baselines:
            if stop():
                raise Aborted
            cache = await self.backend.clone(session[0])
            try:
                shared = min(common_prefix_length(ids, session[1]), len(ids) - 1)
                self.backend.truncate(cache, shared)
                await self.backend.forward(cache, ids[shared:])
                self._baselines[key] = await name_scores(self.backend, cache, ids, openings)
            finally:
                self.backend.release(cache)
            while len(self._baselines) > KEPT_BASELINES:
                del self._baselines[next(iter(self._baselines))]
        return self._baselines[key]

    def request_heads(
        self, tools: Sequence[ToolDeclaration], request: str
    ) -> tuple[dict[str | None, list[int]], list[int]] | None:
        """What ``tool_choice.request_scores`` scores ``request`` after: per tool (None:
        none), the ids of a conversation up to the request (a system turn saying what
        the tool does, the user turn's opening); and the ids of the request with its
        turn's end. None where the template does not write the request as given."""
        assert self.tokenizer is not None
        plain = Message("system", (Content("text", PLAIN_SYSTEM),))
        heads: dict[str | None, list[int]] = {}
        tail = ""
        for key, system in [(None, plain), *((tool.name, purpose(tool)) for tool in tools)]:
            text = self.render([system, user_text(request)], (), False)
            at = text.rfind(request)
            if not request.strip() or at < 0:
                return None
            heads[key], tail = self.tokenizer.encode(text[:at]), text[at:]
        return heads, self.tokenizer.encode(tail)

    async def benchmark(self, prompt_tokens: int, decode_tokens: int) -> SpeedResult:
        """Prefill and decode speed of the loaded model."""
        assert self.backend is not None and self.tokenizer is not None
        return await measure_speed(self.backend, self.tokenizer, prompt_tokens, decode_tokens)
