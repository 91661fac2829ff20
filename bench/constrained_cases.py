"""The constraints ``bench/constrained.py`` checks answers to: JSON schemas and
JavaScript regular expressions, each with a prompt that asks for what it allows;
those the runtime refuses; the generic prompts; the two sampling modes."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

GREEDY: dict[str, Any] = {"samplingMode": "most-predictable"}
SAMPLED: dict[str, Any] = {"topK": 40, "temperature": 1.0}

NAME = {"type": "string", "minLength": 1, "maxLength": 12}
SMALL = {"type": "integer", "minimum": 0, "maximum": 99}


@dataclass(frozen=True)
class Case:
    """A response constraint, and a prompt that asks for what it allows."""

    name: str
    prompt: str
    schema: dict[str, Any] | None = None
    regex: tuple[str, str] | None = None  # JavaScript source and flags
    #: The one model it is run on (None: both). Noise never closes an unbounded number,
    #: and the runtime holds no bounds on numbers that are not integers.
    only: str | None = None

    def constraint(self) -> dict[str, Any]:
        if self.schema is not None:
            return {"kind": "json-schema", "json": json.dumps(self.schema)}
        assert self.regex is not None
        return {"kind": "regexp", "source": self.regex[0], "flags": self.regex[1]}


def obj(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    """An object with exactly these properties (all required unless told)."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties) if required is None else required,
        "additionalProperties": False,
    }


SCHEMAS = [
    Case("boolean", "Is the sky blue? Answer true or false.", {"type": "boolean"}),
    Case("null", "Reply with nothing at all (JSON null).", {"type": "null"}),
    Case(
        "integer 1..100",
        "Pick a number between 1 and 100.",
        {"type": "integer", "minimum": 1, "maximum": 100},
    ),
    Case(
        "integer exclusive 0<x<10",
        "How many planets have rings? Give a number below 10.",
        {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10},
    ),
    Case(
        "integer -5<x<=5",
        "What is the temperature tonight, in degrees?",
        {"type": "integer", "exclusiveMinimum": -5, "maximum": 5},
    ),
    Case(
        "integer minimum 0 only",
        "How many people live in Paris?",
        {"type": "integer", "minimum": 0},
        only="smollm2",
    ),
    # The runtime holds no bounds on numbers that are not integers (NotSupportedError,
    # engine/json_schema.py integer_bounds): a number is unbounded, or enumerated.
    Case(
        "number (unbounded)",
        "What is the price of a coffee in dollars?",
        {"type": "number"},
        only="smollm2",
    ),
    Case(
        "number enum",
        "What is a quarter, as a number?",
        {"type": "number", "enum": [0.25, 0.5, 1.5, 3.75, -2]},
    ),
    Case(
        "string 3..12",
        "Name a fruit.",
        {"type": "string", "minLength": 3, "maxLength": 12},
    ),
    Case("enum strings", "What color is grass?", {"enum": ["red", "green", "blue", "yellow"]}),
    Case("enum mixed", "Pick one: small, 42, null or true.", {"enum": ["small", 42, None, True]}),
    Case("const", "Say ok.", {"const": {"status": "ok", "code": 200}}),
    Case(
        "type list string|null",
        "What is your nickname, if any?",
        {"type": ["string", "null"], "maxLength": 10},
    ),
    Case(
        "object every type",
        "Describe a pet: its name, age, weight in kg, whether it is vaccinated, and its owner.",
        obj(
            {
                "name": NAME,
                "age": {"type": "integer", "minimum": 0, "maximum": 30},
                "weight": {"type": "number", "enum": [2.5, 4.75, 10, 31.5]},
                "vaccinated": {"type": "boolean"},
                "owner": {"type": "null"},
            }
        ),
    ),
    Case(
        "nested objects",
        "Describe a person with a name, an age and an address (city and zip code).",
        obj(
            {
                "name": NAME,
                "age": {"type": "integer", "minimum": 0, "maximum": 120},
                "address": obj(
                    {
                        "city": NAME,
                        "zip": {"type": "string", "pattern": "^\\d{5}$"},
                        "geo": obj(
                            {
                                "lat": {"type": "integer", "minimum": -90, "maximum": 90},
                                "lon": {"type": "integer", "minimum": -180, "maximum": 180},
                            }
                        ),
                    }
                ),
            }
        ),
    ),
    Case(
        "array items min/maxItems",
        "List two to four animals.",
        {"type": "array", "items": NAME, "minItems": 2, "maxItems": 4},
    ),
    Case(
        "prefixItems",
        "Give a product as [name, quantity, in stock].",
        {
            "type": "array",
            "prefixItems": [
                NAME,
                {"type": "integer", "minimum": 1, "maximum": 9},
                {"type": "boolean"},
            ],
            "items": False,
            "minItems": 3,
        },
    ),
    Case(
        "array of objects",
        "List up to three items on a shopping list, with quantities.",
        {
            "type": "array",
            "items": obj({"item": NAME, "qty": {"type": "integer", "minimum": 1, "maximum": 9}}),
            "minItems": 1,
            "maxItems": 3,
        },
    ),
    Case(
        "pattern",
        "Give a flight code (three capital letters, a dash, three digits) and a gate.",
        obj(
            {
                "code": {"type": "string", "pattern": "^[A-Z]{3}-\\d{3}$"},
                "gate": {"type": "string", "pattern": "^[A-F][0-9]{1,2}$"},
            }
        ),
    ),
    Case(
        "$ref/$defs",
        "Give a line segment as two points.",
        {
            "$defs": {
                "point": obj(
                    {
                        "x": {"type": "integer", "minimum": -10, "maximum": 10},
                        "y": {"type": "integer", "minimum": -10, "maximum": 10},
                    }
                )
            },
            **obj({"start": {"$ref": "#/$defs/point"}, "end": {"$ref": "#/$defs/point"}}),
        },
    ),
    Case(
        "anyOf",
        "How old are you? A number, a word, or null.",
        {"anyOf": [SMALL, {"type": "string", "maxLength": 8}, {"type": "null"}]},
    ),
    Case(
        "oneOf disjoint",
        "Describe a shape: a circle with a radius or a square with a side.",
        {
            "oneOf": [
                obj({"kind": {"const": "circle"}, "radius": SMALL}),
                obj({"kind": {"const": "square"}, "side": SMALL}),
            ]
        },
    ),
    Case(
        "required subset",
        "Describe a user: a name, and optionally a nickname and an age.",
        obj(
            {
                "name": NAME,
                "nickname": {"type": "string", "maxLength": 8},
                "age": {"type": "integer", "minimum": 0, "maximum": 120},
            },
            required=["name"],
        ),
    ),
    Case(
        "format date",
        "When is Christmas 2025?",
        obj({"date": {"type": "string", "format": "date"}}),
    ),
    Case(
        "format time",
        "At what time does the shop open?",
        {"type": "string", "format": "time", "maxLength": 24},
    ),
    Case(
        "format date-time",
        "When did the meeting start (date and time)?",
        obj({"start": {"type": "string", "format": "date-time", "maxLength": 32}}),
    ),
    Case(
        "format email",
        "What is the email address of the support team?",
        obj({"email": {"type": "string", "format": "email", "maxLength": 30}}),
    ),
    Case(
        "format uuid",
        "Give a new order id.",
        obj({"id": {"type": "string", "format": "uuid"}}),
    ),
    Case(
        "format ipv4",
        "What is the IP address of the local router?",
        obj({"ip": {"type": "string", "format": "ipv4"}}),
    ),
]

