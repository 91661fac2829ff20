"""Constrained decoding on real-size models under CPython (onnxruntime + llguidance).

Four parts, per model (SmolLM2-135M-Instruct, a real instruct model, and the
0.5B-size benchmark model with random weights, which writes noise):

1. Validity: JSON schemas and JavaScript regular expressions written here, each
   answered for a topical and a generic prompt, greedily ("most-predictable") and
   sampled (topK 40, temperature 1.0). Every answer is checked: JSON parsed and
   validated with ``jsonschema`` (formats checked), regexes matched whole with
   JavaScript's RegExp (``node``; Python's ``re.fullmatch`` without it). Strings,
   numbers and arrays are bounded: noise never closes an unbounded value within the
   response's token limit.
2. Cost: the one-time vocabulary preparation, each grammar's compile time (what
   ``backend.constrain()`` adds before the first token), the mask per token
   (``backend.mask_ms`` / masked steps) and a decode step (``run_ms`` / one-token
   forward calls under a grammar).
3. Jump-forward (SmolLM2, greedy): a schema with long keys, with
   ``model.jump_forward`` on and off: tokens/s, tokens jumped, the same text.
4. Tool calls (SmolLM2, sampled): the weather tool with its worked example, about
   twenty questions, with the tool-call grammar and without it.

    python3 bench/constrained.py [--model smollm2|random|both] [--quick]
        [--random-dtype auto|q8|fp32]

The tables at the end are markdown. The exit status is 1 when any answer is
invalid, a generation failed, or jump-forward changed an answer.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from py_runtime.engine.errors import PromptAPIError  # noqa: E402
from py_runtime.engine.grammar import Grammar  # noqa: E402
from py_runtime.engine.runtime import Runtime  # noqa: E402
from py_runtime.hosts.cpython import local_model  # noqa: E402
from py_runtime.hosts.llguidance_matcher import Vocabulary  # noqa: E402
from py_runtime.models.causal_lm import CausalLM, CausalLMState  # noqa: E402

SMOLLM2 = Path.home() / ".cache" / "prompt-api-models" / "smollm2"
RANDOM = Path.home() / ".cache" / "prompt-api-bench" / "qwen2.5-0.5b-random"
THREADS = 2
GREEDY: dict[str, Any] = {"samplingMode": "most-predictable"}
SAMPLED: dict[str, Any] = {"topK": 40, "temperature": 1.0}

# -- the constraints --------------------------------------------------------------------

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

# -- jump-forward --------------------------------------------------------------------

JUMP_SCHEMA = obj(
    {
        "the_name_of_the_city_being_described": {
            "enum": ["Paris", "London", "Tokyo", "New York", "Rome"]
        },
        "the_temperature_in_degrees_celsius_today": {
            "type": "integer",
            "minimum": -30,
            "maximum": 45,
        },
        "the_condition_of_the_sky_right_now": {"enum": ["sunny", "cloudy", "rainy", "snowy"]},
        "the_wind_speed_in_kilometres_per_hour": {"type": "integer", "minimum": 0, "maximum": 150},
        "whether_an_umbrella_is_recommended_today": {"type": "boolean"},
    }
)
JUMP_PROMPTS = [
    "Describe the weather in Paris today.",
    "What is the weather like in Tokyo right now?",
    "Give me a weather report for London.",
    "Is it raining in Rome?",
]

# -- tool calls ------------------------------------------------------------------------

WEATHER_SCHEMA = {
    "type": "object",
    "properties": {"location": {"type": "string", "description": "City name"}},
    "required": ["location"],
}
WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Get the current weather for a location",
    "inputSchema": {
        "type": "object",
        "properties": "object",
        "required": "array",
        "json": json.dumps(WEATHER_SCHEMA),
    },
}
#: kWithTools of tests/wpt-models/ai/language-model/smollm2.tentative.https.window.js,
#: sampled: the worked example (a question and the assistant's call) in initialPrompts.
WITH_TOOLS: dict[str, Any] = {
    **SAMPLED,
    "expectedInputs": [{"type": "tool-call"}, {"type": "tool-response"}],
    "expectedOutputs": [{"type": "tool-call"}],
    "tools": [WEATHER_TOOL],
    "initialPrompts": [
        {"role": "user", "content": "What is the weather in Rome?", "prefix": False},
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool-call",
                    "value": {
                        "kind": "tool-call",
                        "callId": "call_example",
                        "name": "get_weather",
                        "arguments": {
                            "isArray": False,
                            "platform": False,
                            "json": json.dumps({"location": "Rome"}),
                        },
                    },
                }
            ],
            "prefix": False,
        },
    ],
}
#: (question, the city a call should name, or None where no call is wanted).
TOOL_QUESTIONS: list[tuple[str, str | None]] = [
    ("What is the weather in Paris?", "Paris"),
    ("How's the weather in Tokyo today?", "Tokyo"),
    ("Is it raining in London?", "London"),
    ("What's the temperature in New York right now?", "New York"),
    ("Tell me the weather forecast for Berlin.", "Berlin"),
    ("Weather in Madrid?", "Madrid"),
    ("Do I need an umbrella in Seattle today?", "Seattle"),
    ("How hot is it in Cairo?", "Cairo"),
    ("What is the weather like in Sydney?", "Sydney"),
    ("Is it snowing in Moscow?", "Moscow"),
    ("What's the weather in Rio de Janeiro?", "Rio de Janeiro"),
    ("How cold is it in Oslo?", "Oslo"),
    ("Check the weather in Mumbai for me.", "Mumbai"),
    ("What are the current weather conditions in Toronto?", "Toronto"),
    ("What is the capital of France?", None),
    ("What is 2 + 2?", None),
    ("Say hello.", None),
    ("Who wrote Romeo and Juliet?", None),
    ("Name a color of the sky.", None),
    ("Translate 'thank you' into Spanish.", None),
]

# -- checking answers ---------------------------------------------------------------------

#: jsonschema's FormatChecker for draft 2020-12 (``jsonschema.FormatChecker()`` alone
#: holds draft 3's ``time``, ``%H:%M:%S`` without the offset RFC 3339 asks for).
FORMATS = jsonschema.Draft202012Validator.FORMAT_CHECKER


def check_json(answer: str, schema: dict[str, Any]) -> tuple[bool, bool, str]:
    """(parsed, valid, why not) for a JSON answer."""
    try:
        value = json.loads(answer)
    except ValueError as error:
        return False, False, f"not JSON: {error}"
    validator = jsonschema.Draft202012Validator(schema, format_checker=FORMATS)
    errors = sorted(validator.iter_errors(value), key=lambda e: list(e.path))
    if errors:
        return True, False, "; ".join(e.message for e in errors[:3])
    return True, True, ""


NODE_CHECK = """
const items = JSON.parse(require('fs').readFileSync(0, 'utf8'));
console.log(JSON.stringify(items.map(([source, flags, answer]) =>
  new RegExp('^(?:' + source + ')$', flags).test(answer))));
