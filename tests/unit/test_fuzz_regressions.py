"""Regressions for the bugs the fuzzers found (tests/reliability/): each was an internal
error (a Python exception reaching the page as "internal error"), a hang, or a session
left unusable, and is now one of the spec's errors or works."""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any

import pytest
from builders import json_schema, tool, tool_call, tool_options, tool_success, user
from hypothesis import given, settings
from hypothesis import strategies as st
from test_causal_lm import FIXTURE, GREEDY, WEATHER, Harness, text_of

from py_runtime.engine import vocabulary
from py_runtime.engine.errors import PromptAPIError
from py_runtime.engine.json_schema import enforceable
from py_runtime.engine.options import validate_and_canonicalize_language_model_options
from py_runtime.engine.runtime import Runtime
from py_runtime.engine.wire import MAX_JSON_DEPTH, json_depth
from py_runtime.hosts.cpython import FolderFiles
from py_runtime.models.causal_lm import CausalLM
from py_runtime.models.echo import PREFIX, SIMPLE_TRIGGER, argument_hint


def error_of(call: Any) -> PromptAPIError:
    with pytest.raises(PromptAPIError) as caught:
        call()
    return caught.value


def deep_text(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


# -- sampling: unrestricted doubles --------------------------------------------------------


def test_nan_and_infinite_top_k_and_temperature_make_a_session(echo: Any) -> None:
    """NaN topK was a ValueError, -Infinity an OverflowError (int() of them)."""
    for top_k, temperature in (("NaN", "NaN"), ("-Infinity", "-Infinity"), ("Infinity", 5)):
        session = echo.create(topK=top_k, temperature=temperature)
        assert echo.prompt(session, "hi").text == PREFIX + "hi"
    assert vocabulary.sampling_for(None, math.nan, math.nan) == vocabulary.Sampling(8, 0.7)
    assert vocabulary.sampling_for(None, -math.inf, -math.inf) == vocabulary.Sampling(1, 0.0)


def test_a_double_string_the_shim_never_sends_is_a_malformed_message() -> None:
    """float("abc") was a ValueError: only wireDouble's three strings are numbers."""
    error = error_of(lambda: validate_and_canonicalize_language_model_options({"topK": "abc"}))
    assert error.name == "OperationError"
    assert "malformed" in error.message


def test_a_tiny_temperature_samples_greedily() -> None:
    """1e-176 divided the logits into infinities: NaN probabilities in every prompt."""
    assert vocabulary.sampling_for(None, None, 1e-176).temperature == 0.0
    assert vocabulary.sampling_for(None, None, 0.5).temperature == 0.5


# -- JSON nested deeper than the parser's stack ---------------------------------------------


def test_json_depth_is_counted_without_parsing() -> None:
    assert json_depth('[[1, {"a": "[[[{"}]]') == 3
    assert json_depth('"{\\"["') == 0
    assert json_depth("[" * 100000 + "]" * 100000) == 100000


def parsed_depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max(map(parsed_depth, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(parsed_depth, value.values()), default=0)
    return 0


json_trees = st.recursive(
    st.none() | st.integers() | st.text(st.sampled_from('ab"\\[]{}\n\u00e9')),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None, database=None)
@given(json_trees, st.booleans())
def test_json_depth_is_the_parsed_depth(value: Any, ascii_only: bool) -> None:
    """Strings full of quotes, backslashes and brackets included."""
    assert json_depth(json.dumps(value, ensure_ascii=ascii_only)) == parsed_depth(value)


def test_a_deep_response_constraint_is_not_supported(echo: Any) -> None:
    """A RecursionError in json.loads before."""
    session = echo.create()
    deep = {"kind": "json-schema", "json": deep_text(5000)}
    assert error_of(lambda: echo.prompt(session, "hi", constraint=deep)).name == "NotSupportedError"
    assert error_of(lambda: echo.measure(session, "hi", deep)).name == "NotSupportedError"
    shallow = {"kind": "json-schema", "json": deep_text(MAX_JSON_DEPTH - 1)}
    echo.prompt(session, "hi", constraint=shallow)  # within the limit: as before
    assert echo.prompt(session, "again").text == "again"


def test_deep_tool_values_are_not_supported(echo: Any) -> None:
    session = echo.create(expectedInputs=[{"type": "tool-response"}])
    deep_call = [
        tool_call(arguments={"isArray": False, "platform": False, "json": deep_text(3000)})
    ]
    message = [{"role": "assistant", "content": deep_call}]
    assert error_of(lambda: echo.prompt(session, message)).name == "NotSupportedError"
    result = [{"type": "object", "value": {"kind": "object", "json": deep_text(3000)}}]
    message = [user([tool_success(result=result)])]
    assert error_of(lambda: echo.prompt(session, message)).name == "NotSupportedError"
    assert echo.prompt(session, "ok").text == PREFIX + "ok"


def test_a_deep_input_schema_is_not_supported(echo: Any) -> None:
    options = tool_options(tool(json=deep_text(3000)))
    assert error_of(lambda: echo.create(**options)).name == "NotSupportedError"


def test_a_deep_message_is_dropped_and_receive_does_not_raise(worker: Any) -> None:
    """The endpoint re-parsed the text for its id: a RecursionError out of receive()."""
    deep = '{"kind": "create", "id": 7, "options": ' + "[" * 100000 + "]" * 100000 + "}"
    worker.endpoint.receive(deep)
    assert worker.posted == []
    worker.send(id=8, kind="create", options={}, activation=True)
    assert worker.last(8)["kind"] == "return"


def test_a_deep_tool_description_hint_is_no_hint() -> None:
    """The echo model parses ``Args: {...}`` from descriptions: a RecursionError before."""
    assert argument_hint('Args: {"a":' + "[" * 5000 + "}") == {}


# -- response schemas whose keywords have values of the wrong type ---------------------------


@pytest.mark.parametrize(
    "schema",
    [{"type": {}}, {"type": [[]]}, {"type": ["string", {"a": 1}]}, {"anyOf": None}],
    ids=json.dumps,
)
def test_a_schema_of_the_wrong_shape_is_not_supported(echo: Any, schema: Any) -> None:
    """An unhashable ``type`` was a TypeError in the set lookup."""
    session = echo.create()
    call = lambda: echo.prompt(session, "hi", constraint=json_schema(schema))  # noqa: E731
    assert error_of(call).name == "NotSupportedError"
    prefixed = [{"role": "assistant", "content": "{", "prefix": True}]
    call = lambda: echo.prompt(session, prefixed, constraint=json_schema(schema))  # noqa: E731
    assert error_of(call).name == "NotSupportedError"


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "pattern": 5},
        {"type": "string", "format": []},
        {"type": "string", "format": {"a": 1}},
        {"enum": 5},
        {"type": "string", "minLength": "1"},
        {"type": "array", "maxItems": -1},
        {"anyOf": None},
        {"prefixItems": {"a": 1}},
        {"properties": None},
        {"properties": [1]},
        {"required": None},
        {"type": "integer", "minimum": math.inf},
    ],
    ids=str,
)
def test_what_a_grammar_cannot_read_is_not_supported(schema: Any) -> None:
    """Each was a TypeError or AttributeError (``enforceable`` ran before the shape check)."""
    assert error_of(lambda: enforceable(schema)).name == "NotSupportedError"


