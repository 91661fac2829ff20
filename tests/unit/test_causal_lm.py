"""The causal-LM adapter and its generation loop, on the fixture model under onnxruntime.

The fixture (tests/fixtures/tiny-qwen2-toolcall, see its README) was trained to
answer a few conversations exactly under greedy decoding, in every precision.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("onnxruntime")

from py_runtime.engine.errors import Aborted, PromptAPIError  # noqa: E402
from py_runtime.engine.runtime import Runtime  # noqa: E402
from py_runtime.hosts.cpython import local_model  # noqa: E402

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "tiny-qwen2-toolcall"
DTYPES = ["fp32", "fp16", "q8", "int8", "q4", "q4f16"]
SCHEMA = {
    "type": "object",
    "properties": {"location": {"type": "string", "description": "City name"}},
    "required": ["location"],
}
WEATHER = {
    "name": "get_weather",
    "description": "Get the current weather for a location",
    "inputSchema": {
        "type": "object",
        "properties": "object",
        "required": "array",
        "json": json.dumps(SCHEMA),
    },
}
GREEDY = {"samplingMode": "most-predictable"}
WITH_TOOLS = {
    **GREEDY,
    "expectedInputs": [{"type": "tool-response"}],
    "expectedOutputs": [{"type": "tool-call"}],
    "tools": [WEATHER],
}


def tool_success(call_id: str, result: dict[str, Any]) -> list[dict[str, Any]]:
    value = {"kind": "object", "json": json.dumps(result)}
    response = {
        "kind": "tool-success",
        "callId": call_id,
        "name": "get_weather",
        "result": [{"type": "object", "value": value}],
    }
    return [{"role": "user", "content": [{"type": "tool-response", "value": response}]}]


class Harness:
    """A Runtime over the fixture, driven like the worker drives it."""

    def __init__(self, dtype: str, context_cap: int | None = None, folder: Path = FIXTURE) -> None:
        self.model = local_model(folder, dtype, context_cap=context_cap)
        self.runtime = Runtime(self.model)
        self.loop = asyncio.new_event_loop()

    def run(self, coroutine: Any) -> Any:
        return self.loop.run_until_complete(coroutine)

    def create(self, options: dict[str, Any]) -> int:
        return self.run(self.runtime.create(options, True, lambda _: None, lambda: False))[
            "session"
        ]

    def prompt(self, session: int, prompt: Any, stop: Any = lambda: False) -> list[Any]:
        """The chunks a prompt streamed, as they cross the wire."""
        chunks: list[Any] = []

        async def settle(_: Any) -> bool:
            return True

        self.run(self.runtime.prompt(session, prompt, None, False, chunks.append, settle, stop))
        return chunks


@pytest.fixture(scope="module", params=DTYPES)
def harness(request: pytest.FixtureRequest) -> Harness:
    return Harness(request.param)


def text_of(chunks: list[Any]) -> str:
    return "".join(c["text"] for c in chunks if c["kind"] == "text")


def calls_of(chunks: list[Any]) -> list[dict[str, Any]]:
    return [c for c in chunks if c["kind"] == "tool-call"]


def test_plain_questions_are_answered_exactly(harness: Harness) -> None:
    session = harness.create(GREEDY)
    assert text_of(harness.prompt(session, "Hello!")) == "Hello! How can I help you today?"
    session = harness.create(GREEDY)
    answer = text_of(harness.prompt(session, "What is the capital of France?"))
    assert answer == "The capital of France is Paris."


def test_hello_with_a_tool_declared_is_still_text(harness: Harness) -> None:
    chunks = harness.prompt(harness.create(WITH_TOOLS), "Hello!")
    assert all(c["kind"] == "text" for c in chunks)
    assert text_of(chunks) == "Hello! How can I help you today?"


def test_the_full_tool_loop(harness: Harness) -> None:
    session = harness.create(WITH_TOOLS)
    chunks = harness.prompt(session, "What is the weather like in Paris today?")
    (call,) = calls_of(chunks)
    assert text_of(chunks) == ""
    assert call["name"] == "get_weather"
    assert call["arguments"] == {"location": "Paris"}
    assert call["callId"].startswith("call_")
    reply = harness.prompt(
        session, tool_success(call["callId"], {"temperature": 18, "condition": "sunny"})
    )
    assert text_of(reply) == "It is sunny and 18 degrees in Paris."


def test_answers_stream_token_by_token() -> None:
    harness = Harness("fp32")
    chunks = harness.prompt(harness.create(GREEDY), "Hello!")
    assert len(chunks) > 3
    assert text_of(chunks) == "Hello! How can I help you today?"


def test_a_second_turn_prefills_only_the_new_tokens() -> None:
    harness = Harness("fp32")
    session = harness.create(WITH_TOOLS)
    state = harness.runtime.session(session).state
    (call,) = calls_of(harness.prompt(session, "What is the weather like in Paris today?"))
    cached_before = list(state.cached)
    forwarded_before = harness.model.backend.forwarded
    result = {"temperature": 18, "condition": "sunny"}
    harness.prompt(session, tool_success(call["callId"], result))
    # The first turn stays in the cache; only what follows it was run, once each.
    assert state.cached[: len(cached_before)] == cached_before
    forwarded = harness.model.backend.forwarded - forwarded_before
    assert forwarded == len(state.cached) - len(cached_before)
    assert forwarded < len(cached_before)


def test_an_aborted_prompt_leaves_the_session_as_it_was() -> None:
    harness = Harness("fp32")
    session = harness.create(GREEDY)
    harness.prompt(session, "Hello!")
    model_session = harness.runtime.session(session)
    before = (model_session.context_usage, list(model_session.state.cached))
    steps = iter(range(100))
    with pytest.raises(Aborted):
        harness.prompt(session, "What is the capital of France?", stop=lambda: next(steps) > 5)
    assert (model_session.context_usage, model_session.state.cached) == before
    assert harness.model.backend.cache_length(model_session.state.cache) == len(before[1])
    answer = text_of(harness.prompt(session, "What is the capital of France?"))
    assert answer == "The capital of France is Paris."


def test_clone_copies_the_cache_and_is_independent() -> None:
    harness = Harness("fp32")
    session = harness.create(WITH_TOOLS)
    (call,) = calls_of(harness.prompt(session, "What is the weather like in Paris today?"))
    clone = harness.run(harness.runtime.clone(session, lambda: False))["session"]
    original, copy = harness.runtime.session(session).state, harness.runtime.session(clone).state
    assert copy.cache != original.cache and copy.cached == original.cached
    result = tool_success(call["callId"], {"temperature": 18, "condition": "sunny"})
    assert text_of(harness.prompt(clone, result)) == "It is sunny and 18 degrees in Paris."
    assert text_of(harness.prompt(session, result)) == "It is sunny and 18 degrees in Paris."


def test_context_usage_counts_real_tokens() -> None:
    harness = Harness("fp32")
    session = harness.create(GREEDY)
    measured = harness.run(harness.runtime.measure(session, "Hello!", None, False))
    assert 0 < measured < 20
    harness.prompt(session, "Hello!")
    usage = harness.runtime.session(session).context_usage
    assert usage >= measured
    assert harness.runtime.session(session).context_window == 2048


def test_missing_model_files_name_the_file(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{not json")
    harness = Harness.__new__(Harness)
    harness.model = local_model(tmp_path, "fp32")
    harness.runtime = Runtime(harness.model)
    harness.loop = asyncio.new_event_loop()
    from py_runtime.engine.errors import PromptAPIError

    with pytest.raises(PromptAPIError, match="config.json is not valid JSON"):
        harness.create(GREEDY)


# -- one owner of the conversation: the session's history ---------------------------------

WEATHER_Q = "What is the weather like in Paris today?"
SUNNY = {"temperature": 18, "condition": "sunny"}


def hf_tokens(messages: list[Any], tools: list[Any]) -> int:
    """transformers' rendering of a conversation, tokenized by `tokenizers`: a measurement
    that shares nothing with the engine's template renderer or tokenizer."""
    transformers = pytest.importorskip("transformers")
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(FIXTURE))
    from py_runtime.models.causal_lm import merge_prefixes
    from py_runtime.models.hf_messages import messages_to_hf, tool_declarations_to_hf

    text = tokenizer.apply_chat_template(
        messages_to_hf(merge_prefixes(messages)),
        tools=tool_declarations_to_hf(tools) or None,
        tokenize=False,
    )
    return len(tokenizer(text, add_special_tokens=False)["input_ids"])


