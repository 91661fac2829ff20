"""The worker protocol: one definition (engine/protocol.py), checked at one place
(engine/wire.py), and the shim's types generated from it (web/src/protocol.js)."""

from __future__ import annotations

import json

import pytest

from py_runtime.devtools.protocol_js import TARGET, generate
from py_runtime.engine import protocol, vocabulary
from py_runtime.engine.errors import PromptAPIError
from py_runtime.engine.wire import decode_reply, decode_request, encode


def test_the_shims_protocol_module_is_generated_from_the_definitions():
    assert TARGET.read_text() == generate(), (
        "web/src/protocol.js is stale: run `python -m py_runtime.devtools.protocol_js`"
    )


def test_shared_tables_agree_with_their_names():
    assert tuple(vocabulary.SAMPLING_MODES) == vocabulary.SAMPLING_MODE_NAMES
    assert tuple(vocabulary.DTYPE_SUFFIXES) == vocabulary.DTYPES
    balanced = vocabulary.SAMPLING_MODES[vocabulary.DEFAULT_SAMPLING_MODE]
    assert vocabulary.PARAMS["defaultTopK"] == balanced.top_k
    assert vocabulary.PARAMS["defaultTemperature"] == balanced.temperature
    assert all(m.top_k <= vocabulary.MAX_TOP_K for m in vocabulary.SAMPLING_MODES.values())
    assert set(protocol.REQUESTS) | set(protocol.REPLIES) == set(protocol.KINDS.values())
    calls = set(protocol.REQUESTS) - {"init", "abort", "settle"}
    assert set(protocol.RESULTS) == calls


def test_legacy_top_k_and_temperature_are_clamped_to_params():
    sampling = vocabulary.sampling_for(None, float("inf"), 9.0)
    assert (sampling.top_k, sampling.temperature) == (vocabulary.MAX_TOP_K, 2.0)
    assert vocabulary.sampling_for(None, 2, None).temperature == 0.7


REQUESTS = [
    {"kind": "init", "config": {"model": "echo", "dtype": "q4", "threads": "2"}},
    {"kind": "availability", "id": 1, "options": {}},
    {"kind": "create", "id": 2, "options": {"initialPrompts": [], "tools": []}, "activation": True},
    {
        "kind": "prompt",
        "id": 3,
        "session": 1,
        "input": [
            {
                "role": "user",
                "content": [{"type": "text", "value": {"kind": "string", "string": "hi"}}],
            }
        ],
        "constraint": {"kind": "regexp", "source": "^a", "flags": ""},
        "omit": False,
    },
    {"kind": "append", "id": 4, "session": 1, "input": "x"},
    {"kind": "measure", "id": 5, "session": 1, "input": "x", "constraint": None, "omit": False},
    {"kind": "clone", "id": 6, "session": 1},
    {"kind": "destroy", "id": 7, "session": 1},
    {"kind": "benchmark", "id": 8, "promptTokens": 16, "decodeTokens": 4},
    {"kind": "abort", "target": 3},
    {"kind": "settle", "target": 3, "keep": True},
]


@pytest.mark.parametrize("message", REQUESTS, ids=[m["kind"] for m in REQUESTS])
def test_every_request_kind_round_trips(message):
    decoded = decode_request(json.dumps(message))
    assert type(decoded) is protocol.REQUESTS[message["kind"]]
    assert json.loads(encode(decoded)) == message


@pytest.mark.parametrize(
    ("message", "detail"),
    [
        ({"kind": "soup", "id": 1}, "unknown message kind 'soup'"),
        ({"id": 1}, "unknown message kind None"),
        ({"kind": "clone", "id": 1}, "clone.session is missing"),
        ({"kind": "clone", "id": 1, "session": "1"}, "clone.session is not an integer"),
        (
            {"kind": "clone", "id": 1, "session": 1, "extra": 0},
            "clone has an unknown member 'extra'",
        ),
        ({"kind": "settle", "target": 1, "keep": 1}, "settle.keep is not a boolean"),
        (
            {"kind": "init", "config": {"device": "gpu"}},
            "init.config.device is 'gpu', not one of ['wasm', 'webgpu']",
        ),
        (
            {
                "kind": "append",
                "id": 1,
                "session": 1,
                "input": [
                    {"role": "user", "content": [{"type": "text", "value": {"kind": "string"}}]}
                ],
            },
            "append.input[0].content[0].value.string is missing",
        ),
    ],
)
def test_a_malformed_request_names_what_is_wrong(message, detail):
    with pytest.raises(PromptAPIError) as raised:
        decode_request(json.dumps(message))
    assert raised.value.name == "OperationError"
    assert raised.value.message == f"The runtime received a malformed message: {detail}."


def test_replies_are_checked_too():
    chunk = {
        "kind": "chunk",
        "id": 1,
        "chunk": {"kind": "tool-call", "callId": "c", "name": "t", "arguments": None},
    }
    assert json.loads(encode(decode_reply(json.dumps(chunk)))) == chunk
    with pytest.raises(ValueError, match="throw.error.message is missing"):
        decode_reply(json.dumps({"kind": "throw", "id": 1, "error": {"name": "TypeError"}}))