"""


def regex_matches(items: list[tuple[str, str, str]]) -> tuple[list[bool], str]:
    """Whole-string matches of (JS source, flags, answer): JavaScript's RegExp, or
    Python's ``re.fullmatch`` without ``node``; and which was used."""
    node = shutil.which("node")
    if node and items:
        done = subprocess.run(
            [node, "-e", NODE_CHECK],
            input=json.dumps(items),
            capture_output=True,
            text=True,
            check=True,
        )
        return [bool(v) for v in json.loads(done.stdout)], "JavaScript RegExp (node)"
    return [
        re.fullmatch(source, answer, re.IGNORECASE if "i" in flags else 0) is not None
        for source, flags, answer in items
    ], "Python re.fullmatch"


# -- driving the runtime -----------------------------------------------------------------


@dataclass
class Counters:
    """What the backend did while they were current."""

    masked_steps: int = 0  # next_token() under a grammar
    steps: int = 0  # one-token forward calls under a grammar
    step_ms: float = 0.0  # their run_ms
    jump_calls: int = 0  # forward calls of jumped (several) tokens
    jump_tokens: int = 0
    mask_ms: float = 0.0
    compile_ms: dict[str, list[float]] = field(default_factory=dict)


@dataclass
class Answer:
    case: str
    prompt: str
    mode: str
    text: str
    calls: list[dict[str, Any]]
    seconds: float
    error: str = ""
    tokens: int = 0  # decoded (sampled or jumped), as run through the model


