"""JSON numbers read as ``tokenizers`` reads them (serde_json without float_roundtrip).

serde_json parses ``-7.3094695122294135`` as its digits in a ``u64`` (later digits
dropped once it would overflow) multiplied or divided by a power of ten: up to one
unit in the last place away from the correctly rounded value Python's ``json``
gives. Unigram scores must be read the same way, or near-ties between segmentations
are broken differently.
"""

from __future__ import annotations

import re

__all__ = ["serde_float"]

_U64_MAX = 2**64 - 1
_POW10 = [float(f"1e{k}") for k in range(309)]
_NUMBER = re.compile(r"(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?")


def _significand(integer: str, fraction: str) -> tuple[int, int]:
    """The digits kept in a u64 and the power of ten they are to be scaled by."""
    digits = integer + fraction
    if len(digits) <= 19:  # fits in a u64
        return int(digits), -len(fraction)
    value = 0
    for i, char in enumerate(digits):
        digit = ord(char) - 48
        if value >= _U64_MAX // 10 and (value > _U64_MAX // 10 or digit > _U64_MAX % 10):
            # Further integer digits only raise the exponent; fraction digits are dropped.
            return value, len(integer) - i
        value = value * 10 + digit
    return value, -len(fraction)


def serde_float(text: str) -> float:
    """The ``f64`` serde_json gives for a JSON number (as ``json``'s ``parse_float``)."""
    match = _NUMBER.fullmatch(text)
    if match is None:
        return float(text)
    sign, integer, fraction, exp = match.groups()
    significand, exponent = _significand(integer, fraction or "")
    exponent += int(exp or 0)
    value = float(significand)
    while True:
        if abs(exponent) < len(_POW10):
            if exponent >= 0:
                value *= _POW10[exponent]
                if value == float("inf"):
                    raise ValueError(f"number out of range: {text}")
            else:
                value /= _POW10[-exponent]
            break
        if value == 0.0:
            break
        if exponent >= 0:
            raise ValueError(f"number out of range: {text}")
        value /= 1e308
        exponent += 308
    return -value if sign else value
