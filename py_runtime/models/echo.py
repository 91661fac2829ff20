"""The echo model: behaves as Chromium's test-only model, for conformance runs."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..engine.grammar import Grammar
from ..engine.messages import Content, Media, Message, ToolCall
from ..engine.options import Capabilities, LanguageModelOptions, ToolDeclaration
from ..engine.vocabulary import SAMPLING_MODES, Availability, SamplingModes
from .base import Chunk, ProgressCallback, StopCallback

PREFIX = "On-device model is not available in Chromium, this API is just echoing back the input:\n"
SIMPLE_TRIGGER = "<GenerateSimpleToolCalls>"
MULTIPLE_TRIGGER = "<GenerateMultipleToolCalls>"
CONTEXT_WINDOW = 1000
NON_TEXT_USAGE = 100


def utf8_length(text: str) -> int:
    """UTF-8 bytes; a lone surrogate (possible in a JS string) counts as U+FFFD would."""
    return len(text.encode("utf-8", "surrogatepass"))


def echo_text(content: Content) -> str:
    """How one content part is echoed."""
    value = content.value
    if isinstance(value, str):
        return value
    if isinstance(value, Media):
        return f"<{content.type}>"
    return f"<{content.type}>{value.to_json()}</{content.type}>"


def argument_hint(description: str) -> dict[str, Any]:
    """The JSON object after ``Args: `` in a description, up to the first ``}``."""
    _, found, rest = description.partition("Args: ")
    if not found or not rest.startswith("{"):
        return {}
    try:
        value = json.loads(rest[: rest.find("}") + 1])
    except (ValueError, RecursionError):  # not JSON, or nested too deeply for the parser
        return {}
    return value if isinstance(value, dict) else {}


def tool_call_batches(tools: Sequence[ToolDeclaration], trigger: str) -> list[list[int]]:
    """Indices of the tools to call, batch by batch."""
    indices = list(range(len(tools)))
    if trigger == SIMPLE_TRIGGER:
        return [indices]
    half = len(tools) // 2
    return [batch for batch in (indices[:half], indices[half:]) if batch]


@dataclass
class EchoState:
    """Text not yet echoed, one segment per prefill; the last one is the current input.

    ``lead`` is the length of the current input's leading tool responses: unlike
    Chromium's, our echo model looks for a trigger after them, so that text after
    a closed loop's results (a post-hook's context) can ask for more calls.
    """

    tools: Sequence[ToolDeclaration]
    pending: list[str] = field(default_factory=list)
    responded: bool = False
    lead: int = 0

    def checkpoint(self) -> tuple[list[str], bool, int]:
        return list(self.pending), self.responded, self.lead

    def rollback(self, checkpoint: tuple[list[str], bool, int]) -> None:
        pending, self.responded, self.lead = checkpoint
        self.pending = list(pending)

    async def prefill(
        self, context: Sequence[Message], added: Sequence[Message], stop: StopCallback
    ) -> None:
        parts = [c for m in added for c in m.content]
        responses = 0
        while responses < len(parts) and parts[responses].type == "tool-response":
            responses += 1
        self.lead = sum(len(echo_text(c)) for c in parts[:responses])
        self.pending.append("".join(echo_text(c) for c in parts))

    async def generate(
        self, context: Sequence[Message], stop: StopCallback, grammar: Grammar | None = None
    ) -> AsyncIterator[Chunk]:
        current = self.pending[-1] if self.pending else ""
        head, rest = current[: self.lead], current[self.lead :]
        trigger = next(
            (t for t in (SIMPLE_TRIGGER, MULTIPLE_TRIGGER) if self.tools and rest.startswith(t)),
            None,
        )
        if trigger and self.pending:
            self.pending[-1] = head + rest[len(trigger) :]
        text = ("" if self.responded else PREFIX) + "".join(self.pending)
        self.pending, self.responded, self.lead = [], True, 0
        if text:
            yield text
        for batch in tool_call_batches(self.tools, trigger) if trigger else []:
            for index in batch:
                tool = self.tools[index]
                yield ToolCall(f"call_{index + 1}", tool.name, argument_hint(tool.description))

    async def clone(self, context: Sequence[Message]) -> EchoState:
        """The clone's first reply echoes the prefix and the whole conversation."""
        clone = EchoState(self.tools)
        await clone.prefill(context, context, lambda: False)
        return clone

    def release(self) -> None:
        self.pending = []


class EchoModel:
    """Chromium's echo model: usage is UTF-8 bytes, plus 100 per non-text part."""

    keeps_tool_calls = False  # "Tool calls add nothing to usage or history."
    reply_room = 0  # Chromium's echo model evicts for the history alone
    sampling_modes: SamplingModes = SAMPLING_MODES
    enforces_constraints = False
    capabilities = Capabilities(
        languages=("en",),
        input_types=("text", "image", "audio", "tool-call", "tool-response"),
        output_types=("text", "tool-call"),
    )

    def __init__(self) -> None:
        self.downloaded = False

    @property
    def context_window(self) -> float:
        return CONTEXT_WINDOW

    async def availability(self) -> Availability | None:
        return "available" if self.downloaded else "downloadable"

    async def load(self, on_progress: ProgressCallback, stop: StopCallback) -> None:
        self.downloaded = True

    async def measure(self, messages: Sequence[Message]) -> int:
        return sum(
            utf8_length(c.value) if isinstance(c.value, str) else NON_TEXT_USAGE
            for m in messages
            for c in m.content
        )

    async def measure_context(
        self, messages: Sequence[Message], tools: Sequence[ToolDeclaration]
    ) -> int:
        """Tool declarations count nothing in Chromium's echo model."""
        return await self.measure(messages)

    async def new_state(self, options: LanguageModelOptions, stop: StopCallback) -> EchoState:
        state = EchoState(options.tools)
        if options.initial_prompts:
            await state.prefill(options.initial_prompts, options.initial_prompts, stop)
        return state