def test_a_capped_window_holds_over_many_tool_loop_turns() -> None:
    harness = Harness("fp32", context_cap=300)
    session_id = harness.create(WITH_TOOLS)
    session = harness.runtime.session(session_id)
    backend = harness.model.backend
    held: list[int] = []
    forward = backend.forward

    async def watched(cache: int, ids: list[int]) -> None:
        await forward(cache, ids)
        held.append(backend.cache_length(cache))

    backend.forward = watched  # type: ignore[method-assign]
    overflowed = 0

    def check() -> None:
        nonlocal overflowed
        usage = session.context_usage
        assert usage <= 300
        assert max(held) <= 300, "the model held more than the window"
        kept = session.context()
        assert usage == hf_tokens(kept, session.options.tools)
        overflowed += len(kept) < 2 * 12

    for _ in range(12):
        calls = calls_of(harness.prompt(session_id, WEATHER_Q))
        check()
        if calls:
            harness.prompt(session_id, tool_success(calls[0]["callId"], SUNNY))
            check()
    assert overflowed, "the window never overflowed: the test did not test eviction"

    # After a prefill the model holds exactly the kept history: nothing evicted stays.
    async def keep(_: Any) -> bool:
        return True

    harness.run(harness.runtime.append(session_id, "Thanks.", keep, lambda: False))
    rendered = harness.model.render(session.context(), session.options.tools, False)
    assert session.state.cached == harness.model.encode(rendered)
    assert session.context_usage == len(session.state.cached) <= 300


