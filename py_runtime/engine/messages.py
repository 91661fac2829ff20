"""The canonical ("longhand") shapes of prompts, as plain frozen data."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .vocabulary import MessageType, Role


@dataclass(frozen=True)
class Media:
    """An image or audio value; the engine keeps only what kind of object it was."""

    kind: str


@dataclass(frozen=True)
class ToolCall:
    """A ``LanguageModelToolCall``: ``arguments`` is a JSON object or ``None``."""

    call_id: str
    name: str
    arguments: dict[str, Any] | None

    def to_json(self) -> str:
        """The call as JSON; absent arguments read as ``{}``."""
        return json.dumps(
            {"callId": self.call_id, "name": self.name, "arguments": self.arguments or {}},
            ensure_ascii=False,
            separators=(",", ":"),
        )


@dataclass(frozen=True)
class ToolResponse:
    """A ``LanguageModelToolSuccess`` (``result`` set) or ``LanguageModelToolError``."""

    call_id: str
    name: str
    result: tuple[Any, ...] | None = None
    error_message: str | None = None

    def to_json(self) -> str:
        """The response as JSON: result values only, their ``type`` dropped."""
        data: dict[str, Any] = {"callId": self.call_id, "name": self.name}
        if self.result is not None:
            data["result"] = list(self.result)
        else:
            data["errorMessage"] = self.error_message
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


ContentValue = str | Media | ToolCall | ToolResponse


@dataclass(frozen=True)
class Content:
    type: MessageType
    value: ContentValue


@dataclass(frozen=True)
class Message:
    role: Role
    content: tuple[Content, ...] = field(default_factory=tuple)
    prefix: bool = False

    def text(self) -> str:
        """The concatenated text parts of the message."""
        return "".join(c.value for c in self.content if isinstance(c.value, str))


def user_text(text: str) -> Message:
    """The longhand of a plain string prompt."""
    return Message("user", (Content("text", text),))
