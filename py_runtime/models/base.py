"""The seam between the session logic and a model.

The session owns the conversation: its initial prompts and kept history are the
one source a model renders from, passed in whole at every step. A model keeps
only what it computed from them (a KV cache, or what the echo model has still
to echo), cheap to checkpoint and roll back.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, Protocol

from ..engine.grammar import Grammar
from ..engine.messages import Message, ToolCall
from ..engine.options import Capabilities, LanguageModelOptions, ToolDeclaration
from ..engine.protocol import SpeedResult
from ..engine.vocabulary import Availability, SamplingModes

#: What a text chat model with tool use takes and gives (causal LMs, a server's model).
CHAT_CAPABILITIES = Capabilities(
    languages=("en",),
    input_types=("text", "tool-call", "tool-response"),
    output_types=("text", "tool-call"),
)

#: A generated chunk: text, or a tool call.
Chunk = str | ToolCall
StopCallback = Callable[[], bool]
ProgressCallback = Callable[[float], None]


class ModelState(Protocol):
    """One session's state inside the model."""

    def checkpoint(self) -> Any: ...

    def rollback(self, checkpoint: Any) -> None: ...

    async def prefill(
        self, context: Sequence[Message], added: Sequence[Message], stop: StopCallback
    ) -> None:
        """Take in ``context``, the session's whole conversation, whose last messages
        (``added``) are new."""

    def generate(
        self, context: Sequence[Message], stop: StopCallback, grammar: Grammar | None = None
    ) -> AsyncIterator[Chunk]:
        """Answer after ``context`` (already prefilled), chunk by chunk, held to
        ``grammar`` when the model enforces constraints."""
        ...

    async def clone(self, context: Sequence[Message]) -> ModelState:
        """An independent copy, for a session holding the same ``context``."""
        ...

    def release(self) -> None: ...


class ModelAdapter(Protocol):
    capabilities: Capabilities
    #: Whether a response's tool calls stay in the history (Chromium's echo model
    #: keeps its text only; a real model must see its own calls again).
    keeps_tool_calls: bool
    #: Whether answers are held to response constraints and tool schemas (the echo
    #: model, like Chromium's, ignores them).
    enforces_constraints: bool

    @property
    def context_window(self) -> float: ...

    @property
    def sampling_modes(self) -> SamplingModes:
        """Each ``samplingMode``'s sampling for this model (``SAMPLING_MODES``, or the
        calibration its folder advises)."""
        ...

    @property
    def reply_room(self) -> int:
        """Tokens an answer needs beyond the history (its turn's opening and a first
        token): a prompt's prefill evicts until they fit too."""
        ...

    async def availability(self) -> Availability | None:
        """The "language model non-options availability"."""

    async def load(self, on_progress: ProgressCallback, stop: StopCallback) -> None:
        """Download and initialise the model (idempotent)."""

    async def measure(self, messages: Sequence[Message]) -> int:
        """The usage of an input on its own (measureContextUsage)."""
        ...

    async def measure_context(
        self, messages: Sequence[Message], tools: Sequence[ToolDeclaration]
    ) -> int:
        """The usage of a whole conversation with these tools (contextUsage)."""
        ...

    async def new_state(self, options: LanguageModelOptions, stop: StopCallback) -> ModelState:
        """A state holding the initial prompts and tools, sampling as the options say."""
        ...


class Benchmarkable(Protocol):
    """A model that can measure its own speed (``promptAPIRuntime.benchmark()``)."""

    async def benchmark(self, prompt_tokens: int, decode_tokens: int) -> SpeedResult: ...
