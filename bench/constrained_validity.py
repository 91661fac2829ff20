"""Part 1 of ``bench/constrained.py``, validity: every constraint answered greedily and
sampled, each answer checked (JSON parsed and validated with ``jsonschema``, formats
included; RegExps matched whole by JavaScript's RegExp, or Python's ``re`` without
``node``); and what the constraints the runtime refuses give."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from typing import Any

import jsonschema

from bench.constrained_cases import (
    GENERIC_PROMPTS,
    GREEDY,
    REGEXES,
    SAMPLED,
    SCHEMAS,
    UNSUPPORTED,
    Case,
)
from bench.constrained_driver import Answer, Bench, Counters

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