class Bench:
    """A Runtime over one model, driven as the worker drives it, with the backend's
    calls counted."""

    def __init__(self, label: str, folder: Path, dtype: str) -> None:
        self.label, self.folder, self.dtype = label, folder, dtype
        self.model: CausalLM = local_model(folder, dtype, threads=THREADS)  # type: ignore[arg-type]
        self.runtime = Runtime(self.model)
        self.loop = asyncio.new_event_loop()
        started = time.perf_counter()
        self.run(self.model.load(lambda _: None, lambda: False))
        self.load_s = time.perf_counter() - started
        self.counters = Counters()
        self.case = ""
        self.first_constrain_ms = 0.0
        #: Within one prompt(): None until its answer starts (the grammar is set, or the
        #: first token is chosen), then the tokens run through the model since.
        self.recording = False
        self.answer_tokens: int | None = None
        self._instrument()

    def run(self, coroutine: Any) -> Any:
        return self.loop.run_until_complete(coroutine)

    @property
    def backend(self) -> Any:
        assert self.model.backend is not None
        return self.model.backend

    def _instrument(self) -> None:
        backend = self.backend
        constrained: set[int] = set()
        constrain, forward, next_token = backend.constrain, backend.forward, backend.next_token

        async def timed_constrain(cache: int, grammar: Grammar | None) -> None:
            if grammar is None:
                constrained.discard(cache)
                await constrain(cache, None)
                return
            self._answer_starts()
            started = time.perf_counter()
            await constrain(cache, grammar)
            spent = (time.perf_counter() - started) * 1000
            self.counters.compile_ms.setdefault(self.case, []).append(spent)
            constrained.add(cache)

        async def counted_forward(cache: int, ids: list[int]) -> None:
            before = backend.run_ms
            await forward(cache, ids)
            if self.answer_tokens is not None:
                self.answer_tokens += len(ids)
            if cache in constrained:
                if len(ids) == 1:
                    self.counters.steps += 1
                    self.counters.step_ms += backend.run_ms - before
                else:
                    self.counters.jump_calls += 1
                    self.counters.jump_tokens += len(ids)

        async def counted_next_token(cache: int, sampling: Any) -> int:
            self._answer_starts()
            before = backend.mask_ms
            token = int(await next_token(cache, sampling))
            if cache in constrained:
                self.counters.masked_steps += 1
                self.counters.mask_ms += backend.mask_ms - before
            return token

        backend.constrain = timed_constrain
        backend.forward = counted_forward
        backend.next_token = counted_next_token

    def _answer_starts(self) -> None:
        if self.recording and self.answer_tokens is None:
            self.answer_tokens = 0

    @contextmanager
    def counting(self, counters: Counters | None = None) -> Iterator[Counters]:
        previous, self.counters = self.counters, counters or Counters()
        try:
            yield self.counters
        finally:
            self.counters = previous

    def vocabulary_ms(self) -> float:
        """The one-time preparation of the tokens for llguidance, timed on its own;
        then the backend's own first constrain() (preparation and a tiny grammar)."""
        tokenizer_json = (self.folder / "tokenizer.json").read_text(encoding="utf-8")
        width = self.backend._logits_width()
        started = time.perf_counter()
        Vocabulary(tokenizer_json, sorted(self.model.eos_ids), width)
        prepared = (time.perf_counter() - started) * 1000
        cache = self.backend.new_cache()
        started = time.perf_counter()
        self.run(self.backend.constrain(cache, Grammar("regex", "a")))
        self.first_constrain_ms = (time.perf_counter() - started) * 1000
        self.run(self.backend.constrain(cache, None))
        self.backend.release(cache)
        return prepared

    def plain_step_ms(self) -> float:
        """A decode step without a grammar: ``runtime.benchmark()`` (64-token prompt,
        20 greedy steps), after a warm-up."""
        self.run(self.runtime.benchmark(64, 20, lambda: False))
        result = self.run(self.runtime.benchmark(64, 20, lambda: False))
        return float(result["decodeMs"]) / 20

    def answer(
        self,
        case: str,
        options: dict[str, Any],
        prompt: str,
        constraint: dict[str, Any] | None,
        mode: str,
    ) -> Answer:
        self.case = case
        chunks: list[dict[str, Any]] = []

        async def settle(_: Any) -> bool:
            return True

        started = time.perf_counter()
        error = ""
        session = 0
        try:
            session = self.run(self.runtime.create(options, True, lambda _: None, lambda: False))[
                "session"
            ]
            self.recording, self.answer_tokens = True, None
            self.run(
                self.runtime.prompt(
                    session, prompt, constraint, False, chunks.append, settle, lambda: False
                )
            )
        except PromptAPIError as failure:
            error = f"{failure.name}: {failure}"
        except Exception as failure:  # a crash is a result here: report it, go on
            error = f"{type(failure).__name__}: {failure}"
        finally:
            if session:
                self.runtime.destroy(session)
        tokens = self.answer_tokens or 0
        self.recording, self.answer_tokens = False, None
        text = "".join(c["text"] for c in chunks if c["kind"] == "text")
        calls = [c for c in chunks if c["kind"] == "tool-call"]
        seconds = time.perf_counter() - started
        return Answer(case, prompt, mode, text, calls, seconds, error, tokens)

    def tokens(self, text: str) -> int:
        assert self.model.tokenizer is not None
        return len(self.model.tokenizer.encode(text))


