"""Hypothesis strategies for the data the shim sends the engine (protocol.py's shapes).

"Shim-faithful" strategies make only what web/src/convert.js, tools.js and webidl.js
can produce (every probe outcome included: a getter that threw, a schema whose
``type`` is not "object", a value JSON cannot hold, a ``toJSON`` giving anything);
``mutated`` and ``json_texts`` go beyond, for the wire decoder.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from py_runtime.engine import vocabulary
from py_runtime.engine.protocol import REQUESTS

MESSAGE_TYPES = list(vocabulary.MESSAGE_TYPES)
ROLES = list(vocabulary.ROLES)
SAMPLING_MODES = list(vocabulary.SAMPLING_MODE_NAMES)
TRIGGERS = ["<GenerateSimpleToolCalls>", "<GenerateMultipleToolCalls>"]

#: Strings that mean something to a model, a template or a parser.
SPECIAL_STRINGS = [
    "",
    " ",
    "ping",
    *TRIGGERS,
    "<GenerateSimpleToolCalls>after",
    'Args: {"city": "Paris"}',
    "Args: {",
    "Args: {}}",
    "Args: [1]",
    "What is the weather like in Paris today?",
    "Hello!",
    "What is the capital of France?",
    "<tool_call>",
    '<tool_call>\n{"name": "get_weather", "arguments": {"location": "Paris"}}\n</tool_call>',
    "</tool_call>",
    "<tool_response>",
    "<|im_start|>",
    "<|im_end|>",
    "<|endoftext|>",
    "{{ 7 * 7 }}",
    "{% raw %}",
    "{%",
    "\x00",
    "\ud800",
    "\udfff",
    "\U0001f600",
    "e\u0301",
    "\u2028\u2029",
    "\r\n",
    '{"a": 1}',
    "[1, 2]",
    "null",
    "NaN",
]

characters = st.characters(codec=None, exclude_categories=())  # lone surrogates too
short_text = st.text(characters, max_size=24)
strings = st.one_of(
    st.sampled_from(SPECIAL_STRINGS),
    short_text,
    # Long ones: the echo model's window is 1000 UTF-8 bytes, the fixture's 2048 tokens.
    st.builds(
        lambda s, n: (s or "x") * n,
        st.sampled_from(["a", "\U0001f600", "ab "]),
        st.integers(100, 2500),
    ),
)
names = st.one_of(
    st.sampled_from(["get_weather", "getWeather", "a", "", "x y", "get_weather"]), short_text
)

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    short_text,
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(short_text, inner, max_size=4)
    ),
    max_leaves=12,
)
json_objects = st.dictionaries(short_text, json_values, max_size=5)


def deep_text(depth: int, array: bool) -> str:
    """JSON text of a value ``depth`` levels deep (``JSON.stringify`` writes any depth)."""
    if array:
        return "[" * depth + "1" + "]" * depth
    return '{"a":' * depth + "1" + "}" * depth


def to_json(value: Any) -> str:
    """JSON text as ``JSON.stringify`` writes it (no spaces; not ASCII-only)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


json_texts_of = lambda values: st.builds(to_json, values)  # noqa: E731
deep_texts = st.builds(deep_text, st.sampled_from([50, 200, 900, 3000, 20000]), st.booleans())
#: What ``JSON.stringify`` may give for a page value (a toJSON may return anything).
serialised = st.one_of(json_texts_of(json_values), json_texts_of(json_values), deep_texts)

# -- probes --------------------------------------------------------------------

threw = st.builds(lambda i: {"threw": i}, st.integers(0, 3))


@st.composite
def schema_probes(draw: st.DrawFn) -> dict[str, Any]:
    """``probeSchema``: the steps in order, stopping at the first that fails."""
    probe: dict[str, Any] = {}
    probe["type"] = draw(st.one_of(st.just("object"), st.just("other"), threw))
    if probe["type"] != "object":
        return probe
    probe["properties"] = draw(
        st.one_of(st.sampled_from(["undefined", "object", "object", "other"]), threw)
    )
    if probe["properties"] not in ("undefined", "object"):
        return probe
    probe["required"] = draw(
        st.one_of(st.sampled_from(["undefined", "array", "array", "other"]), threw)
    )
    if probe["required"] not in ("undefined", "array"):
        return probe
    # JSON.stringify of the schema: usually an object (the weather tool's, or any), but a
    # toJSON may give any value (or undefined: null), and a getter may throw.
    weather = {
        "type": "object",
        "properties": {"location": {"type": "string", "description": "City name"}},
        "required": ["location"],
    }
    probe["json"] = draw(
        st.one_of(
            st.just(to_json(weather)),
            st.builds(lambda p: to_json({"type": "object", "properties": p}), json_objects),
            st.builds(to_json, response_schemas),
            serialised,
            st.none(),
            threw,
        )
    )
    return probe


