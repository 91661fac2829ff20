"""JSON numbers within numeric schema keywords: the tree matches only texts that validate
(as Python parses them and as doubles, like Ajv), and every valid short plain text."""

import json
import math
import random
import re
from decimal import Decimal, localcontext

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from py_runtime.engine.errors import PromptAPIError
from py_runtime.engine.numbers import number_node
from py_runtime.engine.regular import Alt, Chars, Node, Repeat, Seq

BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
JSON_NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")


def render(node: Node) -> str:
    """``node`` as a Python regular expression."""
    if isinstance(node, Chars):
        return (
            "[" + "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in node.ranges) + "]"
        )
    if isinstance(node, Seq):
        return "".join(f"(?:{render(item)})" for item in node.items)
    if isinstance(node, Alt):
        return (
            "(?:" + "|".join(render(option) for option in node.options) + ")"
            if node.options
            else "(?!)"
        )
    assert isinstance(node, Repeat)
    return f"(?:{render(node.node)}){{{node.low},{'' if node.high is None else node.high}}}"


def size(node: Node) -> int:
    if isinstance(node, Seq):
        return 1 + sum(map(size, node.items))
    if isinstance(node, Alt):
        return 1 + sum(map(size, node.options))
    return 1 + (size(node.node) if isinstance(node, Repeat) else 0)


def regex(schema) -> re.Pattern[str]:
    return re.compile(render(number_node(schema)))


def valid(schema, text: str) -> bool:
    """Whether ``text`` is a finite JSON number that validates, parsed by Python and as a double."""
    value = json.loads(text)
    if isinstance(value, float) and not math.isfinite(value):
        return False
    if schema["type"] == "integer" and not isinstance(value, int):
        return False
    validator = jsonschema.Draft202012Validator(schema)
    return validator.is_valid(value) and validator.is_valid(float(value))


def exact(value) -> Decimal:
    return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)


def digits(text: str) -> int:
    """How many digits the module counts in a plain text (an integer part 0 not)."""
    whole, _, part = text.lstrip("-").partition(".")
    return len(whole.lstrip("0")) + len(part)


def plain(value: Decimal) -> str:
    return format(value.normalize(), "f") if value else "0"


# -- strategies --------------------------------------------------------------------

SPECIAL = [0, 0.0, -0.0, 0.1, 0.2, 0.3, 0.1 + 0.2, 1.5, 2.25, -1.5, 5, 100, 1e-7, 1e-16]
SPECIAL += [1e-20, 5e-324, 1e15, 1e16, 10**15 - 1, 10**15, 10**20 + 1, 1e300, -1e300, 0.5]
SPECIAL += [999999999999999.9, 99999999999999.99, 123456789.123456789, -0.000123]
VALUES = st.one_of(
    st.sampled_from(SPECIAL),
    st.integers(-1000, 1000),
    st.integers(-(10**7), 10**7),
    st.integers(-(10**18), 10**18),
    st.builds(lambda m, e: float(f"{m}e{e}"), st.integers(-(10**7), 10**7), st.integers(-9, 3)),
    st.floats(min_value=-1e17, max_value=1e17, allow_nan=False),
)
STEPS = st.sampled_from([1, 2, 3, 4, 5, 7, 8, 10, 25, 40, 125, 1000, 5.0, 16, 997, 10**16])


@st.composite
def schemas(draw):
    schema = {"type": draw(st.sampled_from(["integer", "number"]))}
    keys = draw(st.lists(st.sampled_from(BOUNDS), unique=True, max_size=4))
    values = [draw(VALUES) for _ in keys]
    if draw(st.booleans()):
        # Lower bounds below upper ones.
        values.sort(key=exact)
        keys.sort(key=lambda key: "exclusiveMaximum" in key or "maximum" in key)
    schema.update(zip(keys, values, strict=True))
    for inclusive, exclusive in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
        if inclusive in schema and draw(st.integers(0, 4)) == 0:
            schema[exclusive] = schema[inclusive]  # a tie: the exclusive bound wins
    if keys and draw(st.booleans()):
        # A narrow range: an upper bound a little above a lower one.
        low = exact(schema.get("minimum", schema.get("exclusiveMinimum", 0)))
        with localcontext() as context:
            context.prec = 60
            high = low + Decimal(draw(st.integers(0, 300))).scaleb(-draw(st.integers(0, 4)))
        schema[draw(st.sampled_from(["maximum", "exclusiveMaximum"]))] = draw(
            st.sampled_from([float(high), int(high)] if high == int(high) else [float(high)])
        )
    if draw(st.integers(0, 4)) == 0:
        schema["multipleOf"] = draw(STEPS)
    return schema


def node_or_none(schema):
    """The schema's regex; None where it is NotSupportedError for ``multipleOf``."""
    try:
        return regex(schema)
    except PromptAPIError as error:
        assert error.name == "NotSupportedError"
        if "admit no" in error.message:
            return "empty"
        assert "multipleOf" in error.message
        return None