def pick_random_dtype(choice: str) -> tuple[Bench, str]:
    """The random model in q8 or fp32: ``auto`` measures a 20-token decode of each
    (after a warm-up) and keeps the faster."""
    if choice != "auto":
        return Bench("random", RANDOM, choice), f"{choice} (chosen on the command line)"
    rates: dict[str, float] = {}
    for dtype in ("q8", "fp32"):
        bench = Bench("random", RANDOM, dtype)
        bench.run(bench.runtime.benchmark(64, 20, lambda: False))  # warm-up
        runs = [bench.run(bench.runtime.benchmark(64, 20, lambda: False)) for _ in range(2)]
        rates[dtype] = max(r["decodeTokensPerSecond"] for r in runs)
        print(f"  random {dtype}: 20-token decode {rates[dtype]:.1f} tok/s", flush=True)
        del bench
    best = max(rates, key=lambda d: rates[d])
    note = ", ".join(f"{d} {r:.1f} tok/s" for d, r in rates.items())
    return Bench("random", RANDOM, best), f"{best} (faster for a 20-token decode: {note})"


# -- the parts ---------------------------------------------------------------------------


@dataclass
class Checked:
    answer: Answer
    kind: str  # "json" or "regex"
    parsed: bool
    valid: bool
    why: str

    def failure(self, limit: int) -> str:
        """What went wrong, in a few words ("" when valid)."""
        if self.valid:
            return ""
        if self.answer.error.startswith("NotSupportedError"):
            return "not supported (NotSupportedError)"
        if self.answer.error:
            return "generation failed"
        if self.answer.tokens >= limit:
            return f"cut at the response limit ({limit} tokens)"
        if "is not a '" in self.why:
            return "format: the grammar allowed what jsonschema rejects"
        if not self.parsed:
            return "not JSON"
        return "schema violated" if self.kind == "json" else "no whole-string match"


@dataclass
class ValidityResult:
    checked: list[Checked]
    counters: Counters
    seconds: float
    regex_checker: str


def validity(bench: Bench, quick: bool) -> ValidityResult:
    cases = [c for c in [*SCHEMAS, *REGEXES] if c.only in (None, bench.label)]
    answers: list[tuple[Case, Answer]] = []
    started = time.perf_counter()
    with bench.counting() as counters:
        for index, case in enumerate(cases):
            generic = GENERIC_PROMPTS[index % len(GENERIC_PROMPTS)]
            plan = [(case.prompt, "greedy"), (case.prompt, "sampled")]
            if not quick:
                plan += [(case.prompt, "sampled"), (generic, "greedy"), (generic, "sampled")]
            for prompt, mode in plan:
                options = GREEDY if mode == "greedy" else SAMPLED
                answer = bench.answer(case.name, options, prompt, case.constraint(), mode)
                answers.append((case, answer))
            shown = [a.text for c, a in answers if c is case][:3]
            print(f"  [{bench.label}] {case.name:28} {json.dumps(shown)[:150]}", flush=True)
    seconds = time.perf_counter() - started
    checked: list[Checked] = []
    regex_items: list[tuple[str, str, str]] = []
    for case, answer in answers:
        if case.schema is not None:
            parsed, valid, why = (False, False, answer.error) if answer.error else (True, True, "")
            if not answer.error:
                parsed, valid, why = check_json(answer.text, case.schema)
            checked.append(Checked(answer, "json", parsed, valid, why))
        else:
            assert case.regex is not None
            regex_items.append((case.regex[0], case.regex[1], answer.text))
            checked.append(Checked(answer, "regex", not answer.error, False, answer.error))
    matches, checker = regex_matches(regex_items)
    regex_checked = iter(matches)
    for item in checked:
        if item.kind == "regex":
            matched = next(regex_checked)
            item.valid = matched and not item.answer.error
            if not item.valid and not item.why:
                item.why = "no whole-string match"
    return ValidityResult(checked, counters, seconds, checker)


def refusals(bench: Bench) -> dict[str, str]:
    """What each of UNSUPPORTED gives: the error's name, or the answer."""
    out = {}
    for case in UNSUPPORTED:
        answer = bench.answer(case.name, GREEDY, case.prompt, case.constraint(), "greedy")
        out[case.name] = answer.error.split(":")[0] if answer.error else f"answered {answer.text!r}"
    return out


@dataclass
class JumpResult:
    rows: list[dict[str, Any]]
    answers: dict[bool, list[str]]
    same: bool


