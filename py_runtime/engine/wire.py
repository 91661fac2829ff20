"""Reading and writing protocol messages: the one place wire data is checked.

``decode_request`` parses a message and checks it against its class in
``protocol.py``, nested shapes included (field names, required keys, types,
literal values); what does not match is a ``PromptAPIError`` (``OperationError``)
that says which field is wrong, never a ``KeyError`` deep inside the engine.
``encode`` writes a reply. ``decode_reply`` reads one back (for tests and tools).
"""

from __future__ import annotations

import json
import re
import types
from dataclasses import fields, is_dataclass
from functools import cache
from itertools import accumulate
from typing import (
    Any,
    Literal,
    NotRequired,
    Union,
    get_args,
    get_origin,
    get_type_hints,
    is_typeddict,
)

from .errors import PromptAPIError
from .protocol import KINDS, REPLIES, REQUESTS, Reply, Request


class _Mismatch(Exception):
    """A value that is not of the expected type; ``args[0]`` says where and why."""


@cache
def _hints(cls: type) -> dict[str, Any]:
    """Field types, ``NotRequired[...]`` unwrapped."""
    hints = get_type_hints(cls, include_extras=True)
    return {k: get_args(t)[0] if get_origin(t) is NotRequired else t for k, t in hints.items()}


@cache
def _required(cls: type) -> frozenset[str]:
    if not is_typeddict(cls):
        return frozenset(f.name for f in fields(cls))
    # Under postponed annotations __required_keys__ cannot see NotRequired: read the hints.
    hints = get_type_hints(cls, include_extras=True)
    keys = cls.__required_keys__  # type: ignore[attr-defined]
    return frozenset(k for k in keys if get_origin(hints[k]) is not NotRequired)


def _kind_of(option: Any) -> Any:
    """The ``kind`` literal of a TypedDict union member, if it has one."""
    if is_typeddict(option):
        kind = _hints(option).get("kind")
        if get_origin(kind) is Literal:
            return get_args(kind)
    return None