# -- the endpoint -----------------------------------------------------------------------


def test_a_reused_request_id_is_dropped(worker: Any) -> None:
    """A second call under a running call's id overwrote its control: the first never
    settled (a hang) and its task ended in a KeyError."""
    worker.send(id=1, kind="create", options={}, activation=True)
    prompt = {"id": 2, "kind": "prompt", "session": 1, "input": "a", "constraint": None}
    worker.send_all({**prompt, "omit": False}, {**prompt, "omit": False})
    assert [r["kind"] for r in worker.replies(2)] == ["chunk", "return"]
    worker.send(kind="settle", target=2, keep=True)
    assert worker.endpoint._controls == {}


# -- options: probes the shim never sends ------------------------------------------------


@pytest.mark.parametrize(
    "probe",
    [{"type": "object"}, {"type": "object", "properties": "object", "required": "array"}],
)
def test_a_schema_probe_missing_a_step_is_malformed(probe: dict[str, Any]) -> None:
    """A KeyError before: the wire allows the later steps to be absent."""
    options = tool_options({"name": "t", "description": "d", "inputSchema": probe})
    error = error_of(lambda: validate_and_canonicalize_language_model_options(options))
    assert (error.name, "malformed" in error.message) == ("OperationError", True)


def test_probe_json_that_is_not_json_is_malformed(echo: Any) -> None:
    """A ValueError from json.loads before."""
    options = tool_options(tool(json="{"))
    error = error_of(lambda: validate_and_canonicalize_language_model_options(options))
    assert error.name == "OperationError"
    session = echo.create()
    broken = {"kind": "json-schema", "json": "{"}
    assert error_of(lambda: echo.prompt(session, "x", constraint=broken)).name == "OperationError"


# -- the fixture model -------------------------------------------------------------------


@pytest.fixture(scope="module")
def fixture() -> Harness:
    return Harness("q4")


