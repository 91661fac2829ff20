"""Property-based fuzzing of the engine under CPython, driven through the worker protocol.

Property: only the spec's errors come out (``fuzz_support.check_error``): every failure
is an error the page may see by name (never a Python exception, never the "internal
error" an engine bug becomes), nothing escapes ``Endpoint.receive``, no call hangs, a
failed or refused call changes nothing, and afterwards every live session and a new
one still answer a normal prompt.

Scripts of calls (create, availability, prompt, append, measure, clone, destroy, with
aborts and refused settles) run on the echo model; a smaller run on the fixture model
(constraints held by llguidance, real tool declarations); arbitrary and mutated JSON
messages go through ``wire.decode_request``. The number of cases is
``PROMPT_API_FUZZ_EXAMPLES`` (all tests together; default 300, the full run 10,000).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fuzz_support import (
    TALLY,
    EngineDriver,
    FuzzFailure,
    LoopThread,
    check_error,
    require_answer,
    share,
    threw_indexes,
)
from fuzz_wire import (
    TRIGGERS,
    core_options,
    create_options,
    good_constraints,
    json_texts,
    mutated,
    prompts,
    response_constraints,
    strings,
    tools,
    valid_tools,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from py_runtime.hosts.cpython import local_model
from py_runtime.models.echo import PREFIX, EchoModel

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "tiny-qwen2-toolcall"


def fuzz_settings(examples: int) -> settings:
    return settings(
        max_examples=examples,
        # In CI the same cases every run (a failure there is never chance); elsewhere new
        # ones each run (``--hypothesis-seed`` replays one).
        derandomize=bool(os.environ.get("CI")),
        deadline=None,
        database=None,  # no .hypothesis/ folder in the tree
        print_blob=True,  # a failure prints the @reproduce_failure line to replay it
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


@pytest.fixture(scope="module")
def loop() -> Iterator[LoopThread]:
    thread = LoopThread()
    errors: list[Any] = []
    # A task that failed with nobody awaiting it is a bug the replies would not show.
    thread.loop.set_exception_handler(lambda _, context: errors.append(context))
    yield thread
    thread.close()
    assert not errors, f"unhandled errors in the engine's tasks: {errors}"


# -- scripts of calls ------------------------------------------------------------------

#: An index into the sessions made so far (-1: one never made).
sessions_ref = st.sampled_from([0, 0, 0, 1, 1, 2, 3, 4, -1])
prompt_operations = st.tuples(
    st.just("prompt"),
    sessions_ref,
    prompts,
    st.one_of(st.none(), st.none(), response_constraints),
    st.booleans(),  # omitResponseConstraintInput
    st.sampled_from(["keep", "keep", "keep", "refuse", "abort"]),
)
operations = st.one_of(
    prompt_operations,
    prompt_operations,
    prompt_operations,
    st.tuples(st.just("create"), create_options(), st.booleans()),
    st.tuples(st.just("availability"), core_options()),
    st.tuples(
        st.just("append"),
        sessions_ref,
        prompts,
        st.sampled_from(["keep", "keep", "refuse", "abort"]),
    ),
    st.tuples(
        st.just("measure"),
        sessions_ref,
        prompts,
        st.one_of(st.none(), response_constraints),
        st.booleans(),
    ),
    st.tuples(st.just("clone"), sessions_ref, st.booleans()),
    st.tuples(st.just("destroy"), sessions_ref),
)
#: Options that make sessions with tools the echo model calls (its triggers).
echo_tool_options = st.builds(
    lambda declared, initial: {
        "expectedInputs": [{"type": "tool-response"}, {"type": "image"}, {"type": "audio"}],
        "expectedOutputs": [{"type": "tool-call"}],
        "tools": declared,
        "initialPrompts": initial,
    },
    st.lists(valid_tools, min_size=1, max_size=3, unique_by=lambda t: t["name"]),
    st.one_of(
        st.just([]),
        st.lists(st.builds(lambda s: {"role": "system", "content": s}, strings), max_size=1),
    ),
)
scripts = st.tuples(
    st.one_of(echo_tool_options, create_options()),
    st.lists(operations, min_size=1, max_size=8),
)


class Script:
    """Runs one script on a driver, checking each call's outcome."""

    def __init__(self, driver: EngineDriver) -> None:
        self.driver = driver
        self.sessions: list[int] = []
        self.calls = 0
        self.errors: list[str] = []

    def session_id(self, ref: int) -> int:
        """A live session mostly; 4: any made so far (destroyed ones too); -1: none."""
        live = [session for session in self.sessions if self.live(session)]
        if 0 <= ref < 4 and live:
            return live[ref % len(live)]
        return self.sessions[ref % len(self.sessions)] if ref >= 0 and self.sessions else 10**6

    def live(self, session_id: int) -> bool:
        session = self.driver.runtime.sessions.get(session_id)
        return session is not None and not session.destroyed

    def state(self, session_id: int) -> Any:
        """What a failed call must leave as it was."""
        session = self.driver.runtime.sessions.get(session_id)
        if session is None:
            return None
        return session.context_usage, session.history, session.destroyed

    def outcome(self, outcome: Any, request: Any, malformed_ok: bool = False) -> bool:
        """Check a call's outcome; True when it succeeded."""
        self.calls += 1
        TALLY[f"call {outcome.kind}"] += 1
        if outcome.error is None:
            TALLY[f"ok {outcome.kind}"] += 1
            return True
        name = check_error(outcome.error, threw=threw_indexes(request), malformed_ok=malformed_ok)
        self.errors.append(name)
        TALLY[f"error {outcome.kind} {name}"] += 1
        return False

    def create(self, options: dict[str, Any], activation: bool = True) -> None:
        outcome = self.driver.create(options, activation)
        if self.outcome(outcome, options):
            info = outcome.value
            if outcome.progress[:1] != [0] or outcome.progress[-1:] != [1]:
                raise FuzzFailure(f"create() progress was {outcome.progress!r}")
            self.sessions.append(info["session"])

    def run(self, operation: tuple[Any, ...]) -> None:
        kind, *args = operation
        driver = self.driver
        if kind == "create":
            self.create(args[0], args[1])
        elif kind == "availability":
            outcome = driver.call("availability", {"options": args[0]})
            if self.outcome(outcome, args[0]) and outcome.value not in (
                "unavailable",
                "downloadable",
                "downloading",
                "available",
            ):
                raise FuzzFailure(f"availability() gave {outcome.value!r}")
        elif kind in ("prompt", "append"):
            session = self.session_id(args[0])
            before = self.state(session)
            if kind == "prompt":
                _, _, input, constraint, omit, settle = operation
                outcome = driver.prompt(
                    session, input, constraint, omit, settle != "refuse", settle == "abort"
                )
            else:
                _, _, input, settle = operation
                payload = {"session": session, "input": input}
                outcome = driver.call("append", payload, settle != "refuse", settle == "abort")
            kept = self.outcome(outcome, input) and settle == "keep"
            after = self.state(session)
            if not kept and after != before:
                raise FuzzFailure(f"a {kind} that was not kept changed the session: {outcome!r}")
            if kept and after is not None and outcome.value["contextUsage"] != after[0]:
                raise FuzzFailure(f"contextUsage {outcome.value!r} but the session has {after[0]}")
            # Eviction keeps the newest entry: only it alone may be over the window (an
            # echoed answer longer than what the initial prompts leave).
            if kept and after is not None and after[0] > driver.model.context_window:
                if len(after[1]) > 1:
                    raise FuzzFailure(f"the session holds {after[0]} over its window")
                TALLY["answer alone over the window"] += 1
        elif kind == "measure":
            _, ref, input, constraint, omit = operation
            session = self.session_id(ref)
            before = self.state(session)
            payload = {"session": session, "input": input, "constraint": constraint, "omit": omit}
            outcome = driver.call("measure", payload)
            if self.outcome(outcome, input) and not outcome.value >= 0:
                raise FuzzFailure(f"measureContextUsage() gave {outcome.value!r}")
            if self.state(session) != before:
                raise FuzzFailure("measureContextUsage() changed the session")
        elif kind == "clone":
            session = self.session_id(args[0])
            outcome = driver.call("clone", {"session": session}, abort=args[1])
            if self.outcome(outcome, None):
                self.sessions.append(outcome.value["session"])
                if outcome.value["contextUsage"] != self.state(session)[0]:
                    raise FuzzFailure("a clone's usage differs from its session's")
        elif kind == "destroy":
            session = self.session_id(args[0])
            outcome = driver.call("destroy", {"session": session})
            self.outcome(outcome, None)
            if self.live(session):
                raise FuzzFailure("destroy() left the session alive")

    def finish(self, answer: Any) -> None:
        """Every live session, and a new one, answer a normal prompt."""
        for session in self.sessions:
            if self.live(session):
                require_answer(self.driver, session, answer)
        outcome = self.driver.create({}, True)
        if outcome.error is not None:
            raise FuzzFailure(f"create() no longer works: {outcome.error!r}")
        require_answer(self.driver, outcome.value["session"], answer)


