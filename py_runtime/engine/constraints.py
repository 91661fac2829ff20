"""Response constraints: the checks, the guidance text, and the grammar.

Prompt step 4's implementation-defined part, as Chromium's prompt builder does it:
a JSON schema is appended to the last user message as text (unless
``omitResponseConstraintInput``); a schema Chromium could not turn into a grammar,
or a prefix the constraint cannot start with, is ``NotSupportedError``. A model that
enforces constraints (``ModelAdapter.enforces_constraints``) gets the constraint as a
``Grammar`` its backend masks the answer with; what that cannot hold is
``NotSupportedError`` too.
"""

from __future__ import annotations

from dataclasses import replace

from . import js_regex
from .errors import PromptAPIError
from .grammar import Grammar
from .json_regular import schema_language
from .json_schema import check_prefix, check_response_schema, enforceable
from .messages import Content, Message
from .protocol import Constraint
from .regular import to_regex
from .wire import page_json

CONSTRAINT_INTRO = (
    '\n\nRemember to respond in JSON that follows this "JSON Schema" specification:\n'
)


def check_response_constraint(messages: list[Message], constraint: Constraint | None) -> None:
    """The constraint must be usable, and must admit the assistant prefix, if any."""
    if constraint is None:
        return
    prefix = messages[-1].text() if messages[-1].prefix else None
    if constraint["kind"] == "regexp":
        source = constraint["source"]
        if prefix is not None and source.startswith("^") and not source[1:].startswith(prefix):
            raise PromptAPIError(
                "NotSupportedError", "The response constraint cannot start with the prefix."
            )
        return
    schema = page_json(constraint["json"], "The response constraint")
    check_response_schema(schema)
    if prefix is not None:
        check_prefix(schema, prefix)


def with_response_constraint(messages: list[Message], constraint: Constraint) -> list[Message]:
    """The schema text goes at the end of the last user message (or a new one)."""
    if constraint["kind"] != "json-schema":
        return messages
    text = Content("text", CONSTRAINT_INTRO + constraint["json"])
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "user":
            message = messages[index]
            return [
                *messages[:index],
                replace(message, content=(*message.content, text)),
                *messages[index + 1 :],
            ]
    return [*messages, Message("user", (text,))]


def response_grammar(constraint: Constraint) -> Grammar:
    """The grammar that holds an answer to ``constraint`` (NotSupportedError for what
    cannot be held)."""
    if constraint["kind"] == "regexp":
        return Grammar("regex", js_regex.translate(constraint["source"], constraint["flags"]))
    schema = enforceable(page_json(constraint["json"], "The response constraint"))
    return Grammar("regex", to_regex(schema_language(schema)), json=True)
