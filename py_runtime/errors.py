"""The one exception type of the engine, translated to a page-realm error by the shim.

Like h11's ``LocalProtocolError``: every rule raises ``PromptAPIError`` with the
name of the error the spec asks for; ``to_wire()`` is the only translation, and
the JS shim rebuilds a ``TypeError``, ``RangeError``, ``DOMException`` or
``QuotaExceededError`` from it in the page's realm.
"""

from __future__ import annotations

from typing import Any

#: Names that are ECMAScript error constructors rather than DOMException names.
JS_ERROR_NAMES = frozenset({"TypeError", "RangeError"})

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

    def to_wire(self) -> dict[str, Any]:
        """The error as plain data for the worker boundary."""
        return {"name": self.name, "message": self.message, **self.fields}


def type_error(message: str) -> PromptAPIError:
    return PromptAPIError("TypeError", message)


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
