"""The OpenAI Chat Completions format, as a model server takes and gives it: the
conversation as its messages, sampling and response constraints as request fields,
an error body's message, and a tool call as its pieces stream in."""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..engine.errors import PromptAPIError, operation_error
from ..engine.grammar import Grammar
from ..engine.messages import Message, ToolCall
from ..engine.options import ToolDeclaration
from ..engine.vocabulary import Sampling
from .causal_lm import merge_prefixes
from .gbnf import regex_to_gbnf
from .hf_messages import messages_to_hf


def error_message(text: str) -> str:
    """The message in an error body (OpenAI's ``{"error": {"message"}}`` or text)."""
    try:
        body = json.loads(text)
    except ValueError:
        return text.strip()[:300]
    error = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(error, dict):
        return str(error.get("message") or error)
    return str(error)[:300]


def to_openai_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Canonical messages as chat-completion messages (the Hugging Face mapping, with
    tool-call arguments as JSON text, as the OpenAI API has them)."""
    out = []
    try:
        hf = messages_to_hf(merge_prefixes(messages))
    except ValueError as error:
        raise PromptAPIError("NotSupportedError", str(error)) from None
    for message in hf:
        if "tool_calls" in message:
            message["tool_calls"] = [
                {
                    "id": call["id"],
                    "type": "function",
                    "function": {
                        "name": call["function"]["name"],
                        "arguments": json.dumps(call["function"]["arguments"], ensure_ascii=False),
                    },
                }
                for call in message["tool_calls"]
            ]
        out.append(message)
    return out


def sampling_fields(sampling: Sampling) -> dict[str, Any]:
    """The request's sampling: top-k 1 is greedy, which every server reads as temperature 0."""
    if sampling.top_k <= 1 or sampling.temperature == 0:
        return {"temperature": 0.0, "top_k": 1}
    return {"temperature": sampling.temperature, "top_k": sampling.top_k}


def constraint_fields(grammar: Grammar, prefix: str) -> dict[str, Any]:
    """How the server holds an answer to ``grammar`` that continues ``prefix``."""
    if grammar.kind == "regex":
        gbnf = regex_to_gbnf(grammar.source, prefix)
        if gbnf is None:
            raise PromptAPIError(
                "NotSupportedError", "The response constraint cannot start with the prefix."
            )
        return {"grammar": gbnf}
    raise PromptAPIError("NotSupportedError", "The server cannot hold this response constraint.")


@dataclass
class ToolCallDelta:
    """A tool call as its pieces stream in."""

    call_id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)

    def finish(self, tools: Sequence[ToolDeclaration]) -> ToolCall:
        text = "".join(self.arguments).strip() or "{}"
        try:
            arguments = json.loads(text)
        except ValueError:
            arguments = None
        if not isinstance(arguments, dict):
            raise operation_error(f"The server's call of {self.name!r} has no JSON object.")
        if self.name not in {tool.name for tool in tools}:
            raise operation_error(f"The server called {self.name!r}, which is not declared.")
        return ToolCall(self.call_id or f"call_{secrets.token_hex(8)}", self.name, arguments)
