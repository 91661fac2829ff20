"""The one exception type of the engine, and the one place errors become wire data.

Like h11's ``LocalProtocolError``: every rule raises ``PromptAPIError`` with the
name of the error the spec asks for (``TypeError``, ``RangeError`` or a
DOMException name) and its fields. ``error_to_wire`` is the only translation of
an exception into the protocol's ``ErrorWire``; the JS shim rebuilds the error in
the page's realm from it. Anything else that escapes is a bug: it crosses as an
``OperationError`` that says so, its traceback printed to the console.
"""

from __future__ import annotations

import sys
import traceback
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .protocol import ErrorWire

#: An exception thrown by page code while the shim performed an ECMAScript
#: operation the spec names with "?" (a getter, a Proxy trap, ``toJSON``). The
#: shim kept the exception object; ``index`` says which one to rethrow as-is.
JS_EXCEPTION = "JSException"


class PromptAPIError(Exception):
    """An error the spec names, e.g. ``PromptAPIError("NotSupportedError", "...")``."""

    def __init__(self, name: str, message: str = "", **fields: Any) -> None:
        super().__init__(f"{name}: {message}")
        self.name = name
        self.message = message
        self.fields = fields


class Aborted(PromptAPIError):
    """The caller's stop callback said stop (the page rejects with its own reason)."""

    def __init__(self) -> None:
        super().__init__("AbortError", "The operation was aborted.")


def type_error(message: str) -> PromptAPIError:
    return PromptAPIError("TypeError", message)


def operation_error(message: str) -> PromptAPIError:
    return PromptAPIError("OperationError", message)


def quota_exceeded(requested: float, quota: float) -> PromptAPIError:
    return PromptAPIError(
        "QuotaExceededError",
        f"The input is too large: {requested} exceeds the context window of {quota}.",
        requested=requested,
        quota=quota,
    )


def js_exception(index: int) -> PromptAPIError:
    """Rethrow the page exception the shim recorded at ``index``."""
    return PromptAPIError(JS_EXCEPTION, "", index=index)


def error_to_wire(error: BaseException) -> ErrorWire:
    """Any exception as the error the page gets."""
    if isinstance(error, PromptAPIError):
        return {"name": error.name, "message": error.message, **error.fields}  # type: ignore[typeddict-item]
    traceback.print_exception(error, file=sys.stderr)
    return {
        "name": "OperationError",
        "message": "The Prompt API runtime failed with an internal error "
        f"({type(error).__name__}); the console has the details.",
    }