tool_descriptions = st.one_of(
    st.sampled_from(
        [
            "Get the current weather for a location",
            'Get the weather. Args: {"city": "Paris"}',
            "Args: {",
            "",
        ]
    ),
    strings,
)
tools = st.fixed_dictionaries(
    {"name": names, "description": tool_descriptions, "inputSchema": schema_probes()}
)
#: A declaration that passes the options algorithm (a JSON object for a schema).
valid_schema_probes = st.builds(
    lambda schema, required: {
        "type": "object",
        "properties": "object",
        "required": required,
        "json": to_json(schema),
    },
    st.one_of(
        st.builds(lambda p: {"type": "object", "properties": p}, json_objects),
        st.builds(
            lambda p: {"type": "object", "properties": p},
            st.dictionaries(short_text, st.deferred(lambda: response_schemas), max_size=3),
        ),
        st.just(
            {
                "type": "object",
                "properties": {"location": {"type": "string"}},
                "required": ["location"],
            }
        ),
    ),
    st.sampled_from(["undefined", "array"]),
)
valid_tools = st.fixed_dictionaries(
    {
        "name": names.filter(bool),
        "description": tool_descriptions.filter(bool),
        "inputSchema": valid_schema_probes,
    }
)
valid_tool_lists = st.lists(valid_tools, max_size=3, unique_by=lambda t: t["name"])


def language_tags() -> st.SearchStrategy[dict[str, Any]]:
    valid = st.sampled_from(["en", "en-US", "en-GB", "fr", "ja", "de-DE", "zh-Hant-TW", "es-419"])
    return st.one_of(
        st.builds(lambda t: {"tag": t, "canonical": t}, valid),
        st.builds(
            lambda t: {"tag": t, "canonical": None}, st.sampled_from(["", "123", "en_US", "!"])
        ),
        st.builds(lambda t: {"tag": t, "canonical": t}, short_text),
    )


expected = st.builds(
    lambda t, langs: {"type": t, **({} if langs is None else {"languages": langs})},
    st.sampled_from(MESSAGE_TYPES),
    st.one_of(st.none(), st.lists(language_tags(), max_size=3)),
)
valid_expected = st.builds(
    lambda t, langs: {"type": t, **({} if langs is None else {"languages": langs})},
    st.sampled_from(MESSAGE_TYPES),
    st.one_of(
        st.none(),
        st.lists(
            st.builds(
                lambda t: {"tag": t, "canonical": t}, st.sampled_from(["en", "en-US", "en-GB"])
            ),
            max_size=2,
        ),
    ),
)

#: ``wireDouble(toDouble(x))``: a finite number, or Infinity/NaN as strings.
wire_doubles = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(-(2**53), 2**53),
    st.sampled_from(["NaN", "Infinity", "-Infinity"]),
)

# -- message values ---------------------------------------------------------------

string_values = st.builds(lambda s: {"kind": "string", "string": s}, strings)
media_values = st.builds(
    lambda kind, decoded: {"kind": kind, **({} if decoded is None else {"decoded": decoded})},
    st.sampled_from(["blob", "image-source", "audio-buffer", "buffer-source"]),
    st.one_of(st.none(), st.booleans()),
)


@st.composite
def argument_probes(draw: st.DrawFn) -> dict[str, Any] | None:
    """A ``LanguageModelToolCall``'s arguments as its describer probes them."""
    kind = draw(st.sampled_from(["object", "object", "array", "platform", "toJSON", "none"]))
    if kind == "none":
        return None
    if kind == "array":
        return {
            "isArray": True,
            "platform": False,
            "json": to_json(draw(st.lists(json_values, max_size=3))),
        }
    if kind == "platform":
        return {"isArray": False, "platform": True, "json": draw(st.sampled_from(["{}", None]))}
    if kind == "toJSON":  # toJSON gave anything, or it threw / a cycle (null)
        return {"isArray": False, "platform": False, "json": draw(st.one_of(serialised, st.none()))}
    return {"isArray": False, "platform": False, "json": to_json(draw(json_objects))}


tool_call_values = st.builds(
    lambda call_id, name, arguments: {
        "kind": "tool-call",
        "callId": call_id,
        "name": name,
        "arguments": arguments,
    },
    names,
    names,
    argument_probes(),
)


