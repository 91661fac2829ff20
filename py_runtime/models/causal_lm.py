"""Causal language models in the Transformers.js / Optimum layout.

A base location holds ``config.json``, ``generation_config.json``,
``tokenizer.json``, ``tokenizer_config.json`` (with the chat template, or a
``chat_template.jinja`` beside it) and ``onnx/model{suffix}.onnx``. The
generation loop below is the same in the page and under CPython; only the
``Backend`` that runs the forward passes differs (see ``hosts/``).

The session's conversation is rendered with the chat template at every step; the
model keeps only the KV cache and the token ids in it, and runs only the tokens
after the longest prefix already cached.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import string
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, Protocol

from ..engine.completion import Completer
from ..engine.errors import Aborted, PromptAPIError, operation_error
from ..engine.grammar import Grammar, GrammarError
from ..engine.messages import Content, Message, ToolCall
from ..engine.options import LanguageModelOptions, ToolDeclaration
from ..engine.protocol import SpeedResult
from ..engine.vocabulary import (
    ADVICE_FILE,
    SAMPLING_MODES,
    Availability,
    Sampling,
    SamplingModes,
    calibrated_modes,
    sampling_for,
)
from ..tokenizer import StreamDecoder, Tokenizer
from ..tool_calls import ParsedCall, ToolCallParser, make_parser, parser_for_model
from ..tool_calls.grammar import tool_call_grammar
from .backend import Backend
from .base import CHAT_CAPABILITIES, Chunk, ProgressCallback, StopCallback
from .chat_template import ChatTemplate, ChatTemplateError
from .hf_messages import messages_to_hf, tool_declarations_to_hf
from .prompted_tools import with_prompted_tools
from .speed import measure_speed


class ModelFiles(Protocol):
    """Reads the model's small files (the ONNX weights are the backend's business)."""

    async def read_text(self, name: str) -> str | None:
        """The file's text, or None when it does not exist."""

    async def cached(self) -> bool:
        """Whether every file of the model is already here (nothing to download)."""


BackendFactory = Callable[[dict[str, Any], ProgressCallback], Awaitable[Backend]]

#: The longest one response may be, in tokens, unless the model's generation_config.json
#: sets ``max_new_tokens``: small models can repeat themselves until the context is full
#: (implementation-defined; the answer then simply ends there).
MAX_RESPONSE_TOKENS = 512
#: Within this many tokens of the budget's end, a constrained answer's shortest ending
#: is looked up at every step (engine/completion.py).
ENDING_MARGIN = 48
#: Tool-call formats whose markers are special tokens, kept when decoding.
MARKED_BY_SPECIALS = frozenset({"mistral", "pythonic"})


#: The fixed system turn inputs are measured after (templates add a default one otherwise).
_BASE = (Message("system", (Content("text", ""),)),)