def near_bounds(rng: random.Random, schema) -> str:
    """A text at or around a bound: ± a small decimal, trailing zeros, 9s, cut, negated."""
    values = [schema[key] for key in BOUNDS if key in schema] or [0]
    with localcontext() as context:
        context.prec = 400
        value = exact(rng.choice(values))
        value += Decimal(rng.randint(-20, 20)).scaleb(-rng.randint(0, 20))
        if "multipleOf" in schema and rng.random() < 0.5:
            step = Decimal(schema["multipleOf"])
            value = (value / step).to_integral_value() * step + rng.choice([0, 0, 1, -1])
    text = format(value, "f")
    shape = rng.choice(["plain", "zeros", "nines", "cut", "negated"])
    if shape == "zeros":
        text += ("" if "." in text else ".") + "0" * rng.randint(1, 6)
    elif shape == "nines":
        text = text.partition(".")[0] + "." + "9" * rng.randint(1, 18)
    elif shape == "cut":
        text = text[: rng.randint(1, len(text))]
    elif shape == "negated":
        text = text[1:] if text.startswith("-") else "-" + text
    return text


def random_text(rng: random.Random) -> str:
    """A JSON-number-like text, now and then with a ``+``, leading zeros or a bare ``.``."""

    def run() -> str:
        return "".join(rng.choices("0123456789", k=rng.randint(1, 18)))

    whole = str(rng.randint(0, 10 ** rng.randint(1, 18))) if rng.random() < 0.7 else run()
    part = rng.choice(["", "", ".", "." + run()])
    exponent = rng.choice(
        ["", "", f"{rng.choice('eE')}{rng.choice(['', '+', '-'])}{rng.randint(0, 400)}"]
    )
    return rng.choice(["", "", "-", "+"]) + whole + part + exponent


def short_value(rng: random.Random, schema) -> str:
    """A plain text of at most 12 significant digits (within the module's 15-digit count),
    near a bound or anywhere; an integer (up to 15 digits) for integer texts."""
    if rng.random() < 0.5:
        values = [schema[key] for key in BOUNDS if key in schema] or [0]
        with localcontext() as context:
            context.prec = 400
            value = exact(rng.choice(values))
            value += Decimal(rng.randint(-99, 99)).scaleb(-rng.randint(0, 14))
            context.prec = rng.randint(1, 12)
            value = +value
    else:
        value = Decimal(rng.randint(-(10**12) + 1, 10**12 - 1)).scaleb(-rng.randint(0, 12))
    if schema["type"] == "integer" or "multipleOf" in schema:
        if "multipleOf" in schema and rng.random() < 0.5:
            value = Decimal(rng.randint(-(10**6), 10**6) * int(schema["multipleOf"]))
        value = value.to_integral_value().scaleb(rng.randint(0, 3))
    text = plain(value)
    return text if digits(text) <= 15 else "0"


# -- properties --------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_every_matched_text_validates(data):
    schema = data.draw(schemas())
    pattern = node_or_none(schema)
    if not isinstance(pattern, re.Pattern):
        return
    rng = random.Random(data.draw(st.integers(0, 2**32)))
    for _ in range(50):
        text = near_bounds(rng, schema) if rng.random() < 0.6 else random_text(rng)
        if pattern.fullmatch(text):
            assert JSON_NUMBER.fullmatch(text), (schema, text)
            assert valid(schema, text), (schema, text)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_every_valid_short_text_matches(data):
    schema = data.draw(schemas())
    pattern = node_or_none(schema)
    if pattern is None:
        return
    rng = random.Random(data.draw(st.integers(0, 2**32)))
    for _ in range(50):
        text = short_value(rng, schema)
        if valid(schema, text):
            assert pattern != "empty", (schema, text)
            assert pattern.fullmatch(text), (schema, text)


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(["", "-"]),
    st.one_of(st.just(0), st.integers(1, 10**6)),
    st.one_of(st.just(""), st.text("0123456789", min_size=1, max_size=8).map(".".__add__)),
    st.sampled_from(["e", "E"]),
    st.sampled_from(["", "+", "-"]),
    st.integers(0, 99),
)
def test_unbounded_numbers_take_exponents(sign, whole, part, mark, exponent_sign, exponent):
    text = f"{sign}{whole}{part}{mark}{exponent_sign}{exponent}"
    assert regex({"type": "number"}).fullmatch(text)


@settings(max_examples=100, deadline=None)
@given(schemas())
def test_trees_stay_compact(schema):
    if "multipleOf" not in schema and node_or_none(schema) not in (None, "empty"):
        assert size(number_node(schema)) < 2500


# -- cases -------------------------------------------------------------------------


def check(schema, accepted, rejected):
    pattern = regex(schema)
    assert [text for text in accepted if not pattern.fullmatch(text)] == []
    assert [text for text in rejected if pattern.fullmatch(text)] == []


def test_a_rating():
    check(
        {"type": "number", "minimum": 0, "maximum": 5},
        ["0", "3", "4.5", "5", "5.0", "5.000", "0.25", "4.99999999999999"],
        ["5.01", "-0.5", "6", "05", "5.", ".5", "+3", "4.5e0", "4.999999999999999"],
    )


