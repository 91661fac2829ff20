"""Response constraints as pages write them, each with a prompt a user would write, and
the validators that judge the answers (none of them ours).

``CORPUS`` holds JavaScript RegExps (source and flags) and JSON Schemas of the kinds
pages pass as ``responseConstraint``: bounded numbers (ratings, percentages, prices,
exclusive and negative bounds), enums, dates, times, e-mails, URLs, word and bullet
lists, CSV rows, phone numbers, colours, yes/no, nested objects, arrays of objects,
free integers, numbers and strings, ``minLength``/``maxLength``, ``pattern``,
``format``, ``const``, ``anyOf``, ``$ref``, non-ASCII text and multi-line answers.
Unbounded values are kept on purpose: pages write them, and an answer must still end.

Judging (``judge``):

- a JSON Schema answer is parsed with ``json.loads`` (NaN and Infinity rejected, as
  ``JSON.parse`` does) and validated with the ``jsonschema`` package, Draft 2020-12,
  with its FormatChecker;
- a RegExp answer is tested by JavaScript's own ``RegExp`` in one ``node`` call per
  batch: ``new RegExp(source, flags).test(answer)`` (what a page checks), and the
  whole answer must match (``^(?:source)$``, without ``g y m``: what the runtime
  promises).

``expect_refused`` marks the constraints the runtime may refuse with NotSupportedError
by design; everything else must be answered. Used by ``bench/constraint_properties.py``
and its CI slices (``tests/unit/test_constraint_properties.py``,
``tests/browser/test_constraint_properties.py``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from typing import Any

import jsonschema

#: The exact cases reported broken (runaway or invalid answers, or refusals): every
#: CI slice runs them, greedy and sampled.
KNOWN_CASES = (
    "regexp: bullet list of names",
    "regexp: quoted word list",
    "regexp: e-mail (page-style)",
    "schema: free integer",
    "schema: array of objects, any property",
    "schema: rating 0-5 (number)",
)


@dataclass(frozen=True)
class Constraint:
    """A response constraint and a prompt that asks for what it allows."""

    name: str
    prompt: str
    schema: Any = None  # a JSON Schema (dict or bool)
    regex: tuple[str, str] | None = None  # JavaScript source and flags
    #: The runtime may refuse it (NotSupportedError) by design.
    expect_refused: bool = False

    @property
    def kind(self) -> str:
        return "regexp" if self.regex is not None else "json-schema"

    def wire(self) -> dict[str, Any]:
        """The constraint as the engine's protocol carries it (CPython runner)."""
        if self.regex is not None:
            return {"kind": "regexp", "source": self.regex[0], "flags": self.regex[1]}
        return {"kind": "json-schema", "json": json.dumps(self.schema)}

    def page(self) -> dict[str, Any]:
        """The constraint for the page: a schema object, or a RegExp's source and flags."""
        if self.regex is not None:
            return {"regexp": {"source": self.regex[0], "flags": self.regex[1]}}
        return {"schema": self.schema}


def schema(name: str, prompt: str, value: Any, expect_refused: bool = False) -> Constraint:
    return Constraint(f"schema: {name}", prompt, schema=value, expect_refused=expect_refused)


def regexp(name: str, prompt: str, source: str, flags: str = "") -> Constraint:
    return Constraint(f"regexp: {name}", prompt, regex=(source, flags))