def common_prefix_length(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


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
            self.tokenizer = self._tokenizer(tokenizer_text)
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

    @staticmethod
    def _tokenizer(text: str | None) -> Tokenizer:
        if text is None:
            raise operation_error("The model file tokenizer.json is missing.")
        try:
            return Tokenizer.from_json(text)
        except ValueError as error:
            raise operation_error(
                f"The model file tokenizer.json cannot be used: {error}."
            ) from None

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

    async def benchmark(self, prompt_tokens: int, decode_tokens: int) -> SpeedResult:
        """Prefill and decode speed of the loaded model."""
        assert self.backend is not None and self.tokenizer is not None
        return await measure_speed(self.backend, self.tokenizer, prompt_tokens, decode_tokens)


@dataclass
class CausalLMState:
    """One session's KV cache, the token ids it holds, and how it samples."""

    model: CausalLM
    tools: Sequence[ToolDeclaration]
    cache: int
    cached: list[int]
    sampling: Sampling

    @cached_property
    def schemas(self) -> dict[str, Any]:
        """The declared tools' input schemas, by name."""
        return {tool.name: tool.input_schema for tool in self.tools}

    @cached_property
    def tool_grammar(self) -> Grammar | None:
        """Answers that may call the session's tools, in the model's call syntax."""
        family = "prompted" if self.model.prompted_tools else self.model.parser_family
        return tool_call_grammar(family, self.schemas)

    @cached_property
    def loose_tool_grammar(self) -> Grammar | None:
        """The tool-call grammar with every tool's arguments held to a JSON object only:
        for schemas the grammar library cannot compile (it accepted their keywords)."""
        family = "prompted" if self.model.prompted_tools else self.model.parser_family
        return tool_call_grammar(family, {name: {"type": "object"} for name in self.schemas})

    @property
    def backend(self) -> Backend:
        assert self.model.backend is not None
        return self.model.backend

    def checkpoint(self) -> list[int]:
        return list(self.cached)

    def rollback(self, checkpoint: list[int]) -> None:
        keep = common_prefix_length(self.cached, checkpoint)
        self.backend.truncate(self.cache, keep)
        self.cached = self.cached[:keep]

    async def sync(self, text: str, stop: StopCallback) -> None:
        """Make the cache hold ``text``'s tokens, running only what is not there yet."""
        ids = self.model.encode(text)
        keep = common_prefix_length(self.cached, ids)
        if keep == len(ids) and keep > 0:
            keep -= 1  # re-run the last token: its logits are needed
        if keep < len(self.cached):
            self.backend.truncate(self.cache, keep)
        if stop():
            raise Aborted
        await self.backend.forward(self.cache, ids[keep:])
        self.cached = list(ids)

    async def prefill(
        self, context: Sequence[Message], added: Sequence[Message], stop: StopCallback
    ) -> None:
        await self.sync(self.model.render(context, self.tools, False), stop)

    async def generate(
        self, context: Sequence[Message], stop: StopCallback, grammar: Grammar | None = None
    ) -> AsyncIterator[Chunk]:
        """Decode until an end-of-sequence token, streaming text and tool calls; held
        to ``grammar`` (a response constraint), else to the tool-call grammar."""
        model = self.model
        assert model.tokenizer is not None
        await self.sync(model.render(context, self.tools, True), stop)
        family = model.parser_family
        # Formats whose markers are special tokens must see them (Mistral, LFM2).
        decoder = StreamDecoder(
            model.tokenizer, skip_special_tokens=family not in MARKED_BY_SPECIALS
        )
        schemas = self.schemas
        parser = make_parser(family, set(schemas), schemas) if schemas else None
        if grammar is not None:
            await self._constrain(grammar, context)
        else:
            grammar = await self._constrain_tools(context)
        end = min(len(self.cached) + model.max_response_tokens, model.context_window)
        completer = Completer(grammar) if grammar is not None else None
        # The answer's text is its prefix (if any) and the tokens after ``start``.
        answer = (context[-1].text() if context and context[-1].prefix else "", len(self.cached))
        try:
            while len(self.cached) < end:
                if stop():
                    raise Aborted
                ending = self._ending(completer, answer, int(end) - len(self.cached))
                if ending is not None:
                    # The budget nears its end: the answer's shortest valid ending, then stop.
                    if ending and not self.backend.accept(self.cache, ending):
                        raise operation_error("The grammar rejected the ending it allows.")
                    pieces = "".join(decoder.feed(token) for token in ending)
                    if ending:
                        await self.backend.forward(self.cache, ending)
                    self.cached.extend(ending)
                    for chunk in _chunks(parser, family, pieces, final=False):
                        yield chunk
                    break
                forced = self.backend.forced(self.cache) if grammar and model.jump_forward else ""
                if forced and model.tokenizer.decode(self.cached[-3:]).endswith("\ufffd"):
                    # The answer ends inside a character: the forced text, as a string,
                    # lacks that character's remaining bytes. Sample them (masked) first.
                    forced = ""
                # Jump-forward: the forced text's tokens are a draft the model judges
                # (Backend.speculate), so the answer is the one sampled token by token.
                draft = model.tokenizer.encode(forced) if forced else []
                if draft:
                    draft = draft[: int(end) - len(self.cached)]
                    ids, pending = await self.backend.speculate(self.cache, draft, self.sampling)
                    model.jumped_tokens += common_prefix_length(ids, draft)
                else:
                    ids, pending = [await self.backend.next_token(self.cache, self.sampling)], True
                finished = pending and (ids[-1] < 0 or ids[-1] in model.eos_ids)
                if finished:
                    ids = ids[:-1]
                pieces = "".join(decoder.feed(token) for token in ids)
                if pending and not finished:
                    await self.backend.forward(self.cache, ids[-1:])
                self.cached.extend(ids)
                for chunk in _chunks(parser, family, pieces, final=False):
                    yield chunk
                if finished:
                    break
        finally:
            if grammar is not None:
                await self.backend.constrain(self.cache, None)
        for chunk in _chunks(parser, family, decoder.flush(), final=True):
            yield chunk

    def _ending(
        self, completer: Completer | None, answer: tuple[str, int], left: int
    ) -> list[int] | None:
        """The tokens of the answer's shortest valid ending when only that still fits
        in the ``left`` tokens of the budget (None: go on sampling)."""
        tokenizer = self.model.tokenizer
        if completer is None or tokenizer is None:
            return None
        opening = len(tokenizer.encode(completer.opening)) if completer.opening else 1
        if left > ENDING_MARGIN + opening:
            return None
        prefix, start = answer
        skip = self.model.parser_family not in MARKED_BY_SPECIALS
        written = tokenizer.decode(self.cached[start:], skip_special_tokens=skip)
        if written.endswith("\ufffd"):
            return None  # inside a character: its other bytes come first
        text = completer.completion(prefix + written)
        if text is None:
            return None
        ids = tokenizer.encode(text) if text else []
        # Room to spare: the next step may open something that needs closing (a whole
        # call where the answer may end now). An ending longer than the room left (a
        # context window nearly full) cannot be written: the answer then stops at the
        # window, as an unconstrained one does.
        spare = 1 + (opening if not text else 1)
        return ids if len(ids) + spare >= left and len(ids) <= left else None

    async def _constrain_tools(self, context: Sequence[Message]) -> Grammar | None:
        """Hold the answer to the tool-call grammar, if any; one the grammar library
        cannot compile falls back to the loose one, then to none (calls are still parsed):
        a declaration the options algorithm accepted never makes the session unusable."""
        for grammar in (self.tool_grammar, self.loose_tool_grammar):
            if grammar is None:
                return None
            try:
                await self.backend.constrain(self.cache, grammar)
            except GrammarError:
                continue
            await self._accept_prefix(context)
            return grammar
        return None

    async def _constrain(self, grammar: Grammar, context: Sequence[Message]) -> None:
        """Hold the answer to ``grammar``, past the assistant prefix (if any)."""
        assert self.model.tokenizer is not None
        try:
            await self.backend.constrain(self.cache, grammar)
        except GrammarError as error:
            raise PromptAPIError(
                "NotSupportedError", f"The response constraint cannot be enforced: {error}"
            ) from None
        await self._accept_prefix(context)

    async def _accept_prefix(self, context: Sequence[Message]) -> None:
        """Feed an assistant prefix through the grammar now held (NotSupportedError, and
        nothing held, when it rejects it)."""
        assert self.model.tokenizer is not None
        if context and context[-1].prefix:
            prefix = self.model.tokenizer.encode(context[-1].text())
            if not self.backend.accept(self.cache, prefix):
                await self.backend.constrain(self.cache, None)
                raise PromptAPIError(
                    "NotSupportedError", "The response constraint cannot start with the prefix."
                )

    async def clone(self, context: Sequence[Message]) -> CausalLMState:
        cache = await self.backend.clone(self.cache)
        return CausalLMState(self.model, self.tools, cache, list(self.cached), self.sampling)

    def release(self) -> None:
        self.backend.release(self.cache)


def new_call_id(family: str | None) -> str:
    """A fresh call id; Mistral's templates accept only 9 letters and digits."""
    if family == "mistral":
        alphabet = string.ascii_letters + string.digits
        return "".join(secrets.choice(alphabet) for _ in range(9))
    return f"call_{secrets.token_hex(12)}"


def _chunks(
    parser: ToolCallParser | None, family: str | None, piece: str, final: bool
) -> list[Chunk]:
    """Decoded text as chunks, with tool calls split out when tools exist."""
    if parser is None:
        return [piece] if piece else []
    try:
        segments = [*parser.feed(piece), *(parser.finish() if final else [])]
    except Exception as error:
        raise operation_error(f"The {family} tool-call parser failed: {error}") from None
    chunks: list[Chunk] = []
    for segment in segments:
        if isinstance(segment, ParsedCall):
            chunks.append(ToolCall(new_call_id(family), segment.name, segment.arguments))
        elif segment:
            chunks.append(segment)
    return chunks