def test_a_prompt_identical_to_an_initial_prompt_does_not_evict_it() -> None:
    harness = Harness("fp32", context_cap=120)
    initial = [{"role": "user", "content": "Hello!"}, {"role": "assistant", "content": "Hi."}]
    session_id = harness.create({**GREEDY, "initialPrompts": initial})
    session = harness.runtime.session(session_id)
    first = harness.model.encode(harness.model.render(session.options.initial_prompts, (), False))
    overflowed = False
    for _ in range(6):
        harness.prompt(session_id, "Hello!")
        overflowed = overflowed or len(session.history) < 2 * 6
        assert session.context()[:2] == session.options.initial_prompts
        assert session.state.cached[: len(first)] == first
    assert overflowed


# -- what generation_config.json asks for, and the response cap ----------------------------


def test_repetition_penalty_divides_positive_and_multiplies_negative_seen_logits() -> None:
    import numpy as np

    from py_runtime.hosts.onnxruntime_backend import apply_repetition_penalty

    logits = np.array([2.0, -2.0, 4.0, 1.0], dtype=np.float32)
    penalized = apply_repetition_penalty(logits, [0, 1, 1], 2.0)
    assert penalized.tolist() == [1.0, -4.0, 4.0, 1.0]
    assert logits.tolist() == [2.0, -2.0, 4.0, 1.0]  # on a copy


def penalized_fixture(tmp_path: Path, penalty: float) -> Path:
    import shutil

    folder = tmp_path / "fixture-penalty"
    shutil.copytree(FIXTURE, folder)
    config = json.loads((folder / "generation_config.json").read_text())
    (folder / "generation_config.json").write_text(
        json.dumps({**config, "repetition_penalty": penalty})
    )
    return folder


def test_the_models_repetition_penalty_is_applied(tmp_path: Path) -> None:
    plain = Harness("fp32")
    penalized = Harness.__new__(Harness)
    penalized.model = local_model(penalized_fixture(tmp_path, 5.0), "fp32")
    penalized.runtime = Runtime(penalized.model)
    penalized.loop = asyncio.new_event_loop()
    session = penalized.create(GREEDY)
    assert penalized.runtime.session(session).state.sampling.repetition_penalty == 5.0
    question = "What is the capital of France?"
    answer = text_of(penalized.prompt(session, question))
    assert answer != text_of(plain.prompt(plain.create(GREEDY), question))
    assert answer  # still an answer, with other tokens than the repeated ones


def advised_fixture(tmp_path: Path, advice: Any) -> Harness:
    import shutil

    folder = tmp_path / "fixture-advised"
    shutil.copytree(FIXTURE, folder)
    (folder / "prompt_api.json").write_text(json.dumps(advice))
    harness = Harness.__new__(Harness)
    harness.model = local_model(folder, "fp32")
    harness.runtime = Runtime(harness.model)
    harness.loop = asyncio.new_event_loop()
    return harness