REGEXES = [
    Case(
        "date",
        "When is New Year's Day 2026? Give the date.",
        regex=(r"(19|20)\d{2}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])", ""),
    ),
    Case("time", "What time is noon?", regex=(r"([01]\d|2[0-3]):[0-5]\d", "")),
    Case(
        "email",
        "What is a support email address?",
        regex=(r"[a-z0-9._]{1,12}@[a-z]{1,10}\.(com|org|net)", ""),
    ),
    Case("enumeration", "What color is the sky?", regex=(r"(red|green|blue)", "")),
    Case("enumeration, i flag", "Is water wet?", regex=(r"^(yes|no|maybe)$", "i")),
    Case("list", "Name some cities.", regex=(r"[A-Z][a-z]{1,8}(, [A-Z][a-z]{1,8}){1,4}", "")),
    Case(
        "phone number",
        "What is a US phone number?",
        regex=(r"\+1 \(\d{3}\) \d{3}-\d{4}", ""),
    ),
    Case("hex color", "What is the hex code of red?", regex=(r"#[0-9a-fA-F]{6}", "")),
    Case("hex color, i flag", "What is the hex code of blue?", regex=(r"^#[0-9a-f]{6}$", "i")),
    Case("decimal", "What is pi to two decimals?", regex=(r"-?\d{1,3}\.\d{2}", "")),
    Case("zip code", "What is a zip code in New York?", regex=(r"\d{5}(-\d{4})?", "")),
    Case(
        "version",
        "What version is the latest release?",
        regex=(r"v?(0|[1-9]\d?)\.(0|[1-9]\d?)\.(0|[1-9]\d?)", ""),
    ),
    Case(
        "full name, \\s and classes",
        "What is the name of a famous scientist?",
        regex=(r"[A-Z][a-z]{1,9}\s(?:[A-Z]\.\s)?[A-Z][a-z]{1,11}", ""),
    ),
]

#: Constraints the runtime refuses (NotSupportedError), each prompted once, greedily.
UNSUPPORTED = [
    Case("number with bounds", "A number.", {"type": "number", "minimum": 0, "maximum": 1}),
    Case(
        "integer range over 1024 values",
        "A number.",
        {"type": "integer", "minimum": 0, "maximum": 100000},
    ),
    Case("multipleOf", "A number.", {"type": "integer", "multipleOf": 3}),
    Case("format uri", "A link.", {"type": "string", "format": "uri"}),
    Case("lookahead in a regexp", "A word.", regex=("(?=a)[a-z]{1,4}", "")),
]

GENERIC_PROMPTS = [
    "Hello!",
    "Tell me about yourself.",
    "What is the weather like in Rome?",
    "Write a poem about the sea.",
    "x",
    "Answer in JSON.",
]
