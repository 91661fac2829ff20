"""The benchmarks' results: samples per system and metric, their tables and JSON."""

from __future__ import annotations

import json
import os
import platform
import statistics
from pathlib import Path
from typing import Any

#: system -> metric -> samples
Results = dict[str, dict[str, list[float]]]

COLUMNS: dict[str, tuple[str, float]] = {  # metric: (heading, scale)
    "prefill": ("prefill tok/s", 1),
    "decode": ("decode tok/s", 1),
    "outside": ("outside run() %", 100),
    "ttft": ("2nd-turn TTFT ms", 1),
    "history": ("history tokens", 1),
    "ready_ms": ("load to ready ms", 1),
    "first_token_ms": ("load to 1st token ms", 1),
    "peak_mib": ("page peak MiB", 1),
    "long_tasks": ("tasks > 50 ms", 1),
    "longest_task_ms": ("longest task ms", 1),
}


def record(results: Results, system: str, **metrics: float | None) -> None:
    """Add one sample of each metric given (``None``: not measured) to a system's lists."""
    entry = results.setdefault(system, {})
    for metric, value in metrics.items():
        if value is not None:
            entry.setdefault(metric, []).append(value)


def number(value: float) -> str:
    """Three significant digits or so: 4.24, 46.0, 117, 3,065 (and 0, 2 for counts)."""
    if abs(value) >= 100 or float(value).is_integer():
        return f"{value:,.0f}"
    return f"{value:.1f}" if abs(value) >= 10 else f"{value:.2f}"


def summary(values: list[float], scale: float = 1.0) -> str:
    """The median of the scaled samples, with their min-max when there are several."""
    scaled = [v * scale for v in values]
    median = statistics.median(scaled)
    if len(scaled) == 1:
        return number(median)
    return f"{number(median)} ({number(min(scaled))}-{number(max(scaled))})"


def print_table(results: Results, metrics: list[str]) -> None:
    """One row per system that has any of ``metrics``; one column per metric present."""
    rows = {s: v for s, v in results.items() if any(m in v for m in metrics)}
    shown = [m for m in metrics if any(m in v for v in rows.values())]
    if not rows:
        return
    lines = [["system"] + [COLUMNS[m][0] for m in shown]]
    for system, values in rows.items():
        lines.append(
            [system] + [summary(values[m], COLUMNS[m][1]) if m in values else "-" for m in shown]
        )
    widths = [max(len(line[i]) for line in lines) + 2 for i in range(len(lines[0]))]
    for line in lines:
        print(
            line[0].ljust(widths[0])
            + "".join(c.rjust(w) for c, w in zip(line[1:], widths[1:], strict=True))
        )
    print()


def machine() -> dict[str, Any]:
    """What the numbers were taken on."""
    return {
        "cores": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
    }


def write_json(path: Path, command: dict[str, Any], results: Results) -> None:
    """The raw numbers, with the command line and the machine that took them."""
    report = {"command": command, "machine": machine(), "results": results}
    path.write_text(json.dumps(report, indent=2, default=str))