def test_an_integer_range():
    check(
        {"type": "integer", "minimum": 1, "maximum": 10},
        [str(n) for n in range(1, 11)],
        ["0", "11", "01", "1.0", "-1", "1e1", "100"],
    )


def test_integers_take_up_to_15_digits():
    check(
        {"type": "integer"},
        ["0", "-7", "999999999999999", "-999999999999999"],
        ["1234567890123456", "-1234567890123456", "00", "+1", "1.0", "1e3"],
    )


def test_positive_numbers():
    check(
        {"type": "number", "exclusiveMinimum": 0},
        ["0.5", "1", "0.000000000000001", "123456789012345", "0.10"],
        ["0", "0.0", "-0", "-0.0", "-1", "0.000000000000000", "0.0000000000000001"],
    )


def test_a_range_across_zero():
    check(
        {"type": "number", "minimum": -1.5, "maximum": 2.25},
        ["-1.5", "-1.50", "-1", "-0.75", "0", "-0.0", "1", "2.25", "2.2500", "2.2", "2.249"],
        ["-1.51", "-2", "2.251", "2.3", "3", "-1.5000000000001"],
    )


def test_multiples_of_5():
    check(
        {"type": "integer", "multipleOf": 5, "minimum": 0, "maximum": 100},
        [str(n) for n in range(0, 101, 5)],
        ["-5", "1", "101", "105", "050", "-0", "5.0"],
    )


def test_multiples_by_their_last_digits():
    schema = {"type": "integer", "multipleOf": 8, "minimum": -12345, "exclusiveMaximum": 10**9}
    check(
        schema,
        ["0", "8", "-8", "-12344", "999999992", "123456"],
        ["4", "-12352", "100000004", "1000000000"],
    )


def test_a_multiple_of_7_among_too_many_is_not_supported():
    with pytest.raises(PromptAPIError, match="multipleOf 7"):
        number_node({"type": "integer", "multipleOf": 7})
    check({"type": "integer", "multipleOf": 7, "minimum": 0, "maximum": 7000}, ["7000"], ["7007"])


@pytest.mark.parametrize("step", [0.5, 0.01, 0, -5, True, "5"])
def test_other_multiples_are_not_supported(step):
    with pytest.raises(PromptAPIError, match="multipleOf"):
        number_node({"type": "number", "multipleOf": step})


def test_bounds_compare_with_the_double_s_shortest_decimal():
    check(
        {"type": "number", "exclusiveMaximum": 0.1},
        ["0.09", "0.099999999999999", "-5"],
        ["0.1", "0.10"],
    )
    check({"type": "number", "minimum": 0.1 + 0.2}, ["0.31", "1"], ["0.3", "0.300000000000000"])
    check({"type": "integer", "minimum": 1.5, "maximum": 3.0}, ["2", "3"], ["1", "4"])
    check(
        {"type": "number", "minimum": 0.1, "maximum": 0.2}, ["0.1", "0.15", "0.2"], ["0.21", "0.09"]
    )
    check({"type": "number", "minimum": 1, "exclusiveMinimum": 1}, ["1.1"], ["1", "1.0"])
    check({"type": "integer", "maximum": 2, "exclusiveMaximum": 2.0}, ["1"], ["2"])
    check({"type": "number", "minimum": 2.5, "maximum": 2.5}, ["2.5", "2.50"], ["2.51", "2", "3"])
    check({"type": "number", "minimum": -1e20}, ["-999999999999999"], ["-1e5"])


@pytest.mark.parametrize(
    ("schema", "keyword"),
    [
        ({"type": "number", "minimum": 5, "maximum": 3}, "minimum 5, maximum 3"),
        ({"type": "number", "minimum": 1, "exclusiveMaximum": 1}, "exclusiveMaximum 1"),
        ({"type": "integer", "minimum": 1.2, "maximum": 1.8}, "minimum 1.2"),
        ({"type": "number", "exclusiveMinimum": 0, "maximum": 1e-16}, "exclusiveMinimum 0"),
        ({"type": "integer", "minimum": 1e15}, "minimum 1000000000000000.0"),
        ({"type": "number", "maximum": -1e300}, "maximum -1e+300"),
        ({"type": "integer", "multipleOf": 10, "minimum": 1, "maximum": 9}, "maximum 9"),
        ({"type": "number", "minimum": True}, "minimum True"),
        ({"type": "number", "maximum": float("inf")}, "maximum inf"),
        ({"type": "number", "exclusiveMinimum": float("nan")}, "exclusiveMinimum nan"),
        ({"type": "number", "maximum": "5"}, "maximum '5'"),
        ({"type": "string"}, "type 'string'"),
    ],
)
def test_what_cannot_be_held_is_not_supported(schema, keyword):
    with pytest.raises(PromptAPIError) as raised:
        number_node(schema)
    assert raised.value.name == "NotSupportedError"
    assert raised.value.message.startswith("Unsupported response constraint: ")
    assert keyword in raised.value.message