@st.composite
def any_values(draw: st.DrawFn) -> dict[str, Any]:
    """``describeAny``: a string, or a kind and JSON text (null when it cannot be)."""
    kind = draw(st.sampled_from(["string", "array", "object", "primitive", "platform"]))
    if kind == "string":
        return draw(string_values)
    if kind == "platform":
        return {"kind": "platform", "json": None}
    if kind == "array":
        text = draw(st.one_of(json_texts_of(st.lists(json_values, max_size=3)), st.none()))
    elif kind == "object":
        text = draw(st.one_of(json_texts_of(json_objects), serialised, st.none()))
    else:
        text = draw(st.one_of(json_texts_of(json_scalars), st.none()))
    return {"kind": kind, "json": text}


result_items = st.builds(
    lambda t, v: {"type": t, "value": v},
    st.sampled_from(["text", "text", "object", "image", "audio"]),
    any_values(),
)
tool_success_values = st.builds(
    lambda call_id, name, result: {
        "kind": "tool-success",
        "callId": call_id,
        "name": name,
        "result": result,
    },
    names,
    names,
    st.lists(result_items, max_size=3),
)
tool_error_values = st.builds(
    lambda call_id, name, message: {
        "kind": "tool-error",
        "callId": call_id,
        "name": name,
        "errorMessage": message,
    },
    names,
    names,
    strings,
)
message_values = st.one_of(
    string_values, media_values, tool_call_values, tool_success_values, tool_error_values
)


@st.composite
def contents(draw: st.DrawFn) -> dict[str, Any]:
    """A content part; its value usually fits its type (what the fuzz must get past)."""
    kind = draw(st.sampled_from(MESSAGE_TYPES))
    fitting = {
        "text": string_values,
        "image": media_values,
        "audio": media_values,
        "tool-call": tool_call_values,
        "tool-response": st.one_of(tool_success_values, tool_error_values),
    }[kind]
    value = draw(st.one_of(fitting, fitting, message_values))
    return {"type": kind, "value": value}


messages = st.builds(
    lambda role, content, prefix: {
        "role": role,
        "content": content,
        **({} if prefix is None else {"prefix": prefix}),
    },
    st.sampled_from(ROLES),
    st.one_of(strings, st.lists(contents(), max_size=4)),
    st.one_of(st.none(), st.booleans()),
)
#: Parts a role may hold (tool calls in assistant turns, responses in user turns).
ROLE_PARTS = {
    "system": ["text"],
    "user": ["text", "image", "audio", "tool-response"],
    "assistant": ["text", "tool-call"],
}


@st.composite
def valid_messages(draw: st.DrawFn, role: str | None = None) -> dict[str, Any]:
    """A message whose parts fit its role (their values may still fail deeper checks)."""
    role = role or draw(st.sampled_from(["user", "user", "assistant", "system"]))
    if draw(st.booleans()):
        return {"role": role, "content": draw(strings)}
    parts = []
    for kind in draw(st.lists(st.sampled_from(ROLE_PARTS[role]), max_size=3)):
        value = {
            "text": string_values,
            "image": media_values,
            "audio": media_values,
            "tool-call": tool_call_values,
            "tool-response": st.one_of(tool_success_values, tool_error_values),
        }[kind]
        parts.append({"type": kind, "value": draw(value)})
    return {"role": role, "content": parts}