def jump_timing(bench: Bench, quick: bool) -> JumpResult:
    """Jump-forward on and off, with the wall time of each generation measured from
    the grammar's compile (after the prefill) to the answer's end."""
    prompts = JUMP_PROMPTS[:1] if quick else JUMP_PROMPTS
    constraint = {"kind": "json-schema", "json": json.dumps(JUMP_SCHEMA)}
    backend = bench.backend
    marks: list[float] = []
    constrain = backend.constrain

    async def marked(cache: int, grammar: Grammar | None) -> None:
        if grammar is not None:
            marks.append(time.perf_counter())
        await constrain(cache, grammar)

    backend.constrain = marked
    try:
        bench.answer("jump warm-up", GREEDY, prompts[0], constraint, "greedy")
        rows: list[dict[str, Any]] = []
        answers: dict[bool, list[str]] = {}
        for jump in (True, False):
            bench.model.jump_forward = jump
            jumped_before = bench.model.jumped_tokens
            texts: list[str] = []
            decode_s = prompt_s = 0.0
            with bench.counting() as counters:
                for prompt in prompts:
                    marks.clear()
                    answer = bench.answer("jump", GREEDY, prompt, constraint, "greedy")
                    ended = time.perf_counter()
                    if answer.error:
                        texts.append(f"<error: {answer.error}>")
                        continue
                    texts.append(answer.text)
                    prompt_s += answer.seconds
                    decode_s += ended - marks[0]
            tokens = sum(bench.tokens(t) for t in texts)
            rows.append(
                {
                    "jump_forward": jump,
                    "answers": len(texts),
                    "tokens": tokens,
                    "sampled": counters.masked_steps,
                    "jumped": bench.model.jumped_tokens - jumped_before,
                    "jump_calls": counters.jump_calls,
                    "decode_s": decode_s,
                    "prompt_s": prompt_s,
                }
            )
            answers[jump] = texts
    finally:
        bench.model.jump_forward = True
        backend.constrain = constrain
    return JumpResult(rows, answers, answers[True] == answers[False])


@dataclass
class ToolRow:
    grammar: bool
    answers: list[tuple[str, str | None, Answer]]
    counters: Counters
    seconds: float


@contextmanager
def without_tool_grammar() -> Iterator[None]:
    """CausalLMState.tool_grammar as None: tool calls are parsed, never held."""
    original = CausalLMState.__dict__["tool_grammar"]
    CausalLMState.tool_grammar = property(lambda self: None)  # type: ignore[assignment]
    try:
        yield
    finally:
        CausalLMState.tool_grammar = original  # type: ignore[method-assign]


#: How often each tool question is asked, per mode (sampled answers vary a lot).
TOOL_REPEATS = 2


def tool_calls(bench: Bench, quick: bool) -> list[ToolRow]:
    """Every question with the tool grammar and without it, alternately."""
    questions = TOOL_QUESTIONS[::4] if quick else TOOL_QUESTIONS
    rows = {grammar: ToolRow(grammar, [], Counters(), 0.0) for grammar in (True, False)}
    for _ in range(1 if quick else TOOL_REPEATS):
        for question, city in questions:
            for grammar, row in rows.items():
                with bench.counting(row.counters):
                    if grammar:
                        answer = bench.answer("tools", WITH_TOOLS, question, None, "sampled")
                    else:
                        with without_tool_grammar():
                            answer = bench.answer("tools", WITH_TOOLS, question, None, "sampled")
                row.answers.append((question, city, answer))
                row.seconds += answer.seconds
                shown = answer.calls[0]["arguments"] if answer.calls else answer.text[:60]
                label = "grammar" if grammar else "no grammar"
                print(f"  [tools, {label}] {question[:40]:40} {json.dumps(shown)}", flush=True)
    return list(rows.values())


# -- reporting ---------------------------------------------------------------------------