def weather_with(schema: Any) -> dict[str, Any]:
    other = {
        "name": "other",
        "description": "Another tool",
        "inputSchema": {**WEATHER["inputSchema"], "json": json.dumps(schema)},
    }
    return {
        **GREEDY,
        "expectedInputs": [{"type": "tool-response"}],
        "expectedOutputs": [{"type": "tool-call"}],
        "tools": [WEATHER, other],
    }


@pytest.mark.parametrize(
    "schema",
    [
        # Accepted by the options algorithm and by ``enforceable``, refused by llguidance.
        {"type": "object", "$ref": "#", "properties": {"a": {"$ref": "#"}}},
        # A TypeError inside the tool grammar before.
        {"type": "object", "properties": {"a": {"anyOf": None}}},
    ],
    ids=["uncompilable", "null-anyOf"],
)
def test_a_tool_schema_the_grammar_cannot_hold_leaves_the_session_usable(
    fixture: Harness, schema: Any
) -> None:
    """Every prompt of such a session failed; now its tools' arguments are held loosely
    (a second declaration changes the prompt: the fixture answers noise, but answers)."""
    session = fixture.create(weather_with(schema))
    for question in ("Hello!", "What is the weather like in Paris today?"):
        assert isinstance(text_of(fixture.prompt(session, question)), str)


def test_a_tiny_temperature_answers_on_the_fixture(fixture: Harness) -> None:
    session = fixture.create({"temperature": 1e-176, "tools": [], "initialPrompts": []})
    assert text_of(fixture.prompt(session, "Hello!")) == "Hello! How can I help you today?"


def test_a_backend_that_cannot_start_is_an_operation_error() -> None:
    """ONNX Runtime Web's "no available backend" was an internal error (JsException)."""

    async def failing(config: dict[str, Any], on_progress: Any) -> Any:
        raise RuntimeError("no available backend found")

    runtime = Runtime(CausalLM(FolderFiles(FIXTURE), failing))
    with pytest.raises(PromptAPIError) as caught:
        asyncio.run(runtime.create({}, True, lambda _: None, lambda: False))
    assert caught.value.name == "OperationError"
    assert "no available backend found" in caught.value.message


def test_the_echo_trigger_still_calls_after_the_fixes(echo: Any) -> None:
    session = echo.create(**tool_options(tool(description='Weather. Args: {"city": "Paris"}')))
    calls = echo.prompt(session, SIMPLE_TRIGGER).tool_calls
    assert [c["arguments"] for c in calls] == [{"city": "Paris"}]


def test_jump_forward_waits_while_the_answer_is_inside_a_character(
    fixture: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sampled token that ends inside a UTF-8 character (byte 0xC2 of U+0097) left the
    grammar's forced bytes starting with the character's last byte; as text they lost
    it, the matcher rejected the forced tokens: an OperationError ("The grammar rejected
    the text it forced"). Now the rest of the character is sampled first (a draft the
    grammar rejects is only corrected since speculate() verifies drafts)."""
    odd = {"name": "\x97n", "description": "Odd", "inputSchema": WEATHER["inputSchema"]}
    session = fixture.create({**GREEDY, **tool_options(WEATHER, odd)})
    tokenizer = fixture.model.tokenizer
    assert tokenizer is not None
    lead_byte = tokenizer.encode("a\x97")[1]  # the byte-level token of 0xC2
    backend = fixture.runtime.session(session).state.backend
    real_accept, real_next, real_speculate = backend.accept, backend.next_token, backend.speculate
    answer: list[int] = []  # the tokens emitted so far
    speculated: list[int] = []  # where in the answer each speculate() started

    async def speculate(cache: int, draft: list[int], sampling: Any) -> tuple[list[int], bool]:
        speculated.append(len(answer))
        ids, pending = await real_speculate(cache, draft, sampling)
        answer.extend(ids)
        return ids, pending

    async def next_token(cache: int, sampling: Any) -> int:
        if tokenizer.decode(answer).endswith('"name": "'):
            # The model "chooses" the odd tool's first byte.
            assert real_accept(cache, [lead_byte])
            answer.append(lead_byte)
            return lead_byte
        token = await real_next(cache, sampling)
        answer.append(token)
        return token

    monkeypatch.setattr(backend, "speculate", speculate)
    monkeypatch.setattr(backend, "next_token", next_token)
    chunks = fixture.prompt(session, "What is the weather like in Paris today?")
    calls = [c for c in chunks if c["kind"] == "tool-call"]
    assert [c["name"] for c in calls] == ["\x97n"]
    # The character's last byte was sampled, not drafted (a draft would be corrected at
    # its first token: the mask allows only that byte).
    assert answer.index(lead_byte) + 1 not in speculated
