"""Tool use on a real model: the requests of ``bench/tool_use_cases.py``, each in a
fresh greedy session that declares every tool (the open loop: calls come back), scored
on the decision (a call or none), the tool (the first call's) and its arguments (every
value the request states; strings compared after case and whitespace normalisation).

Hosts: ``cpython``, the engine on onnxruntime + llguidance, driven as the worker drives
it; ``page``, the built product (``dist/``) in headless Chromium. Tokens are the answer
re-encoded with the model's tokenizer (calls in the Hermes syntax), on both hosts.

    python3 bench/tool_use_eval.py --host cpython|page [--set tuning|reporting|fresh]
        [--model smollm2|FOLDER] [--dtype fp32] [--threads 2] [--limit N]
        [--max-tokens N] [--json OUT]

The ``reporting`` and ``fresh`` sets are for final figures only: make choices on
``tuning``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.tool_use_cases import SCHEMAS, SETS, TOOLS, Request  # noqa: E402

GREEDY_TOOLS: dict[str, Any] = {
    "samplingMode": "most-predictable",
    "expectedInputs": [{"type": "tool-response"}],
    "expectedOutputs": [{"type": "tool-call"}],
}

# -- scoring ---------------------------------------------------------------------------


def normal(text: str) -> str:
    return " ".join(text.casefold().split())


def wrong_arguments(
    schema: dict[str, Any], expected: dict[str, Any], actual: Any, at: str = ""
) -> list[str]:
    """The paths of the expected arguments that ``actual`` lacks or gets wrong: enums
    and numbers by equality, other strings after normalisation, objects member-wise."""
    wrong = []
    for name, value in expected.items():
        path = f"{at}{name}"
        field = schema["properties"][name]
        got = actual.get(name) if isinstance(actual, dict) else None
        if isinstance(value, dict):
            wrong += wrong_arguments(field, value, got, f"{path}.")
        elif not matches(field, value, got):
            wrong.append(path)
    return wrong


def matches(field: dict[str, Any], expected: Any, got: Any) -> bool:
    if "enum" in field:
        return bool(got == expected)
    if field.get("type") in ("number", "integer"):
        return isinstance(got, int | float) and not isinstance(got, bool) and got == expected
    return isinstance(got, str) and normal(got) == normal(expected)


@dataclass
class Verdict:
    called: bool
    right_tool: bool  # the first call names the expected tool
    wrong: list[str]  # expected arguments missing or wrong in that call
    correct: bool  # a call is needed: right tool, right arguments; else: no call


def score(request: Request, calls: list[dict[str, Any]]) -> Verdict:
    if request.tool is None:
        return Verdict(bool(calls), False, [], not calls)
    if not calls:
        return Verdict(False, False, list(request.arguments), False)
    first = calls[0]
    if first["name"] != request.tool:
        return Verdict(True, False, list(request.arguments), False)
    wrong = wrong_arguments(SCHEMAS[request.tool], request.arguments, first["arguments"])
    return Verdict(True, True, wrong, not wrong)


# -- answers ---------------------------------------------------------------------------


@dataclass
class Answer:
    text: str
    calls: list[dict[str, Any]]  # {name, arguments}
    seconds: float
    error: str = ""
    tokens: int = 0
    #: The runtime's choice before the answer (CPython): {tool, margin, grounded}.
    choice: dict[str, Any] | None = None


class Host(Protocol):
    name: str
    load_seconds: float

    def answer(self, text: str) -> Answer: ...

    def close(self) -> None: ...


def wire_tools() -> list[dict[str, Any]]:
    """The declarations as the page's shim sends them to the engine (a probed schema)."""
    probe = {"type": "object", "properties": "object", "required": "array"}
    return [
        {
            "name": tool["name"],
            "description": tool["description"],
            "inputSchema": {**probe, "json": json.dumps(tool["inputSchema"])},
        }
        for tool in TOOLS
    ]


class CPythonHost:
    """The runtime under CPython (onnxruntime + llguidance), loaded once."""

    name = "cpython (onnxruntime + llguidance)"

    def __init__(
        self,
        folder: Path,
        dtype: str,
        threads: int,
        cap: int | None,
        thresholds: tuple[str | None, str | None],
    ) -> None:
        from bench.constraint_hosts import LoadedRuntime

        self.loaded = LoadedRuntime(folder, dtype, threads, cap)
        self.model = self.loaded.model
        threshold, grounded = thresholds
        if threshold is not None:
            self.model.tool_threshold = None if threshold == "off" else float(threshold)
        if grounded is not None:
            self.model.grounded_threshold = float(grounded)
        self.load_seconds = self.loaded.load_seconds
        self.options = {**GREEDY_TOOLS, "tools": wire_tools()}

    def answer(self, text: str) -> Answer:
        chunks: list[Any] = []
        started = time.perf_counter()
        error = ""
        try:
            chunks = self.loaded.ask(self.options, text)
        except Exception as failure:  # a failed request is a result here: count it, go on
            error = f"{type(failure).__name__}: {failure}"
        seconds = time.perf_counter() - started
        said = "".join(c["text"] for c in chunks if c["kind"] == "text")
        calls = [
            {"name": c["name"], "arguments": c["arguments"]}
            for c in chunks
            if c["kind"] == "tool-call"
        ]
        choices, self.model.tool_choices = self.model.tool_choices, []
        choice = asdict(choices[0]) if choices else None
        return Answer(said, calls, seconds, error, choice=choice)

    def close(self) -> None:
        self.loaded.loop.close()