def echo_answer(text: str) -> bool:
    return text.endswith("ping")


@fuzz_settings(share(0.62))
@given(scripts)
def test_echo_scripts_give_only_spec_errors(loop: LoopThread, script: Any) -> None:
    TALLY["echo scripts"] += 1
    first, operations = script
    runner = Script(EngineDriver(EchoModel(), loop, timeout=20))
    try:
        runner.create(first)
        if not runner.sessions:  # the calls below get a session to work on
            runner.create({})
        for operation in operations:
            runner.run(operation)
        runner.finish(echo_answer)
    except FuzzFailure:
        TALLY["echo failures"] += 1
        raise
    TALLY["echo calls"] += runner.calls
    TALLY["echo errors"] += len(runner.errors)


# -- the wire: arbitrary and mutated messages -----------------------------------------

well_formed = st.one_of(
    st.builds(
        lambda o: {"kind": "create", "id": 1, "options": o, "activation": True}, create_options()
    ),
    st.builds(lambda o: {"kind": "availability", "id": 2, "options": o}, core_options()),
    st.builds(
        lambda p, c, omit: {
            "kind": "prompt",
            "id": 3,
            "session": 1,
            "input": p,
            "constraint": c,
            "omit": omit,
        },
        prompts,
        st.one_of(st.none(), response_constraints),
        st.booleans(),
    ),
    st.builds(lambda p: {"kind": "append", "id": 4, "session": 1, "input": p}, prompts),
    st.builds(
        lambda p, c: {
            "kind": "measure",
            "id": 5,
            "session": 1,
            "input": p,
            "constraint": c,
            "omit": False,
        },
        prompts,
        st.one_of(st.none(), response_constraints),
    ),
    st.just({"kind": "clone", "id": 6, "session": 1}),
    st.just({"kind": "destroy", "id": 7, "session": 2}),
    st.just({"kind": "benchmark", "id": 8, "promptTokens": 4, "decodeTokens": 2}),
    st.just({"kind": "abort", "target": 3}),
    st.just({"kind": "settle", "target": 3, "keep": True}),
    st.just({"kind": "init", "config": {}}),
)
wire_messages = st.one_of(json_texts, st.builds(json.dumps, mutated(well_formed)))


