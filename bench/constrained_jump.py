"""Part 3 of ``bench/constrained.py``, jump-forward: a schema with long keys answered
greedily with ``model.jump_forward`` on and off (tokens, tokens jumped, wall time,
and whether the text is the same)."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from bench.constrained_cases import GREEDY, obj
from bench.constrained_driver import Bench
from py_runtime.engine.grammar import Grammar

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
