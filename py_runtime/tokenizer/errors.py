"""The one error of the tokenizer package."""

from __future__ import annotations

__all__ = ["TokenizerError"]


class TokenizerError(ValueError):
    """A ``tokenizer.json`` that cannot be used: not valid JSON, missing or mistyped
    content, or a component (normalizer, pre-tokenizer, model, decoder) or option that
    is not supported, named in the message."""