#: One request in a fresh session; the open loop gives calls as tool-call parts.
PAGE_ANSWER = """async ({text, options}) => {
  const started = performance.now();
  let session = null;
  try {
    session = await LanguageModel.create(options);
    const result = await session.prompt(text);
    const parts = typeof result === 'string' ? [{type: 'text', value: result}] : result;
    return {
      text: parts.filter((p) => p.type === 'text').map((p) => p.value).join(''),
      calls: parts.filter((p) => p.type === 'tool-call')
          .map((p) => ({name: p.value.name, arguments: p.value.arguments})),
      error: '',
      ms: performance.now() - started,
    };
  } catch (e) {
    return {text: '', calls: [], error: `${e.name}: ${e.message}`, ms: performance.now() - started};
  } finally {
    session?.destroy();
  }
}"""


class PageHost:
    """The product in headless Chromium, served as ``bench/constraint_hosts.py`` serves
    it (``dist/`` and the model folder)."""

    name = "page (Chromium, ONNX Runtime Web wasm + XGrammar)"

    def __init__(self, folder: Path, dtype: str, cap: int | None) -> None:
        from playwright.sync_api import sync_playwright

        from bench.constraint_hosts import PageHost as ServedPage
        from py_runtime.devtools.browser import launch_args

        self.playwright = sync_playwright().start()
        self.browser = self.playwright.chromium.launch(**launch_args())
        self.served = ServedPage(self.browser.new_page(), folder, dtype, cap)
        self.load_seconds = self.served.load_seconds
        self.options = {**GREEDY_TOOLS, "tools": TOOLS}

    def answer(self, text: str) -> Answer:
        result = self.served.page.evaluate(PAGE_ANSWER, {"text": text, "options": self.options})
        return Answer(result["text"], result["calls"], result["ms"] / 1000, result["error"])

    def close(self) -> None:
        self.served.close()
        self.browser.close()
        self.playwright.stop()


def answer_tokens(tokenizer: Any, answer: Answer) -> int:
    calls = "".join(
        f"<tool_call>{json.dumps(call, ensure_ascii=False)}</tool_call>" for call in answer.calls
    )
    written = answer.text + calls
    return len(tokenizer.encode(written)) if written else 0


# -- the report ------------------------------------------------------------------------


@dataclass
class Row:
    request: Request
    answer: Answer
    verdict: Verdict


def share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f} %)" if whole else "-"