def _record(cls: type, value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _Mismatch(f"{path} is not an object")
    hints = _hints(cls)
    for key in value:
        if key not in hints:
            raise _Mismatch(f"{path} has an unknown member {key!r}")
    for key in _required(cls):
        if key not in value:
            raise _Mismatch(f"{path}.{key} is missing")
    return {key: check(hints[key], item, f"{path}.{key}") for key, item in value.items()}


def _union(tp: Any, value: Any, path: str) -> Any:
    options = get_args(tp)
    if isinstance(value, dict) and "kind" in value:
        # A discriminated union: report the error of the member the kind names.
        for option in options:
            kinds = _kind_of(option)
            if kinds is not None and value["kind"] in kinds:
                return check(option, value, path)
    fitting = [option for option in options if _same_json_type(option, value)]
    if len(fitting) == 1:  # e.g. `str | list[...]` given a list: that branch's error
        return check(fitting[0], value, path)
    errors = []
    for option in fitting or options:
        try:
            return check(option, value, path)
        except _Mismatch as error:
            errors.append(str(error))
    raise _Mismatch(
        errors[0] if len(errors) == 1 else f"{path} matches none of: {'; '.join(errors)}"
    )


def _same_json_type(tp: Any, value: Any) -> bool:
    """Whether ``value`` is the kind of JSON value (array, object, ...) ``tp`` describes."""
    origin = get_origin(tp)
    if origin is list:
        return isinstance(value, list)
    if origin is dict or is_typeddict(tp) or is_dataclass(tp):
        return isinstance(value, dict)
    if isinstance(value, list | dict):
        return False
    return True


def check(tp: Any, value: Any, path: str) -> Any:
    """``value`` if it is of type ``tp`` (a dataclass is built from its fields)."""
    origin = get_origin(tp)
    if tp is Any:
        return value
    if tp is None or tp is types.NoneType:
        if value is None:
            return None
        raise _Mismatch(f"{path} is not null")
    if origin is Literal:
        if any(type(value) is type(option) and value == option for option in get_args(tp)):
            return value
        raise _Mismatch(f"{path} is {value!r}, not one of {list(get_args(tp))}")
    if origin is Union or origin is types.UnionType:
        return _union(tp, value, path)
    if tp is bool or tp is str:
        if isinstance(value, tp):
            return value
        raise _Mismatch(f"{path} is not a {'boolean' if tp is bool else 'string'}")
    if tp is int or tp is float:
        ok = isinstance(value, int) if tp is int else isinstance(value, int | float)
        if ok and not isinstance(value, bool):
            return value
        raise _Mismatch(f"{path} is not {'an integer' if tp is int else 'a number'}")
    if origin is list:
        if not isinstance(value, list):
            raise _Mismatch(f"{path} is not an array")
        (item_type,) = get_args(tp)
        return [check(item_type, item, f"{path}[{i}]") for i, item in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise _Mismatch(f"{path} is not an object")
        return {key: check(get_args(tp)[1], item, f"{path}.{key}") for key, item in value.items()}
    if is_typeddict(tp):
        return _record(tp, value, path)
    if is_dataclass(tp) and isinstance(tp, type):
        return tp(**_record(tp, value, path))
    raise TypeError(f"The protocol has no rule for {tp!r}.")  # a bug in protocol.py


def _decode(text: str, table: dict[str, type]) -> Any:
    if nests_deeper(text, MAX_MESSAGE_DEPTH):
        raise _Mismatch(f"the message nests more than {MAX_MESSAGE_DEPTH} levels deep")
    try:
        message = json.loads(text)
    except (ValueError, RecursionError) as error:
        raise _Mismatch(f"the message is not JSON ({error})") from None
    if not isinstance(message, dict):
        raise _Mismatch("the message is not an object")
    kind = message.pop("kind", None)
    cls = table.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise _Mismatch(f"unknown message kind {kind!r}")
    return check(cls, message, kind)


def malformed(detail: str) -> PromptAPIError:
    return PromptAPIError("OperationError", f"The runtime received a malformed message: {detail}.")


#: How deeply a page's JSON value (a schema, tool-call arguments, a tool result) may
#: nest: Python's parser recurses once per level, and the worker's stack is small.
MAX_JSON_DEPTH = 128
#: How deeply a whole protocol message may nest (its own shapes need under 10).
MAX_MESSAGE_DEPTH = 256
_JSON_STRING = re.compile(r'"[^"]*"')
_JSON_BRACKETS = re.compile(r"[\[\]{}]")


def json_depth(text: str) -> int:
    """How deeply JSON ``text`` nests, counted without parsing (no recursion): escapes
    out, then strings out, then the brackets left are counted."""
    plain = _JSON_STRING.sub("", text.replace("\\\\", "").replace('\\"', ""))
    brackets = _JSON_BRACKETS.findall(plain)
    return max(accumulate(1 if b in "[{" else -1 for b in brackets), default=0)


def nests_deeper(text: str, limit: int) -> bool:
    """Whether JSON ``text`` nests deeper than ``limit`` (fast when it has few brackets)."""
    return text.count("[") + text.count("{") > limit and json_depth(text) > limit


def page_json(text: str, what: str) -> Any:
    """The value of JSON text the shim serialised from a page value (``what`` names it):
    NotSupportedError when it nests deeper than ``MAX_JSON_DEPTH``; text that is not
    JSON (the shim never sends it) is a malformed message."""
    if nests_deeper(text, MAX_JSON_DEPTH):
        raise PromptAPIError(
            "NotSupportedError", f"{what} nests more than {MAX_JSON_DEPTH} levels deep."
        )
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as error:
        raise malformed(f"{what} is not JSON ({error})") from None


def decode_request(text: str) -> Request:
    """The request in ``text``; ``PromptAPIError`` (OperationError) if it is malformed."""
    try:
        request: Request = _decode(text, REQUESTS)
        return request
    except _Mismatch as error:
        raise malformed(str(error)) from None


def decode_reply(text: str) -> Reply:
    """The reply in ``text``; ``ValueError`` if it does not match the protocol."""
    try:
        reply: Reply = _decode(text, REPLIES)
        return reply
    except _Mismatch as error:
        raise ValueError(str(error)) from None


def to_wire(message: Request | Reply) -> dict[str, Any]:
    """A message as a JSON object: its kind, then its fields."""
    data: dict[str, Any] = {"kind": KINDS[type(message)]}
    data.update((f.name, getattr(message, f.name)) for f in fields(message))
    return data


def encode(message: Request | Reply) -> str:
    """The message as JSON text; ASCII only, so any string survives (lone surrogates too)."""
    return json.dumps(to_wire(message))