@fuzz_settings(share(0.3))
@given(st.lists(wire_messages, min_size=1, max_size=4))
def test_arbitrary_messages_give_only_clean_errors(loop: LoopThread, texts: list[str]) -> None:
    TALLY["wire cases"] += 1
    driver = EngineDriver(EchoModel(), loop, timeout=20)
    session = driver.create({}).value["session"]
    try:
        for text in texts:
            driver.raw_mode = True
            try:
                request = json.loads(text)
            except (ValueError, RecursionError):
                request = None
            for reply in driver.raw(text):
                TALLY["wire replies"] += 1
                if reply["kind"] == "throw":
                    check_error(reply["error"], threw=threw_indexes(request), malformed_ok=True)
            driver.raw_mode = False
        if driver.runtime.session(session) is not None:
            require_answer(driver, session, echo_answer)
        outcome = driver.create({})
        require_answer(driver, outcome.value["session"], echo_answer)
    except FuzzFailure:
        TALLY["wire failures"] += 1
        raise


def test_a_reused_id_is_dropped_and_the_first_call_completes(loop: LoopThread) -> None:
    """A broken page side reusing a running call's id: the second message is dropped (an
    answer would reach the first call's handlers); the first call ends normally."""
    driver = EngineDriver(EchoModel(), loop)
    session = driver.create({}).value["session"]
    text = json.dumps(
        {
            "kind": "prompt",
            "id": 99,
            "session": session,
            "input": "a",
            "constraint": None,
            "omit": False,
        }
    )

    async def twice() -> None:
        driver.endpoint.receive(text)
        driver.endpoint.receive(text)  # while the first waits for its settle
        while 99 in driver.endpoint._controls:
            control = driver.endpoint._controls[99]
            if control.settled is not None and not control.settled.done():
                driver.endpoint.receive(json.dumps({"kind": "settle", "target": 99, "keep": True}))
            await asyncio.sleep(0)

    driver.raw_mode = True
    loop.run(twice(), 10)
    driver.raw_mode = False
    assert [reply["kind"] for reply in driver.stray] == ["chunk", "return"]
    require_answer(driver, session, echo_answer)


# -- the fixture model: constraints held by the grammar, real tool declarations --------