def report(rows: list[Row], heading: str) -> str:
    needing = [r for r in rows if r.request.tool is not None]
    needless = [r for r in rows if r.request.tool is None]
    decided = sum(r.verdict.called == (r.request.tool is not None) for r in rows)
    lines = [
        heading,
        "",
        "| | requests | share |",
        "| --- | ---: | ---: |",
        f"| needs a call: right tool and arguments | {len(needing)} | "
        f"{share(sum(r.verdict.correct for r in needing), len(needing))} |",
        f"| needs a call: any call | {len(needing)} | "
        f"{share(sum(r.verdict.called for r in needing), len(needing))} |",
        f"| needs a call: right tool | {len(needing)} | "
        f"{share(sum(r.verdict.right_tool for r in needing), len(needing))} |",
        f"| needs none: no call | {len(needless)} | "
        f"{share(sum(r.verdict.correct for r in needless), len(needless))} |",
        f"| decision (call or not) right | {len(rows)} | {share(decided, len(rows))} |",
        f"| all right | {len(rows)} | {share(sum(r.verdict.correct for r in rows), len(rows))} |",
        "",
        "| tool | needed | any call | right tool | right arguments | called for another request |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for tool in SCHEMAS:
        mine = [r for r in needing if r.request.tool == tool]
        stray = sum(
            bool(r.answer.calls) and r.answer.calls[0]["name"] == tool and r.request.tool != tool
            for r in rows
        )
        lines.append(
            f"| {tool} | {len(mine)} | {sum(r.verdict.called for r in mine)} | "
            f"{sum(r.verdict.right_tool for r in mine)} | "
            f"{sum(r.verdict.correct for r in mine)} | {stray} |"
        )
    seconds = [r.answer.seconds for r in rows]
    tokens = [r.answer.tokens for r in rows]
    errors = [r for r in rows if r.answer.error]
    lines += [
        "",
        f"Per request: {statistics.mean(tokens):.0f} tokens (median "
        f"{statistics.median(tokens):.0f}), {statistics.mean(seconds):.1f} s (median "
        f"{statistics.median(seconds):.1f} s); failed requests: {len(errors)}.",
    ]
    lines += [f"- failed: {r.request.text!r}: {r.answer.error}" for r in errors]
    return "\n".join(lines)


def progress_line(row: Row) -> str:
    mark = "ok " if row.verdict.correct else "BAD"
    want = row.request.tool or "no call"
    got = ", ".join(
        f"{c['name']}({json.dumps(c['arguments'], ensure_ascii=False)})" for c in row.answer.calls
    )
    got = got or f"text {row.answer.text[:60]!r}"
    if row.answer.choice:
        choice = row.answer.choice
        grounded = {True: ", grounded", False: ", not grounded"}.get(choice["grounded"], "")
        got += f" [chose {choice['tool']}, margin {choice['margin']:.2f}{grounded}]"
    if row.answer.error:
        got = row.answer.error
    return f"{mark} [{want}] {row.request.text!r} -> {got} ({row.answer.seconds:.1f} s)"


def interleaved(requests: list[Request], stride: int = 4) -> list[Request]:
    """Requests needing a call and needing none, alternating, each kind taken every
    ``stride``-th first (the sets list them by tool and topic): a prefix (``--limit``)
    is half/half and spans the tools."""
    needing = [r for r in requests if r.tool is not None]
    needless = [r for r in requests if r.tool is None]
    needing, needless = (
        [r for k in range(stride) for r in rs[k::stride]] for rs in (needing, needless)
    )
    out: list[Request] = []
    for pair in zip(needing, needless, strict=False):
        out += pair
    longer = needing if len(needing) > len(needless) else needless
    return out + longer[len(out) // 2 :]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", choices=["cpython", "page"], required=True)
    parser.add_argument("--set", choices=list(SETS), default="tuning")
    parser.add_argument("--model", default="smollm2", help="smollm2, or a model folder")
    parser.add_argument("--dtype", default=None, help="default: the model's (fp32)")
    parser.add_argument("--threads", type=int, default=2, help="onnxruntime threads (CPython)")
    parser.add_argument("--limit", type=int, help="the first N requests, needing and not")
    parser.add_argument("--max-tokens", type=int, help="the response's token cap")
    parser.add_argument(
        "--tool-threshold",
        help="CPython: the margin at which the runtime opens a call (a number, inf, -inf; "
        "off: no choice made); default the runtime's",
    )
    parser.add_argument(
        "--grounded-threshold",
        help="CPython: the margin at which it opens a call whose arguments all come from "
        "the request (a number, inf); default the runtime's",
    )
    parser.add_argument("--json", type=Path, help="write every answer here")
    args = parser.parse_args()
    from py_runtime.devtools import models
    from py_runtime.tokenizer.tokenizer import Tokenizer

    folder = Path(models.resolve(args.model) or args.model)
    dtype = args.dtype or models.default_dtype(args.model) or "fp32"
    requests = interleaved(SETS[args.set])[: args.limit]
    if args.host == "page" and not (ROOT / "dist" / "language-model.js").is_file():
        print("dist/ is missing: run python3 build/build.py first.", file=sys.stderr)
        return 2
    tokenizer = Tokenizer.from_json((folder / "tokenizer.json").read_text())
    host: Host = (
        CPythonHost(
            folder,
            dtype,
            args.threads,
            args.max_tokens,
            (args.tool_threshold, args.grounded_threshold),
        )
        if args.host == "cpython"
        else PageHost(folder, dtype, args.max_tokens)
    )
    print(f"# {len(requests)} requests ({args.set}), {host.name}, {folder.name} ({dtype})")
    rows = []
    try:
        for request in requests:
            answer = host.answer(request.text)
            answer.tokens = answer_tokens(tokenizer, answer)
            rows.append(Row(request, answer, score(request, answer.calls)))
            print(progress_line(rows[-1]), flush=True)
    finally:
        host.close()
    heading = (
        f"## {folder.name} ({dtype}), {host.name}, {args.set} set: {len(rows)} requests, "
        f"{len(TOOLS)} tools; model load {host.load_seconds:.1f} s"
    )
    print()
    print(report(rows, heading))
    if args.json:
        answers = [asdict(row) for row in rows]
        payload = {"host": host.name, "model": f"{folder.name} ({dtype})", "set": args.set}
        args.json.write_text(json.dumps({**payload, "answers": answers}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