def obj(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    """An object with these properties, all required unless told, and no others."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties) if required is None else required,
        "additionalProperties": False,
    }


STRING = {"type": "string"}
BOOLEAN = {"type": "boolean"}

REGEXPS: list[Constraint] = [
    regexp(
        "bullet list of names",
        'Extract the names as bullet points from "I met John, Jane, and Jessie."',
        r"^(\* .*\n?)+$",
    ),
    regexp(
        "quoted word list",
        "List three fruits, each in double quotes, separated by commas.",
        r'^\s*"[a-zA-Z]+"\s*(?:,\s*"[a-zA-Z]+"\s*)*$',
    ),
    regexp(
        "e-mail (page-style)",
        "What email address should I use to contact Acme's support team?",
        r"^[^\s@]+@[^\s@]+\.[^\s@]+$",
    ),
    regexp(
        "e-mail (strict)",
        "Make up an email address for a new employee named Maria Lopez at example.com.",
        r"^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}$",
    ),
    regexp(
        "date YYYY-MM-DD",
        "When did the Berlin Wall fall? Give the date.",
        r"^\d{4}-\d{2}-\d{2}$",
    ),
    regexp(
        "date MM/DD/YYYY",
        "What date is Independence Day in the US in 2025?",
        r"^(0[1-9]|1[0-2])\/(0[1-9]|[12]\d|3[01])\/\d{4}$",
    ),
    regexp(
        "time 24h",
        "What time does a typical office open in the morning?",
        r"^([01]\d|2[0-3]):[0-5]\d$",
    ),
    regexp(
        "time 12h, i flag",
        "What time is lunch usually served?",
        r"^(1[0-2]|0?[1-9]):[0-5]\d ?(am|pm)$",
        "i",
    ),
    regexp(
        "URL (page-style)",
        "What is the website of the Python programming language?",
        r"^https?:\/\/[\w.-]+(?:\.[\w.-]+)+[\w\-._~:/?#[\]@!$&'()*+,;=]*$",
    ),
    regexp(
        "URL (simple)",
        "Give me the link to Wikipedia's main page.",
        r"^https:\/\/(www\.)?[a-z0-9-]+\.(com|org|net)(\/[a-zA-Z0-9_-]*)*$",
    ),
    regexp("yes/no, i flag", "Is the Earth round?", r"^(yes|no)$", "i"),
    regexp("yes/no, unanchored", "Can penguins fly?", r"yes|no"),
    regexp("hex colour", "What is the hex code for pure red?", r"^#[0-9a-fA-F]{6}$"),
    regexp(
        "hex colour, short or long",
        "Suggest a background colour for a calm website, as a hex code.",
        r"^#([0-9a-f]{3}){1,2}$",
        "i",
    ),
    regexp(
        "US phone number",
        "Make up a phone number for a pizza place in New York.",
        r"^\(\d{3}\) \d{3}-\d{4}$",
    ),
    regexp(
        "international phone number",
        "What is a valid international phone number format for the UK? Give one example.",
        r"^\+\d{1,3}[ -]?\d{3,14}$",
    ),
    regexp(
        "French phone number",
        "Donne-moi un numéro de téléphone français fictif.",
        r"^0[1-9]( \d{2}){4}$",
    ),
    regexp("free integer", "How many legs does a spider have?", r"^-?\d+$"),
    regexp("free decimal", "What is the value of pi?", r"^-?\d+(\.\d+)?$"),
    regexp("rating 1-5", "Rate the movie Titanic from 1 to 5.", r"^[1-5]$"),
    regexp("rating x/5 with halves", "How would you rate pizza, out of 5?", r"^[0-5](\.5)?\/5$"),
    regexp("percentage", "What percentage of the Earth is covered by water?", r"^(100|[1-9]?\d)%$"),
    regexp(
        "price in dollars", "How much does a cup of coffee cost in New York?", r"^\$\d+\.\d{2}$"
    ),
    regexp(
        "price in euros (non-ASCII)",
        "Combien coûte une baguette à Paris ?",
        r"^\d{1,3},\d{2} €$",
    ),
    regexp("comma-separated words", "Name some colors of the rainbow.", r"^[a-z]+(, [a-z]+)*$"),
    regexp("one word", "What is the opposite of hot? One word.", r"^[A-Za-z]+$"),
    regexp(
        "CSV row",
        "Give one row of CSV for a person: name, age and city.",
        r"^[^,\n]+,\d{1,3},[^,\n]+$",
    ),
    regexp(
        "CSV with header (multi-line)",
        "Write a CSV with a header line name,age and three people.",
        r"^name,age\n([A-Za-z]+,\d{1,3}\n?){1,5}$",
    ),
    regexp(
        "numbered list",
        "Give me three tips for better sleep as a numbered list.",
        r"^(\d+\. .+\n?)+$",
    ),
    regexp("dash list, 2-5 items", "What should I pack for a beach day?", r"^(- [^\n]+\n?){2,5}$"),
    regexp(
        "three lines (haiku)",
        "Write a haiku about autumn.",
        r"^[^\n]+\n[^\n]+\n[^\n]+$",
    ),
    regexp("US zip code", "What is the zip code of the White House?", r"^\d{5}(-\d{4})?$"),
    regexp(
        "UK postcode",
        "What is the postcode of 10 Downing Street?",
        r"^[A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2}$",
    ),
    regexp(
        "IPv4 address",
        "What is the IP address of Google's public DNS server?",
        r"^((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$",
    ),
    regexp(
        "semantic version", "What is the latest version of Node.js you know of?", r"^\d+\.\d+\.\d+$"
    ),
    regexp(
        "sentiment label",
        'What is the sentiment of this review: "The food was cold and the waiter was rude."',
        r"^(positive|negative|neutral)$",
    ),
    regexp(
        "priority, i flag", "How urgent is fixing a typo on a website?", r"^(low|medium|high)$", "i"
    ),
    regexp(
        "full name with accents",
        'Who wrote "Les Misérables"? Give the first and last name.',
        r"^[A-ZÀ-Ý][a-zà-ÿ]+ [A-ZÀ-Ý][a-zà-ÿ]+$",
    ),
    regexp(
        "French sentence ([À-ÿ])",
        "Translate into French: I am very happy today.",
        r"^[A-Za-zÀ-ÿ' ,]+[.!]$",
    ),
    regexp(
        "two words, \\S and \\s (non-ASCII)",
        "Name a German city with an umlaut and its country, as two words.",
        r"^\S+\s\S+$",
    ),
    regexp("any short text (. and non-ASCII)", "Say hello in Japanese.", r"^.{1,40}$"),
    regexp("one sentence", "Describe the ocean in one sentence.", r"^[A-Z][^.!?\n]*[.!?]$"),
    regexp(
        "hashtags", "Suggest hashtags for a photo of a sunset at the beach.", r"^(#[a-z]+ ?){1,5}$"
    ),
    regexp(
        "ISO date-time",
        "When did Apollo 11 land on the Moon? Give the date and time in UTC.",
        r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?Z$",
    ),
    regexp("duration", "How long does it take to bake a loaf of bread?", r"^\d+h( \d{1,2}m)?$"),
    regexp(
        "username", "Suggest a username for a cat lover on social media.", r"^@[a-z0-9_]{3,15}$"
    ),
    regexp("order number", "Make up an order number for my purchase.", r"^ORD-\d{6}$"),
    regexp(
        "temperature in °C (non-ASCII)",
        "What is the boiling point of water?",
        r"^-?\d{1,3}(\.\d)?°C$",
    ),
    regexp(
        "coordinates",
        "What are the latitude and longitude of Paris?",
        r"^-?\d{1,2}\.\d{1,6}, -?\d{1,3}\.\d{1,6}$",
    ),
    regexp(
        "multiple choice letter",
        "Which planet is largest? A) Mars B) Jupiter C) Venus D) Earth",
        r"^Answer: [A-D]$",
    ),
    regexp(
        "key: value lines (multi-line)",
        "Describe a dog with its name, breed and age, one per line.",
        r"^(name|breed|age): [^\n]+\n(name|breed|age): [^\n]+\n(name|breed|age): [^\n]+$",
        "i",
    ),
    regexp(
        "summary, s flag (multi-line)",
        "Summarize the story of Cinderella.",
        r"^Summary: .+$",
        "s",
    ),
    regexp(
        "JSON-looking answer",
        "Is Paris the capital of France? Answer in JSON.",
        r'^\{"answer": "(yes|no)"\}$',
    ),
]

PERSON = obj(
    {
        "name": {"type": "string", "maxLength": 40},
        "age": {"type": "integer", "minimum": 0, "maximum": 120},
    }
)

SCHEMAS: list[Constraint] = [
    schema(
        "rating 0-5 (number)",
        "How would you rate the movie Inception?",
        {"type": "number", "minimum": 0, "maximum": 5},
    ),
    schema(
        "integer 1-10",
        "On a scale of 1 to 10, how spicy is wasabi?",
        {"type": "integer", "minimum": 1, "maximum": 10},
    ),
    schema(
        "rating object (integer 1-5, reason)",
        "Rate this review: 'Great battery life, terrible camera.'",
        obj(
            {
                "rating": {"type": "integer", "minimum": 1, "maximum": 5},
                "reason": {"type": "string", "maxLength": 100},
            }
        ),
    ),
    schema(
        "percentage (integer 0-100)",
        "What percentage of people are left-handed?",
        {"type": "integer", "minimum": 0, "maximum": 100},
    ),
    schema(
        "percentage (number 0-100)",
        "What share of the human body is water, in percent?",
        {"type": "number", "minimum": 0, "maximum": 100},
    ),
    schema(
        "exclusive bounds (integer 0 < x < 10)",
        "How many moons does Mars have?",
        {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10},
    ),
    schema(
        "probability (number, exclusive 0 < x < 1)",
        "What is the probability that it rains tomorrow in London?",
        {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
    ),
    schema(
        "negative range (integer -30..45)",
        "What is the temperature in Moscow in January, in degrees Celsius?",
        {"type": "integer", "minimum": -30, "maximum": 45},
    ),
    schema(
        "sentiment score (number -1..1)",
        "Score the sentiment of: 'I love this phone!'",
        {"type": "number", "minimum": -1, "maximum": 1},
    ),
    schema(
        "price (number, minimum 0)",
        "How much does a loaf of bread cost in dollars?",
        {"type": "number", "minimum": 0},
    ),
    schema(
        "price object (number, currency enum)",
        "How much is a movie ticket in London?",
        obj(
            {
                "price": {"type": "number", "minimum": 0, "maximum": 1000},
                "currency": {"enum": ["USD", "EUR", "GBP"]},
            }
        ),
    ),
    schema("free integer", "How many people live in Tokyo?", {"type": "integer"}),
    schema("free number", "What is the price of a coffee in dollars?", {"type": "number"}),
    schema(
        "integer, minimum 0",
        "How many books are in the Harry Potter series?",
        {"type": "integer", "minimum": 0},
    ),
    schema(
        "integer, exclusiveMinimum 0",
        "How many continents are there?",
        {"type": "integer", "exclusiveMinimum": 0},
    ),
    schema(
        "year (integer 1900-2100)",
        "In which year did the first iPhone come out?",
        {"type": "integer", "minimum": 1900, "maximum": 2100},
    ),
    schema(
        "sentiment enum",
        'Classify the sentiment: "The delivery was late again."',
        {"type": "string", "enum": ["positive", "negative", "neutral"]},
    ),
    schema(
        "classification object (enum, confidence 0-100)",
        'Which department should handle this email: "My invoice is wrong."',
        obj(
            {
                "department": {"enum": ["billing", "support", "sales"]},
                "confidence": {"type": "integer", "minimum": 0, "maximum": 100},
            }
        ),
    ),
    schema("boolean", "Is water wet?", {"type": "boolean"}),
    schema(
        "yes/no enum",
        "Should I bring an umbrella if the sky is dark grey?",
        {"enum": ["yes", "no"]},
    ),
    schema(
        "spam check object (boolean, reason)",
        'Is this message spam? "You won a free cruise! Click here."',
        obj({"isSpam": BOOLEAN, "reason": {"type": "string", "maxLength": 80}}),
    ),
    schema("date format", "When is Christmas Day in 2025?", {"type": "string", "format": "date"}),
    schema(
        "time format",
        "At what time does the sun set in summer?",
        {"type": "string", "format": "time"},
    ),
    schema(
        "date-time format",
        "When does the New Year start in Tokyo?",
        {"type": "string", "format": "date-time"},
    ),
    schema(
        "e-mail format (object)",
        "Create a contact card for John Smith, who works at example.com.",
        obj({"name": STRING, "email": {"type": "string", "format": "email"}}),
    ),
    schema(
        "uuid format",
        "Generate an ID for a new database record.",
        {"type": "string", "format": "uuid"},
    ),
    schema(
        "ipv4 format",
        "What is the usual IP address of a home router?",
        {"type": "string", "format": "ipv4"},
    ),
    schema(
        "ipv6 format", "What is the IPv6 loopback address?", {"type": "string", "format": "ipv6"}
    ),
    schema(
        "phone pattern",
        "What is the phone number of a dentist in your town? Make one up.",
        {"type": "string", "pattern": "^\\+?[0-9 -]{7,15}$"},
    ),
    schema(
        "hex colour pattern",
        "Pick a color for a logo of a bank.",
        obj({"color": {"type": "string", "pattern": "^#[0-9a-fA-F]{6}$"}}),
    ),
    schema(
        "URL pattern",
        "What is the homepage of the BBC?",
        {"type": "string", "pattern": "^https?://[a-z0-9.-]+\\.[a-z]{2,}(/[^\\s]*)?$"},
    ),
    schema(
        "title (minLength 5, maxLength 60)",
        "Suggest a title for a blog post about learning to cook.",
        {"type": "string", "minLength": 5, "maxLength": 60},
    ),
    schema("free string", "Summarize the plot of Romeo and Juliet.", {"type": "string"}),
    schema(
        "tweet (maxLength 280)",
        "Write a tweet announcing our new coffee shop.",
        {"type": "string", "maxLength": 280},
    ),
    schema(
        "word list (3-5 strings)",
        "List some animals that live in the ocean.",
        {
            "type": "array",
            "items": {"type": "string", "maxLength": 20},
            "minItems": 3,
            "maxItems": 5,
        },
    ),
    schema(
        "names from a sentence (free array)",
        'Extract the names from "I met John, Jane, and Jessie."',
        {"type": "array", "items": STRING},
    ),
    schema(
        "array of objects",
        "List three famous scientists and their ages at death.",
        {"type": "array", "items": PERSON, "minItems": 1, "maxItems": 5},
    ),
    schema(
        "array of objects, any property",
        "List the planets of the solar system with some facts about each.",
        {"type": "array", "items": {"type": "object"}},
    ),
    schema(
        "object, any property",
        "Describe the Eiffel Tower.",
        {"type": "object"},
    ),
    schema(
        "open object (additionalProperties true)",
        "Describe a car with its make and model, and anything else you know.",
        {
            "type": "object",
            "properties": {"make": STRING, "model": STRING},
            "required": ["make", "model"],
            "additionalProperties": True,
        },
    ),
    schema(
        "map of counts (additionalProperties integer)",
        "Count the fruits in: apple, banana, apple, cherry.",
        {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}},
    ),
    schema(
        "nested object (person with address)",
        "Describe a person living in Berlin.",
        obj(
            {
                "name": {"type": "string", "maxLength": 40},
                "age": {"type": "integer", "minimum": 0, "maximum": 120},
                "address": obj(
                    {
                        "street": {"type": "string", "maxLength": 60},
                        "city": {"type": "string", "maxLength": 40},
                        "zip": {"type": "string", "pattern": "^\\d{5}$"},
                    }
                ),
            }
        ),
    ),
    schema(
        "product review",
        "Review the wireless headphones I bought last week.",
        obj(
            {
                "rating": {"type": "integer", "minimum": 1, "maximum": 5},
                "pros": {
                    "type": "array",
                    "items": {"type": "string", "maxLength": 40},
                    "maxItems": 3,
                },
                "cons": {
                    "type": "array",
                    "items": {"type": "string", "maxLength": 40},
                    "maxItems": 3,
                },
                "recommend": BOOLEAN,
            }
        ),
    ),
    schema(
        "todo list (array of objects)",
        "Make a todo list for moving house.",
        {
            "type": "array",
            "items": obj({"task": {"type": "string", "maxLength": 60}, "done": BOOLEAN}),
            "maxItems": 6,
        },
    ),
    schema(
        "calendar event (date, time, e-mails)",
        "Schedule a team meeting next Monday at 10 am with alice@example.com and bob@example.com.",
        obj(
            {
                "title": {"type": "string", "maxLength": 60},
                "date": {"type": "string", "format": "date"},
                "start": {"type": "string", "format": "time"},
                "attendees": {
                    "type": "array",
                    "items": {"type": "string", "format": "email"},
                    "maxItems": 5,
                },
            }
        ),
    ),
    schema("const", "Acknowledge my request.", {"const": {"status": "ok"}}),
    schema(
        "anyOf string or null",
        "What is the middle name of Barack Obama, if any?",
        {"anyOf": [{"type": "string", "maxLength": 30}, {"type": "null"}]},
    ),
    schema(
        "anyOf two object shapes",
        "Give me either a circle with a radius or a square with a side length.",
        {
            "anyOf": [
                obj(
                    {
                        "shape": {"const": "circle"},
                        "radius": {"type": "integer", "minimum": 1, "maximum": 100},
                    }
                ),
                obj(
                    {
                        "shape": {"const": "square"},
                        "side": {"type": "integer", "minimum": 1, "maximum": 100},
                    }
                ),
            ]
        },
    ),
    schema(
        "oneOf (disjoint types)",
        "How old is the universe?",
        {"oneOf": [{"type": "integer", "minimum": 0}, {"type": "string", "maxLength": 40}]},
    ),
    schema(
        "$ref with $defs",
        "Give the start and end points of a line on a 10 by 10 grid.",
        {
            "$defs": {
                "point": obj(
                    {
                        "x": {"type": "integer", "minimum": 0, "maximum": 10},
                        "y": {"type": "integer", "minimum": 0, "maximum": 10},
                    }
                )
            },
            **obj({"start": {"$ref": "#/$defs/point"}, "end": {"$ref": "#/$defs/point"}}),
        },
    ),
    schema(
        "type list (string or null)",
        "What is the nickname of New York City?",
        {"type": ["string", "null"], "maxLength": 30},
    ),
    schema(
        "names with é/ü (pattern [À-ÿ])",
        'Extract the person from: "Zoë Müller lives in Zürich."',
        obj(
            {
                "firstName": {"type": "string", "pattern": "^[A-Za-zÀ-ÿ]+$"},
                "lastName": {"type": "string", "pattern": "^[A-Za-zÀ-ÿ]+$"},
                "city": STRING,
            }
        ),
    ),
    schema(
        "non-ASCII enum",
        "Qu'est-ce que tu veux boire ce matin ?",
        {"enum": ["café", "thé", "chocolat chaud", "jus d'orange"]},
    ),
    schema(
        "French translation (. and \\s pattern)",
        "Translate 'Good evening, my friend' into French.",
        {"type": "string", "pattern": "^.+(\\s.+)*$", "maxLength": 80},
    ),
    schema(
        "tuple (prefixItems)",
        "Give the name and population in millions of the largest city in Japan.",
        {
            "type": "array",
            "prefixItems": [
                {"type": "string", "maxLength": 30},
                {"type": "integer", "minimum": 0, "maximum": 100},
            ],
            "items": False,
            "minItems": 2,
        },
    ),
    schema(
        "lottery numbers (integers 1-49, 6 items)",
        "Pick my lottery numbers for this week.",
        {
            "type": "array",
            "items": {"type": "integer", "minimum": 1, "maximum": 49},
            "minItems": 6,
            "maxItems": 6,
        },
    ),
    schema(
        "poem lines (multi-line answer)",
        "Write a short poem about the rain.",
        obj(
            {
                "title": {"type": "string", "maxLength": 40},
                "lines": {
                    "type": "array",
                    "items": {"type": "string", "maxLength": 80},
                    "minItems": 3,
                    "maxItems": 6,
                },
            }
        ),
    ),
    schema(
        "multi-line string",
        "Write a limerick about a cat.",
        {"type": "string", "pattern": "^[^\\n]+(\\n[^\\n]+){2,5}$"},
    ),
    schema(
        "optional properties",
        "Tell me about a user named Sam; include a nickname only if there is one.",
        obj(
            {
                "name": {"type": "string", "maxLength": 30},
                "nickname": {"type": "string", "maxLength": 20},
                "age": {"type": "integer", "minimum": 0, "maximum": 120},
            },
            required=["name"],
        ),
    ),
    schema(
        "language detection",
        "Which language is this: 'Wo ist der Bahnhof?'",
        obj(
            {
                "language": {"enum": ["English", "French", "German", "Spanish", "Italian"]},
                "confidence": {"type": "integer", "minimum": 0, "maximum": 100},
            }
        ),
    ),
    schema(
        "recipe",
        "Give me a simple pancake recipe.",
        obj(
            {
                "name": {"type": "string", "maxLength": 50},
                "servings": {"type": "integer", "minimum": 1, "maximum": 12},
                "ingredients": {
                    "type": "array",
                    "items": obj(
                        {
                            "item": {"type": "string", "maxLength": 30},
                            "quantity": {"type": "string", "maxLength": 20},
                        }
                    ),
                    "minItems": 2,
                    "maxItems": 8,
                },
                "steps": {
                    "type": "array",
                    "items": {"type": "string", "maxLength": 120},
                    "minItems": 1,
                    "maxItems": 6,
                },
            }
        ),
    ),
    schema(
        "weather report (number enum, integer range)",
        "What is the weather like in Rome today?",
        obj(
            {
                "city": {"type": "string", "maxLength": 30},
                "temperature": {"type": "integer", "minimum": -50, "maximum": 50},
                "condition": {"enum": ["sunny", "cloudy", "rainy", "snowy"]},
                "wind": {"type": "number", "enum": [0, 5.5, 10, 20.5]},
            }
        ),
    ),
    schema(
        "URI format",
        "What is the URL of the Mozilla Developer Network?",
        {"type": "string", "format": "uri"},
        expect_refused=True,
    ),
]

CORPUS: list[Constraint] = [*REGEXPS, *SCHEMAS]
BY_NAME: dict[str, Constraint] = {c.name: c for c in CORPUS}
assert len(BY_NAME) == len(CORPUS), "constraint names must be unique"
assert all(name in BY_NAME for name in KNOWN_CASES)

# -- judging -----------------------------------------------------------------------------

#: Draft 2020-12's format checker (``jsonschema.FormatChecker()`` alone holds draft 3's
#: ``time``). Formats it has no checker for here (``uri`` without ``rfc3987``) pass.
FORMATS = jsonschema.Draft202012Validator.FORMAT_CHECKER


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def check_json(answer: str, value: Any) -> str:
    """Why ``answer`` fails the schema ``value`` ("" when it is valid)."""
    try:
        parsed = json.loads(answer, parse_constant=_no_constant)
    except ValueError as error:
        return f"not JSON: {error}"
    validator = jsonschema.Draft202012Validator(value, format_checker=FORMATS)
    errors = sorted(validator.iter_errors(parsed), key=lambda e: list(e.absolute_path))
    return "; ".join(e.message[:200] for e in errors[:3])


NODE_CHECK = r"""
const items = JSON.parse(require('fs').readFileSync(0, 'utf8'));
process.stdout.write(JSON.stringify(items.map(([source, flags, answer]) => {
  if (!new RegExp(source, flags).test(answer)) return 'RegExp.test() is false';
  const whole = new RegExp('^(?:' + source + ')$', flags.replace(/[gym]/g, ''));
  return whole.test(answer) ? '' : 'test() holds, but not on the whole answer';
})));
"""


def node() -> str | None:
    return shutil.which("node")


def check_regexps(items: list[tuple[str, str, str]]) -> list[str]:
    """Why each (source, flags, answer) fails JavaScript's RegExp ("" when it matches),
    in one ``node`` call."""
    if not items:
        return []
    executable = node()
    if executable is None:
        raise RuntimeError("JavaScript's RegExp judges the RegExp answers: install Node")
    done = subprocess.run(
        [executable, "-e", NODE_CHECK],
        input=json.dumps(items),
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    verdicts: list[str] = json.loads(done.stdout)
    return verdicts


def judge(answers: list[tuple[Constraint, str]]) -> list[str]:
    """Why each answer fails its constraint's validator ("" when valid)."""
    out = ["" for _ in answers]
    regex_at: list[int] = []
    items: list[tuple[str, str, str]] = []
    for index, (constraint, answer) in enumerate(answers):
        if constraint.regex is not None:
            regex_at.append(index)
            items.append((*constraint.regex, answer))
        else:
            out[index] = check_json(answer, constraint.schema)
    for index, why in zip(regex_at, check_regexps(items), strict=True):
        out[index] = why
    return out


def check_corpus() -> None:
    """Every schema is a Draft 2020-12 schema; every RegExp compiles in JavaScript (when
    Node is here)."""
    for constraint in SCHEMAS:
        jsonschema.Draft202012Validator.check_schema(constraint.schema)
    if node():
        check_regexps([(*c.regex, "") for c in REGEXPS if c.regex is not None])