WEATHER_PROBE = {
    "name": "get_weather",
    "description": "Get the current weather for a location",
    "inputSchema": {
        "type": "object",
        "properties": "object",
        "required": "array",
        "json": json.dumps(
            {
                "type": "object",
                "properties": {"location": {"type": "string", "description": "City name"}},
                "required": ["location"],
            },
            separators=(",", ":"),
        ),
    },
}
GREEDY_WEATHER = {
    "samplingMode": "most-predictable",
    "expectedInputs": [{"type": "tool-response"}],
    "expectedOutputs": [{"type": "tool-call"}],
    "tools": [WEATHER_PROBE],
    "initialPrompts": [],
}
fixture_options = st.builds(
    lambda declared, mode, initial: {
        "samplingMode": mode,
        "expectedInputs": [{"type": "tool-response"}],
        "expectedOutputs": [{"type": "tool-call"}],
        "tools": declared,
        "initialPrompts": initial,
    },
    st.one_of(
        st.just([WEATHER_PROBE]),
        st.just([]),
        st.lists(valid_tools, max_size=2).map(lambda more: [WEATHER_PROBE, *more]),
        st.lists(tools, max_size=2).map(lambda more: [WEATHER_PROBE, *more]),
    ),
    st.sampled_from(["most-predictable", "balanced", "most-creative"]),
    st.one_of(
        st.just([]),
        st.lists(st.builds(lambda s: {"role": "system", "content": s}, strings), max_size=1),
    ),
)
fixture_prompts = st.one_of(
    st.sampled_from(["What is the weather like in Paris today?", "Hello!", "x", *TRIGGERS]),
    prompts,
)
fixture_prompt_operations = st.tuples(
    st.just("prompt"),
    st.just(0),
    fixture_prompts,
    st.one_of(st.none(), good_constraints, good_constraints, response_constraints),
    st.booleans(),
    st.sampled_from(["keep", "keep", "refuse", "abort"]),
)
fixture_operations = st.one_of(
    fixture_prompt_operations,
    fixture_prompt_operations,
    fixture_prompt_operations,
    st.tuples(
        st.just("prompt"),
        st.just(0),
        fixture_prompts,
        st.one_of(st.none(), response_constraints, response_constraints),
        st.booleans(),
        st.sampled_from(["keep", "keep", "refuse", "abort"]),
    ),
    st.tuples(st.just("append"), st.just(0), fixture_prompts, st.sampled_from(["keep", "refuse"])),
    st.tuples(
        st.just("measure"),
        st.just(0),
        fixture_prompts,
        st.one_of(st.none(), response_constraints),
        st.booleans(),
    ),
    st.tuples(st.just("clone"), st.just(0), st.booleans()),
    st.tuples(st.just("create"), create_options(), st.just(True)),
)


@pytest.fixture(scope="module")
def fixture_model() -> Any:
    if not (FIXTURE / "onnx" / "model_q4.onnx").is_file():
        pytest.skip("the fixture model is missing")
    return local_model(FIXTURE, "q4")


@fuzz_settings(share(0.08))
@given(st.tuples(fixture_options, st.lists(fixture_operations, min_size=1, max_size=3)))
def test_fixture_scripts_give_only_spec_errors(
    loop: LoopThread, fixture_model: Any, script: Any
) -> None:
    TALLY["fixture scripts"] += 1
    first, operations = script
    runner = Script(EngineDriver(fixture_model, loop, timeout=120))
    started = time.monotonic()
    try:
        runner.create(first)
        if not runner.sessions:
            runner.create({**GREEDY_WEATHER, "samplingMode": first["samplingMode"]})
        for operation in operations:
            runner.run(operation)
        runner.finish(lambda text: isinstance(text, str))
    except FuzzFailure:
        TALLY["fixture failures"] += 1
        raise
    finally:
        for session in list(runner.driver.runtime.sessions):
            runner.driver.runtime.destroy(session)  # free the KV caches
    TALLY["fixture calls"] += runner.calls
    TALLY["fixture seconds"] += time.monotonic() - started  # type: ignore[assignment]


def test_a_normal_prompt_still_answers_exactly_on_the_fixture(
    loop: LoopThread, fixture_model: Any
) -> None:
    """After the fuzzing, the fixture model still answers its memorised question."""
    driver = EngineDriver(fixture_model, loop, timeout=120)
    session = driver.create({"samplingMode": "most-predictable"}).value["session"]
    outcome = driver.prompt(session, "What is the capital of France?")
    assert outcome.error is None
    assert outcome.text == "The capital of France is Paris."


def test_echo_still_echoes(loop: LoopThread) -> None:
    driver = EngineDriver(EchoModel(), loop)
    session = driver.create({}).value["session"]
    assert driver.prompt(session, "hi").text == PREFIX + "hi"


def test_report_tally(capsys: pytest.CaptureFixture[str]) -> None:
    """Print what ran (the full run's figures come from this line)."""
    with capsys.disabled():
        print(f"\n[fuzz] {dict(TALLY)}")