def table(header: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def ms(value: float) -> str:
    return f"{value:.1f}" if value >= 10 else f"{value:.2f}"


@dataclass
class ModelReport:
    bench: Bench
    dtype_note: str
    vocabulary_ms: float
    validity: ValidityResult
    plain_step_ms: float = 0.0
    refused: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    load: tuple[float, float] = (0.0, 0.0)  # 1-minute load average before and after
    jump: JumpResult | None = None
    tools: list[ToolRow] | None = None


def validity_table(reports: list[ModelReport]) -> str:
    rows = []
    for report in reports:
        checked = report.validity.checked
        js = [c for c in checked if c.kind == "json"]
        rx = [c for c in checked if c.kind == "regex"]
        crashed = sum(1 for c in checked if c.answer.error)
        limit = report.bench.model.max_response_tokens
        cut = sum(1 for c in checked if c.failure(limit).startswith("cut"))
        at_limit = sum(1 for c in checked if c.answer.tokens >= limit)
        other = sum(
            1 for c in checked if c.failure(limit) and not c.failure(limit).startswith("cut")
        )
        rows.append(
            [
                f"{report.bench.label} ({report.bench.dtype})",
                sum(1 for c in SCHEMAS if c.only in (None, report.bench.label)),
                sum(1 for c in REGEXES if c.only in (None, report.bench.label)),
                len(checked),
                f"{len(js)} / {sum(c.parsed for c in js)} / {sum(c.valid for c in js)}",
                f"{len(rx)} / {sum(c.valid for c in rx)}",
                f"{sum(c.valid for c in checked)} / {len(checked)}",
                f"{at_limit} ({at_limit - cut} still valid)",
                cut,
                other - crashed,
                crashed,
                f"{report.validity.seconds:.0f}",
            ]
        )
    header = [
        "model",
        "schemas",
        "regexes",
        "generated",
        "JSON generated / parsed / valid",
        "regex generated / matched",
        "valid",
        "answers that hit the response limit",
        "invalid: cut at the response limit",
        "invalid: complete answer",
        "failed calls",
        "wall s",
    ]
    return table(header, rows)


def failure_table(reports: list[ModelReport]) -> str:
    """Invalid answers by model, constraint and kind, with one example each."""
    groups: dict[tuple[str, str, str], list[Checked]] = {}
    for report in reports:
        limit = report.bench.model.max_response_tokens
        for item in report.validity.checked:
            kind = item.failure(limit)
            if kind:
                groups.setdefault((report.bench.label, item.answer.case, kind), []).append(item)
    rows = []
    for (label, case, kind), items in groups.items():
        modes = ", ".join(sorted({i.answer.mode for i in items}))
        example = items[0].answer.text
        example = example if len(example) <= 70 else example[:60] + f"… ({len(example)} chars)"
        rows.append([label, case, kind, f"{len(items)} ({modes})", f"`{example}`"])
    return table(["model", "constraint", "kind", "answers", "example"], rows) if rows else ""


def cost_table(reports: list[ModelReport]) -> str:
    rows = []
    for report in reports:
        c = report.validity.counters
        compiles = [t for times in c.compile_ms.values() for t in times]
        mask = c.mask_ms / c.masked_steps if c.masked_steps else 0.0
        step = c.step_ms / c.steps if c.steps else 0.0
        vocab = report.bench.backend._logits_width()
        rows.append(
            [
                f"{report.bench.label} ({report.bench.dtype})",
                vocab,
                f"{report.vocabulary_ms:.0f}",
                f"{statistics.median(compiles):.1f} ({min(compiles):.1f}–{max(compiles):.1f})",
                c.masked_steps,
                f"{mask:.3f}",
                ms(step),
                f"{100 * mask / step:.1f} %" if step else "–",
                ms(report.plain_step_ms),
            ]
        )
        for row in report.tools or []:
            if not row.grammar:
                continue
            t = row.counters
            mask = t.mask_ms / t.masked_steps if t.masked_steps else 0.0
            step = t.step_ms / t.steps if t.steps else 0.0
            tool_compiles = [x for times in t.compile_ms.values() for x in times]
            rows.append(
                [
                    f"{report.bench.label}, tool-call grammar (free text)",
                    vocab,
                    "",
                    f"{statistics.median(tool_compiles):.1f}" if tool_compiles else "–",
                    t.masked_steps,
                    f"{mask:.3f}",
                    ms(step),
                    f"{100 * mask / step:.1f} %" if step else "–",
                    "",
                ]
            )
    header = [
        "model",
        "vocabulary",
        "vocabulary preparation ms",
        "compile ms, median (min–max)",
        "masked steps",
        "mask ms/token",
        "decode step ms",
        "mask / step",
        "plain decode step ms (benchmark)",
    ]
    return table(header, rows)


def compile_table(reports: list[ModelReport]) -> str:
    names = [case.name for case in [*SCHEMAS, *REGEXES]]
    rows = []
    for name in names:
        row: list[Any] = [name, "schema" if any(c.name == name for c in SCHEMAS) else "regex"]
        for report in reports:
            times = report.validity.counters.compile_ms.get(name, [])
            row.append(f"{statistics.median(times):.1f}" if times else "–")
        rows.append(row)
    header = ["constraint", "kind", *[f"{r.bench.label} compile ms (median)" for r in reports]]
    return table(header, rows)


def jump_table(result: JumpResult) -> str:
    rows = []
    for row in result.rows:
        rate = row["tokens"] / row["decode_s"] if row["decode_s"] else 0.0
        rows.append(
            [
                "on" if row["jump_forward"] else "off",
                row["answers"],
                row["tokens"],
                row["sampled"],
                row["jumped"],
                row["jump_calls"],
                f"{row['decode_s']:.2f}",
                f"{rate:.1f}",
                f"{row['prompt_s']:.2f}",
            ]
        )
    header = [
        "jump_forward",
        "answers",
        "answer tokens",
        "sampled steps",
        "tokens jumped",
        "jump forward calls",
        "generation s",
        "tokens/s",
        "prompt() s (with prefill)",
    ]
    return table(header, rows) + f"\n\nSame answer text both ways: {result.same}"


def tool_stats(row: ToolRow) -> dict[str, Any]:
    attempted = parsed = valid = malformed = right_city = 0
    weather_called = unrelated_called = 0
    weather = sum(1 for _, city, _ in row.answers if city)
    for _, city, answer in row.answers:
        called = bool(answer.calls) or "<tool_call>" in answer.text
        attempted += called
        if city:
            weather_called += called
        else:
            unrelated_called += called
        malformed += "<tool_call>" in answer.text
        for call in answer.calls:
            parsed += 1
            arguments = call["arguments"]
            ok = call["name"] == "get_weather"
            try:
                jsonschema.validate(arguments, WEATHER_SCHEMA)
            except jsonschema.ValidationError:
                ok = False
            valid += ok
            location = arguments.get("location") if isinstance(arguments, dict) else None
            right_city += bool(
                city and isinstance(location, str) and city.lower() in location.lower()
            )
    return {
        "questions": len(row.answers),
        "weather": weather,
        "attempted": attempted,
        "weather_called": weather_called,
        "unrelated_called": unrelated_called,
        "parsed": parsed,
        "valid": valid,
        "right_city": right_city,
        "malformed": malformed,
        "errors": sum(1 for *_, a in row.answers if a.error),
    }


def tools_table(rows: list[ToolRow]) -> str:
    out = []
    for row in rows:
        s = tool_stats(row)
        out.append(
            [
                "on (default)" if row.grammar else "off",
                f"{s['questions']} ({s['weather']} to weather questions)",
                s["attempted"],
                f"{s['weather_called']} / {s['unrelated_called']}",
                s["parsed"],
                s["valid"],
                s["right_city"],
                s["malformed"],
                s["errors"],
                f"{row.seconds:.0f}",
            ]
        )
    header = [
        "tool grammar",
        "answers",
        "answers with a call (marker or parsed)",
        "of which weather / unrelated",
        "parsed calls",
        "arguments valid",
        "right city",
        "malformed (<tool_call> left in text)",
        "failed calls",
        "wall s",
    ]
    return table(header, out)


def failures(reports: list[ModelReport]) -> list[str]:
    lines = []
    for report in reports:
        for item in report.validity.checked:
            if item.valid:
                continue
            a = item.answer
            kind = item.failure(report.bench.model.max_response_tokens)
            lines.append(
                f"[{report.bench.label}] {a.case} ({a.mode}, prompt {a.prompt!r}, "
                f"{a.tokens} tokens): {kind}: {item.why}\n    answer: {a.text!r}"
            )
        if report.jump and not report.jump.same:
            for on, off in zip(report.jump.answers[True], report.jump.answers[False], strict=True):
                if on != off:
                    lines.append(
                        f"[{report.bench.label}] jump-forward changed an answer:\n"
                        f"    on:  {on!r}\n    off: {off!r}"
                    )
        for row in report.tools or []:
            for question, _, a in row.answers:
                if a.error:
                    lines.append(f"[{report.bench.label}] tools ({question!r}): {a.error}")
                if row.grammar and "<tool_call>" in a.text:
                    lines.append(
                        f"[{report.bench.label}] a malformed call under the tool grammar "
                        f"({question!r}): {a.text!r}"
                    )
    return lines


def dump(reports: list[ModelReport]) -> list[dict[str, Any]]:
    """Every answer, for the record."""
    out: list[dict[str, Any]] = []
    for report in reports:
        limit = report.bench.model.max_response_tokens
        for item in report.validity.checked:
            a = item.answer
            out.append(
                {
                    "model": report.bench.label,
                    "part": "validity",
                    "constraint": a.case,
                    "prompt": a.prompt,
                    "mode": a.mode,
                    "answer": a.text,
                    "tokens": a.tokens,
                    "valid": item.valid,
                    "failure": item.failure(limit),
                    "why": item.why,
                }
            )
        if report.jump:
            for jump, texts in report.jump.answers.items():
                for prompt, text in zip(JUMP_PROMPTS, texts, strict=False):
                    out.append(
                        {
                            "model": report.bench.label,
                            "part": "jump-forward " + ("on" if jump else "off"),
                            "prompt": prompt,
                            "answer": text,
                        }
                    )
        for row in report.tools or []:
            for question, _, a in row.answers:
                out.append(
                    {
                        "model": report.bench.label,
                        "part": "tools " + ("with grammar" if row.grammar else "without grammar"),
                        "prompt": question,
                        "answer": a.text,
                        "calls": [
                            {"name": c["name"], "arguments": c["arguments"]} for c in a.calls
                        ],
                        "tokens": a.tokens,
                        "error": a.error,
                    }
                )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=["smollm2", "random", "both"], default="both")
    parser.add_argument("--quick", action="store_true", help="fewer prompts (a smoke test)")
    parser.add_argument("--random-dtype", choices=["auto", "q8", "fp32"], default="auto")
    parser.add_argument("--answers", type=Path, help="write every answer to this JSON file")
    args = parser.parse_args()
    for case in [*SCHEMAS, JUMP_SCHEMA_CASE, TOOL_SCHEMA_CASE]:
        assert case.schema is not None
        jsonschema.Draft202012Validator.check_schema(case.schema)
    started = time.perf_counter()
    reports: list[ModelReport] = []
    labels = ["smollm2", "random"] if args.model == "both" else [args.model]
    for label in labels:
        print(f"\n## {label} (load average {os.getloadavg()[0]:.1f})", flush=True)
        model_started = time.perf_counter()
        if label == "smollm2":
            bench, note = Bench("smollm2", SMOLLM2, "fp32"), "fp32 (the default dtype)"
        else:
            bench, note = pick_random_dtype(args.random_dtype)
        print(f"  dtype {note}; load {bench.load_s:.1f} s", flush=True)
        vocabulary = bench.vocabulary_ms()
        print(
            f"  vocabulary preparation {vocabulary:.0f} ms; the backend's first constrain() "
            f"{bench.first_constrain_ms:.0f} ms",
            flush=True,
        )
        load = os.getloadavg()[0]
        report = ModelReport(bench, note, vocabulary, validity(bench, args.quick))
        report.load = (load, 0.0)
        report.plain_step_ms = bench.plain_step_ms()
        report.refused = refusals(bench)
        if label == "smollm2":
            report.jump = jump_timing(bench, args.quick)
            report.tools = tool_calls(bench, args.quick)
        reports.append(report)
        report.seconds = time.perf_counter() - model_started
        report.load = (report.load[0], os.getloadavg()[0])
        print(f"  {label}: {report.seconds:.0f} s (load average {report.load[1]:.1f})", flush=True)
        bad = failures([report])
        if bad:
            print("\n".join(bad), flush=True)

    print("\n# Results\n")
    for report in reports:
        print(
            f"- {report.bench.label}: dtype {report.dtype_note}; {THREADS} onnxruntime threads; "
            f"regexes checked with {report.validity.regex_checker}; {report.seconds:.0f} s; "
            f"1-minute load average {report.load[0]:.1f} before, {report.load[1]:.1f} after "
            f"({os.cpu_count()} CPUs)"
        )
    print("\n## 1. Validity (every answer parsed and validated)\n")
    print(validity_table(reports))
    invalid = failure_table(reports)
    if invalid:
        print("\nInvalid answers (listed in full below):\n")
        print(invalid)
    print("\nConstraints the runtime refuses (one greedy prompt each):\n")
    print(
        table(
            ["constraint", *[r.bench.label for r in reports]],
            [[c.name, *[r.refused.get(c.name, "") for r in reports]] for c in UNSUPPORTED],
        )
    )
    print("\n## 2. Cost\n")
    print(cost_table(reports))
    print("\nCompile time per constraint (backend.constrain(), before the first token):\n")
    print(compile_table(reports))
    smol = next((r for r in reports if r.bench.label == "smollm2"), None)
    if smol and smol.jump:
        print("\n## 3. Jump-forward (SmolLM2, greedy, long keys)\n")
        print(jump_table(smol.jump))
    if smol and smol.tools:
        print("\n## 4. Tool calls (SmolLM2, sampled topK 40 / temperature 1.0)\n")
        print(tools_table(smol.tools))
    if args.answers:
        args.answers.write_text(json.dumps(dump(reports), indent=1, ensure_ascii=False))
        print(f"\nEvery answer: {args.answers}")
    bad = failures(reports)
    print(f"\nTotal wall time: {time.perf_counter() - started:.0f} s")
    if bad:
        print(f"\n{len(bad)} FAILURE(S):")
        print("\n".join(bad))
        return 1
    print("\nNo failures: every answer valid.")
    return 0


JUMP_SCHEMA_CASE = Case("jump", "", JUMP_SCHEMA)
TOOL_SCHEMA_CASE = Case("tool", "", WEATHER_SCHEMA)

if __name__ == "__main__":
    raise SystemExit(main())