def test_a_folder_calibrates_its_sampling_modes(tmp_path: Path) -> None:
    """prompt_api.json's samplingModes set a mode's top-k and temperature for this
    model (the session reports them); the modes it leaves out keep the runtime's."""
    balanced = {"topK": 4, "temperature": 0.2}
    harness = advised_fixture(tmp_path, {"samplingModes": {"balanced": balanced}})
    created = harness.run(harness.runtime.create({}, True, lambda _: None, lambda: False))
    assert (created["samplingMode"], created["topK"], created["temperature"]) == (
        "balanced",
        4,
        0.2,
    )
    session = harness.runtime.session(created["session"])
    assert session.state.sampling.top_k == 4 and session.state.sampling.temperature == 0.2
    creative = harness.run(
        harness.runtime.create({"samplingMode": "creative"}, True, lambda _: None, lambda: False)
    )
    assert (creative["topK"], creative["temperature"]) == (32, 1.1)
    # The deprecated topK alone takes its temperature from the calibrated default mode.
    legacy = harness.run(harness.runtime.create({"topK": 2}, True, lambda _: None, lambda: False))
    assert (legacy["topK"], legacy["temperature"]) == (2, 0.2)


def test_a_wrong_calibration_is_an_operation_error_naming_it(tmp_path: Path) -> None:
    harness = advised_fixture(tmp_path, {"samplingModes": {"balanced": {"topK": 0}}})
    with pytest.raises(PromptAPIError) as raised:
        harness.run(harness.runtime.create({}, True, lambda _: None, lambda: False))
    assert raised.value.name == "OperationError"
    assert "prompt_api.json" in str(raised.value) and "balanced.topK" in str(raised.value)


def test_one_response_stops_at_the_cap(tmp_path: Path) -> None:
    folder = penalized_fixture(tmp_path, 1.0)
    config = json.loads((folder / "generation_config.json").read_text())
    (folder / "generation_config.json").write_text(json.dumps({**config, "max_new_tokens": 3}))
    harness = Harness.__new__(Harness)
    harness.model = local_model(folder, "fp32")
    harness.runtime = Runtime(harness.model)
    harness.loop = asyncio.new_event_loop()
    session_id = harness.create(GREEDY)
    chunks = harness.prompt(session_id, "What is the capital of France?")
    tokenizer = harness.model.tokenizer
    assert tokenizer is not None
    first_three = tokenizer.decode(tokenizer.encode("The capital of France is Paris.")[:3])
    assert text_of(chunks) == first_three  # 3 tokens, then the answer ends
    assert harness.model.max_response_tokens == 3


def test_no_tool_call_is_left_open_at_the_cap() -> None:
    """At every cap, the answer is whole calls with arguments their schema allows, or no
    call: the budget stops before a call that could not close, and closes an open one."""
    harness = Harness("fp32")
    full = calls_of(harness.prompt(harness.create(WITH_TOOLS), WEATHER_Q))
    assert [c["name"] for c in full] == ["get_weather"]
    called, cut = [], 0
    for cap in range(1, 40):
        harness.model.max_response_tokens = cap
        chunks = harness.prompt(harness.create(WITH_TOOLS), WEATHER_Q)
        assert "<tool_call>" not in text_of(chunks), (cap, chunks)
        calls = calls_of(chunks)
        for call in calls:
            assert call["name"] == "get_weather"
            assert list(call["arguments"]) == ["location"], (cap, call)
            assert isinstance(call["arguments"]["location"], str), (cap, call)
            cut += call["arguments"] != full[0]["arguments"]
        called.append(bool(calls))
    assert not called[0] and called[-1]
    assert cut, "no cap ended an open call: the test did not test the ending"


def test_concurrent_loads_make_one_backend_and_a_failed_load_is_tried_again() -> None:
    """Twenty create()s at once used to make twenty backends, the last one winning:
    sessions' caches then lived in backends their state no longer used."""
    model = local_model(FIXTURE, "q4")
    made: list[Any] = []
    factory = model.make_backend
    failures = [RuntimeError("the first load fails")]

    async def counting(config: dict[str, Any], on_progress: Any) -> Any:
        await asyncio.sleep(0)
        if failures:
            raise failures.pop()
        made.append(await factory(config, on_progress))
        return made[-1]

    model.make_backend = counting
    progress: list[list[float]] = [[] for _ in range(20)]

    async def load_all() -> list[Any]:
        return await asyncio.gather(
            *(model.load(progress[i].append, lambda: False) for i in range(20)),
            return_exceptions=True,
        )

    first = asyncio.run(load_all())
    assert all(isinstance(result, PromptAPIError) for result in first), first
    assert all("the first load fails" in str(result) for result in first)
    assert model.backend is None and not made
    second = asyncio.run(load_all())
    assert second == [None] * 20
    assert len(made) == 1 and model.backend is made[0]
    assert all(calls[-1] == 1 for calls in progress), "every caller sees the one load's progress"