@st.composite
def valid_message_lists(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A system turn only first, and a prefix only as the last assistant turn."""
    turns = []
    if draw(st.integers(0, 3)) == 0:
        turns.append(draw(valid_messages("system")))
    turns.extend(
        draw(st.lists(valid_messages().filter(lambda m: m["role"] != "system"), max_size=3))
    )
    if turns and turns[-1]["role"] == "assistant" and draw(st.booleans()):
        turns[-1]["prefix"] = True
    return turns


prompts = st.one_of(
    strings, strings, valid_message_lists(), valid_message_lists(), st.lists(messages, max_size=4)
)

# -- response constraints -----------------------------------------------------------

JSON_TYPES = ["string", "number", "integer", "boolean", "object", "array", "null"]
KEYWORDS = [
    "type", "properties", "required", "additionalProperties", "enum", "const", "items",
    "prefixItems", "minItems", "maxItems", "minimum", "maximum", "exclusiveMinimum",
    "exclusiveMaximum", "minLength", "maxLength", "pattern", "format", "$ref", "$defs",
    "definitions", "anyOf", "oneOf", "allOf", "not", "multipleOf", "uniqueItems",
    "patternProperties", "contains", "propertyNames", "title", "description", "$schema",
]  # fmt: skip
FORMATS = ["date", "time", "date-time", "duration", "email", "uuid", "ipv4", "ipv6", "uri", ""]
PATTERNS = [
    "^\\d{5}$", "[a-z]+", "(a|b)*", "\\p{L}", "(?=a)", "\\1", "[", "a{2,1}", "\\", ".*",
    "^$", "[^\\s]", "\\bword", "a|", "(?<n>x)\\k<n>", "\\u{1F600}", "[\\d-z]", "x**",
]  # fmt: skip


def _keyword_value(key: str, schema: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A value for ``key``: usually of the right shape, sometimes anything."""
    good: dict[str, st.SearchStrategy[Any]] = {
        "type": st.one_of(
            st.sampled_from(JSON_TYPES), st.lists(st.sampled_from(JSON_TYPES), max_size=3)
        ),
        "properties": st.dictionaries(short_text, schema, max_size=3),
        "$defs": st.dictionaries(short_text, schema, max_size=2),
        "definitions": st.dictionaries(short_text, schema, max_size=2),
        "patternProperties": st.dictionaries(short_text, schema, max_size=2),
        "required": st.lists(short_text, max_size=3),
        "additionalProperties": st.one_of(st.booleans(), schema),
        "items": st.one_of(st.booleans(), schema),
        "not": schema,
        "contains": schema,
        "propertyNames": schema,
        "prefixItems": st.lists(schema, max_size=3),
        "anyOf": st.lists(schema, max_size=3),
        "oneOf": st.lists(schema, max_size=3),
        "allOf": st.lists(schema, max_size=3),
        "enum": st.lists(json_values, max_size=4),
        "const": json_values,
        "pattern": st.one_of(st.sampled_from(PATTERNS), short_text),
        "format": st.sampled_from(FORMATS),
        "$ref": st.sampled_from(["#", "#/$defs/a", "#/definitions/x", "http://x/y", "#/nope"]),
    }
    numeric = st.one_of(
        st.integers(-2000, 2000), st.integers(-(2**64), 2**64), st.floats(-1e6, 1e6), st.just(1e300)
    )
    fitting = good.get(key, numeric)
    return st.one_of(fitting, fitting, fitting, json_values)


def _extend(schema: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.lists(st.sampled_from(KEYWORDS), max_size=5, unique=True).flatmap(
        lambda keys: st.fixed_dictionaries({k: _keyword_value(k, schema) for k in keys})
    )


response_schemas = st.recursive(
    st.one_of(
        st.builds(lambda t: {"type": t}, st.sampled_from([*JSON_TYPES, "foo"])),
        st.booleans(),
        st.just({}),
        json_values,
    ),
    _extend,
    max_leaves=10,
)
REGEX_SOURCES = [
    *PATTERNS, "(red|green|blue)", "\\d{4}-\\d{2}-\\d{2}", "^(yes|no)$", "[A-Z][a-z]{0,6}",
    "(?:)", "a{0,100000}", "[\\u{10000}-\\u{10FFFF}]", "\\cJ", "[\\b]", "\\0", "\\x41",
]  # fmt: skip
response_constraints = st.one_of(
    st.builds(lambda s: {"kind": "json-schema", "json": to_json(s)}, response_schemas),
    st.builds(lambda s: {"kind": "json-schema", "json": s}, serialised),
    st.builds(
        lambda source, flags: {"kind": "regexp", "source": source, "flags": flags},
        st.one_of(st.sampled_from(REGEX_SOURCES), short_text),
        st.one_of(
            st.lists(st.sampled_from("dgimsuvy"), unique=True, max_size=4).map("".join),
            short_text,
        ),
    ),
)

#: Constraints a grammar library can hold (bounded, so answers end within the cap).
GOOD_SCHEMAS: list[Any] = [
    {"type": "boolean"},
    {"type": "null"},
    {"type": "integer", "minimum": -5, "maximum": 5},
    {"type": "string", "maxLength": 8},
    {"enum": ["red", "green", 3, None]},
    {"const": {"a": [1, 2]}},
    {"type": "array", "items": {"type": "boolean"}, "minItems": 1, "maxItems": 3},
    {
        "type": "object",
        "properties": {"name": {"type": "string", "maxLength": 6}, "ok": {"type": "boolean"}},
        "required": ["name", "ok"],
        "additionalProperties": False,
    },
    {"type": "string", "format": "date"},
    {"type": "string", "pattern": "^[a-c]{1,4}$"},
    {"anyOf": [{"type": "integer", "minimum": 0, "maximum": 9}, {"type": "null"}]},
    {
        "$defs": {"b": {"type": "boolean"}},
        "type": "array",
        "items": {"$ref": "#/$defs/b"},
        "maxItems": 2,
    },
]
GOOD_REGEXPS = [
    ("(red|green|blue)", "i"),
    ("\\d{4}-\\d{2}", ""),
    ("^(yes|no)$", ""),
    ("[a-z]{1,5}", "u"),
]
good_constraints = st.one_of(
    st.builds(lambda v: {"kind": "json-schema", "json": to_json(v)}, st.sampled_from(GOOD_SCHEMAS)),
    st.builds(
        lambda rf: {"kind": "regexp", "source": rf[0], "flags": rf[1]},
        st.sampled_from(GOOD_REGEXPS),
    ),
)

# -- options -----------------------------------------------------------------------


valid_outputs = st.builds(lambda t: {"type": t}, st.sampled_from(["text", "tool-call"]))


@st.composite
def core_options(draw: st.DrawFn) -> dict[str, Any]:
    """``LanguageModelCreateCoreOptions`` as ``convertCoreOptions`` sends them."""
    options: dict[str, Any] = {}
    wild = draw(st.integers(0, 3)) == 0  # else options the algorithm accepts, mostly
    expecteds = expected if wild else valid_expected
    if draw(st.booleans()):
        options["expectedInputs"] = draw(st.lists(expecteds, max_size=3))
    declared = draw(st.lists(tools, max_size=3) if wild else valid_tool_lists)
    if declared or draw(st.booleans()):
        outputs = draw(st.lists(expected if wild else valid_outputs, max_size=3))
        if (declared and not wild) or draw(st.booleans()):
            outputs.append({"type": "tool-call"})
        options["expectedOutputs"] = outputs
    if draw(st.integers(0, 3)) == 0:
        options["samplingMode"] = draw(st.sampled_from(SAMPLING_MODES))
    for key in ("topK", "temperature"):  # extension contexts only, but the wire takes them
        if draw(st.integers(0, 5)) == 0 and (wild or "samplingMode" not in options):
            options[key] = draw(wire_doubles)
    options["tools"] = declared
    return options


@st.composite
def create_options(draw: st.DrawFn) -> dict[str, Any]:
    options = draw(core_options())
    options["initialPrompts"] = draw(
        st.one_of(st.just([]), st.just([]), valid_message_lists(), st.lists(messages, max_size=3))
    )
    return options


# -- beyond the shim: for the wire decoder -------------------------------------------


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into a JSON value (iteratively, so deep values are fine)."""
    found: list[tuple[Any, ...]] = []
    stack = [(value, path)]
    while stack and len(found) < 2000:
        item, where = stack.pop()
        found.append(where)
        if isinstance(item, dict):
            stack.extend((v, (*where, k)) for k, v in item.items())
        elif isinstance(item, list):
            stack.extend((v, (*where, i)) for i, v in enumerate(item))
    return found


@st.composite
def mutated(draw: st.DrawFn, requests: st.SearchStrategy[dict[str, Any]]) -> dict[str, Any]:
    """A request with one to three members replaced, removed or added."""
    request = json.loads(json.dumps(draw(requests)))
    for _ in range(draw(st.integers(1, 3))):
        paths = _paths(request)
        where = draw(st.sampled_from(paths))
        if not where:
            continue
        parent = request
        for step in where[:-1]:
            parent = parent[step]
        action = draw(st.sampled_from(["replace", "remove", "add"]))
        if action == "replace":
            parent[where[-1]] = draw(
                st.one_of(json_values, st.sampled_from([-1, 0, 2**40, 1.5, "", [], {}]))
            )
        elif action == "remove":
            del parent[where[-1]]
        elif isinstance(parent, dict):
            parent[draw(short_text)] = draw(json_values)
        else:
            parent.append(draw(json_values))
    return request


REQUEST_KINDS = sorted(REQUESTS)
json_texts = st.one_of(
    st.text(characters, max_size=40),
    st.builds(to_json, json_values),
    st.builds(
        lambda kind, rest: to_json({"kind": kind, **rest}),
        st.sampled_from(REQUEST_KINDS),
        json_objects,
    ),
    st.builds(lambda n: "[" * n + "]" * n, st.sampled_from([10, 1000, 5000, 100000])),
    st.builds(
        lambda n: '{"kind": "create", "id": 7, "options": ' + "[" * n + "]" * n + "}",
        st.sampled_from([1000, 100000]),
    ),
    st.sampled_from(
        [
            "",
            "null",
            "1e400",
            "NaN",
            "-Infinity",
            '{"kind": "prompt", "id": 1e400}',
            '{"id": 1, "id": 2}',
            "\ud800",
        ]
    ),
)
