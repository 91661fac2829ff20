"""The seam between the session logic and a model."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, Protocol

from ..messages import Message, ToolCall
from ..options import Availability, Capabilities, LanguageModelOptions, ToolDeclaration

#: A generated chunk: text, or a tool call.
Chunk = str | ToolCall
StopCallback = Callable[[], bool]
ProgressCallback = Callable[[float], None]


class ModelState(Protocol):
    """One session's state inside the model (its context), cheap to checkpoint."""

    def checkpoint(self) -> Any: ...

    def rollback(self, checkpoint: Any) -> None: ...

    async def prefill(self, messages: Sequence[Message], stop: StopCallback) -> None: ...

    def generate(self, stop: StopCallback) -> AsyncIterator[Chunk]: ...

    def evict(self, messages: Sequence[Message]) -> None:
        """The session dropped these oldest history messages from the context."""

    async def clone(self, context: Sequence[Message]) -> ModelState:
        """An independent copy; ``context`` is the session's whole conversation."""

    def release(self) -> None: ...


class ModelAdapter(Protocol):
    capabilities: Capabilities

    @property
    def context_window(self) -> float: ...

    async def availability(self) -> Availability | None:
        """The "language model non-options availability"."""

    async def load(self, on_progress: ProgressCallback, stop: StopCallback) -> None:
        """Download and initialise the model (idempotent)."""

    def measure(self, messages: Sequence[Message]) -> int: ...

    def measure_initial(self, messages: Sequence[Message], tools: Sequence[ToolDeclaration]) -> int:
        """Create step 7: the usage of the initial prompts and the tools."""

    async def new_state(self, options: LanguageModelOptions, stop: StopCallback) -> ModelState:
        """A state holding the initial prompts and tools, sampling as the options say."""
