"""``bench/constrained.py``'s results: its markdown tables, the failures it exits 1
for, and every answer for the record."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from bench.constrained_cases import REGEXES, SCHEMAS
from bench.constrained_driver import Bench
from bench.constrained_jump import JUMP_PROMPTS, JumpResult
from bench.constrained_tools import WEATHER_SCHEMA, ToolRow
from bench.constrained_validity import Checked, ValidityResult


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
