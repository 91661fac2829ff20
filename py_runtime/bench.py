"""Benchmarks, run in headless Chromium against the built ``dist/``.

``python -m py_runtime.bench startup [--model DIR] [--dtype q8]`` measures cold
start in a fresh browser each run: from navigation to ``create()`` resolved and to
the first streamed token, for the echo model (booted at script load and at the first
call) and for a model folder (default: the fixture), with Transformers.js loading
and answering from the same folder beside it.

``python -m py_runtime.bench compare --model DIR [--dtype q4] [--threads 1 2]``
measures, alternating the systems run by run on the same files, dtype and threads:
prefill and decode tokens/s of ours (``promptAPIRuntime.benchmark()``), of
Transformers.js through its public API and of native onnxruntime under CPython
(the same ``py_runtime.speed`` code as ours); the share of a decode step spent
outside the runtime's ``run()``; second-turn time to first token on a ~1,000-token
chat; and for each page its peak memory and its main-thread tasks over 50 ms.

Both print tables (medians with min-max) and ``--json FILE`` writes the raw numbers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

from .host.browser import launch_args
from .host.memory import chromium_browsers, page_peak_mib
from .host.server import StaticServer

REPO = Path(__file__).resolve().parent.parent
DIST = REPO / "dist"
FIXTURE = REPO / "tests" / "fixtures" / "tiny-qwen2-toolcall"
TJS_DIST = REPO / "node_modules" / "@huggingface" / "transformers"

Results = dict[str, dict[str, list[float]]]

LONG_TASKS = """<script>
  // Main-thread tasks over 50 ms, for the whole life of the page.
  window.longTasks = [];
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) window.longTasks.push(entry.duration);
  }).observe({ type: 'longtask', buffered: true });
</script>
"""

# Cold start, ours: create() needs a user activation while the model is downloadable,
# so the page creates at the first click, which the harness sends once it has loaded.
OURS_COLD_PAGE = """<!doctype html><meta charset=utf-8>
<script src="/language-model.js" ATTRIBUTES></script>
<button id=go>go</button>
<script>
  document.getElementById('go').addEventListener('click', async () => {
    const session = await LanguageModel.create({ samplingMode: 'most-predictable' });
    const ready = performance.now();
    await session.promptStreaming('Hello').getReader().read();
    const first = performance.now();
    console.debug('coldstart ' + JSON.stringify({ ready, first }));
  });
</script>
"""

TJS_IMPORTS = """
  import { AutoModelForCausalLM, AutoTokenizer, Tensor, env }
    from '/_tjs/transformers.min.js';
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  env.localModelPath = '/';
  env.backends.onnx.wasm.wasmPaths = '/_tjs_ort/';
  env.backends.onnx.wasm.numThreads = THREADS;
  const load = async () => ({
    tokenizer: await AutoTokenizer.from_pretrained('_model'),
    model: await AutoModelForCausalLM.from_pretrained('_model', { dtype: 'DTYPE', device: 'wasm' }),
  });
"""

# Cold start, Transformers.js: load at once, then its usual chat call for one token.
TJS_COLD_PAGE = """<!doctype html><meta charset=utf-8>
<button id=go>go</button>
<script type=module>
IMPORTS
  const { tokenizer, model } = await load();
  const ready = performance.now();
  const inputs = tokenizer.apply_chat_template(
    [{ role: 'user', content: 'Hello' }], { add_generation_prompt: true, return_dict: true });
  await model.generate({ ...inputs, max_new_tokens: 1 });
  const first = performance.now();
  console.debug('coldstart ' + JSON.stringify({ ready, first }));
</script>
"""

OURS_SPEED_PAGE = """<!doctype html><meta charset=utf-8>
<script src="/language-model.js" data-model="/_model/" data-dtype="DTYPE"
        data-threads="THREADS"></script>
<script>
  // Second-turn time to first token: the history is in the session (and its KV
  // cache) already; only the new question is prefilled.
  window.secondTurn = async (history, question) => {
    const session = await LanguageModel.create(
      { samplingMode: 'most-predictable', initialPrompts: history });
    const controller = new AbortController();
    const started = performance.now();
    const reader = session.promptStreaming(question, { signal: controller.signal }).getReader();
    await reader.read();
    const ttft = performance.now() - started;
    controller.abort();
    session.destroy();
    return { ttftMs: ttft, historyTokens: session.contextUsage };
  };
</script>
"""

TJS_SPEED_PAGE = """<!doctype html><meta charset=utf-8>
<script type=module>
IMPORTS
  // Transformers.js's own API, as its users call it: prefill = generate one token,
  // decode = generate N more with end-of-sequence ignored (min_new_tokens).
  window.benchmarkTransformersJs = async ({ promptTokens, decodeTokens }) => {
    window.tjs ??= await load();
    const { tokenizer, model } = window.tjs;
    const seed = tokenizer.encode(
      'The quick brown fox jumps over the lazy dog. ', { add_special_tokens: false });
    const ids = Array.from({ length: promptTokens }, (_, i) => seed[i % seed.length]);
    const input_ids = new Tensor('int64', BigInt64Array.from(ids, BigInt), [1, ids.length]);
    const mask = new BigInt64Array(promptTokens).fill(1n);
    const attention_mask = new Tensor('int64', mask, [1, promptTokens]);
    const start = performance.now();
    await model.generate({ input_ids, attention_mask, max_new_tokens: 1 });
    const prefilled = performance.now();
    await model.generate({ input_ids, attention_mask, max_new_tokens: decodeTokens + 1,
                           min_new_tokens: decodeTokens + 1, do_sample: false });
    const done = performance.now();
    const prefillMs = prefilled - start;
    const decodeMs = (done - prefilled) - prefillMs;
    return { prefillTokensPerSecond: promptTokens / prefillMs * 1000,
             decodeTokensPerSecond: decodeTokens / decodeMs * 1000 };
  };
  // Its usual chat usage: the whole conversation is templated and generated from.
  window.secondTurnTransformersJs = async (history, question) => {
    const { tokenizer, model } = window.tjs;
    const inputs = tokenizer.apply_chat_template(
      [...history, { role: 'user', content: question }],
      { add_generation_prompt: true, return_dict: true });
    const started = performance.now();
    await model.generate({ ...inputs, max_new_tokens: 1 });
    return { ttftMs: performance.now() - started };
  };
  window.tjsReady = true;
</script>
"""


def fill(template: str, **values: object) -> bytes:
    """A page: the long-task observer first, then the template with its CAPITALS filled."""
    text = template.replace("IMPORTS", TJS_IMPORTS)
    for name, value in values.items():
        text = text.replace(name.upper(), str(value))
    return text.replace("<meta charset=utf-8>", "<meta charset=utf-8>\n" + LONG_TASKS, 1).encode()


def mounts(dist: Path, model: Path) -> dict[str, Path]:
    return {
        "/": dist,
        "/_model/": model,
        "/_tjs/": TJS_DIST / "dist",
        "/_tjs_ort/": TJS_DIST / "node_modules" / "onnxruntime-web" / "dist",
    }


def launch(playwright: Any) -> tuple[Any, int | None]:
    """A fresh headless Chromium and its browser process id (for its pages' memory)."""
    before = chromium_browsers()
    browser = playwright.chromium.launch(**launch_args())
    started = chromium_browsers() - before
    return browser, started.pop() if len(started) == 1 else None


def record(results: Results, system: str, **metrics: float | None) -> None:
    """Add one sample of each metric given (``None``: not measured) to a system's lists."""
    entry = results.setdefault(system, {})
    for metric, value in metrics.items():
        if value is not None:
            entry.setdefault(metric, []).append(value)


def record_page(results: Results, system: str, page: Any, browser_pid: int | None) -> None:
    """A page's peak memory and its main-thread tasks over 50 ms."""
    tasks = page.evaluate("window.longTasks")
    record(
        results,
        system,
        long_tasks=len(tasks),
        longest_task_ms=max(tasks, default=0),
        peak_mib=page_peak_mib(browser_pid) if browser_pid else None,
    )


def startup(runs: int, dist: Path, model: Path, dtype: str) -> Results:
    """Per variant: navigation to ready (create() resolved / model loaded) and to the
    first token (ms), the page's peak memory and its long tasks; a fresh browser each run."""
    from playwright.sync_api import sync_playwright

    threads = os.cpu_count() or 1
    folder = f'data-model="/_model/" data-dtype="{dtype}" data-threads="{threads}"'
    pages = {
        "echo, ours (boot at load)": fill(OURS_COLD_PAGE, attributes=""),
        "echo, ours (boot at first call)": fill(OURS_COLD_PAGE, attributes='data-boot="lazy"'),
        f"{model.name} {dtype}, ours": fill(OURS_COLD_PAGE, attributes=folder),
        f"{model.name} {dtype}, Transformers.js": fill(TJS_COLD_PAGE, dtype=dtype, threads=threads),
    }
    paths = {name: f"/cold-{index}.html" for index, name in enumerate(pages)}
    served = {paths[name]: page for name, page in pages.items()}
    results: Results = {}
    with StaticServer(mounts(dist, model), served) as server, sync_playwright() as playwright:
        for _ in range(runs):  # alternate the variants within each round
            for name in pages:
                browser, pid = launch(playwright)
                page = browser.new_page()
                with page.expect_console_message(
                    lambda m: m.text.startswith("coldstart "), timeout=300_000
                ) as message:
                    page.goto(server.url + paths[name])
                    page.click("#go")
                times = json.loads(message.value.text.removeprefix("coldstart "))
                record(results, name, ready_ms=times["ready"], first_token_ms=times["first"])
                record_page(results, name, page, pid)
                browser.close()
    return results


def chat_history(turns: int) -> list[dict[str, str]]:
    """A conversation of ``turns`` user/assistant pairs of filler text."""
    filler = "The quick brown fox jumps over the lazy dog while the sun sets slowly. "
    history = [{"role": "system", "content": "You are a helpful assistant."}]
    for turn in range(turns):
        history.append({"role": "user", "content": f"Question {turn}: " + filler * 2})
        history.append({"role": "assistant", "content": f"Answer {turn}: " + filler * 3})
    return history


def compare(
    model: Path,
    dtype: str,
    threads: list[int],
    runs: int,
    prompt: int,
    decode: int,
    dist: Path,
    history_turns: int = 6,
) -> Results:
    """Ours in the page, Transformers.js in the page and onnxruntime in CPython,
    alternating run by run, on the same model files, dtype and thread count; each page
    in a browser of its own, so that its peak memory is its own."""
    from playwright.sync_api import sync_playwright

    from .models.local import local_model
    from .speed import measure_speed

    results: Results = {}

    def alternate(measures: dict[str, Callable[[], dict[str, Any]]]) -> None:
        """``runs`` rounds of each system's measure in turn, after a warm-up round."""
        for run in range(runs + 1):
            samples = {system: measure() for system, measure in measures.items()}
            if not run:
                continue  # the warm-up round
            for system, sample in samples.items():
                record(
                    results,
                    system,
                    prefill=sample.get("prefillTokensPerSecond"),
                    decode=sample.get("decodeTokensPerSecond"),
                    outside=sample.get("outsideRunShare"),
                    ttft=sample.get("ttftMs"),
                    history=sample.get("historyTokens"),
                )

    pages: dict[str, bytes] = {}
    for count in threads:
        pages[f"/ours-{count}.html"] = fill(OURS_SPEED_PAGE, dtype=dtype, threads=count)
        pages[f"/tjs-{count}.html"] = fill(TJS_SPEED_PAGE, dtype=dtype, threads=count)
    history = chat_history(history_turns)
    options = {"promptTokens": prompt, "decodeTokens": decode}
    with (
        StaticServer(mounts(dist, model), pages) as server,
        sync_playwright() as playwright,
        ThreadPoolExecutor(1) as pool,  # Playwright's sync API keeps an event loop here
    ):

        def native_speed(lm: Any) -> dict[str, Any]:
            return pool.submit(asyncio.run, measure_speed(lm, prompt, decode)).result()

        for count in threads:
            ours_name = f"ours (page, wasm), {count} thread(s)"
            tjs_name = f"Transformers.js (page, wasm), {count} thread(s)"
            native = local_model(model, dtype, threads=count)
            pool.submit(asyncio.run, native.load(lambda _: None, lambda: False)).result()
            ours_browser, ours_pid = launch(playwright)
            ours = ours_browser.new_page()
            ours.goto(f"{server.url}/ours-{count}.html")
            tjs_browser, tjs_pid = launch(playwright)
            tjs = tjs_browser.new_page()
            tjs.goto(f"{server.url}/tjs-{count}.html")
            tjs.wait_for_function("window.tjsReady === true")
            turn = [history, "And now?"]
            alternate(
                {
                    ours_name: partial(
                        ours.evaluate, "(o) => promptAPIRuntime.benchmark(o)", options
                    ),
                    tjs_name: partial(tjs.evaluate, "(o) => benchmarkTransformersJs(o)", options),
                    f"onnxruntime (CPython), {count} thread(s)": partial(native_speed, native),
                }
            )
            alternate(
                {
                    ours_name: partial(ours.evaluate, "([h, q]) => secondTurn(h, q)", turn),
                    tjs_name: partial(
                        tjs.evaluate, "([h, q]) => secondTurnTransformersJs(h, q)", turn
                    ),
                }
            )
            record_page(results, ours_name, ours, ours_pid)
            record_page(results, tjs_name, tjs, tjs_pid)
            ours_browser.close()
            tjs_browser.close()
    return results


def number(value: float) -> str:
    """Three significant digits or so: 4.24, 46.0, 117, 3,065 (and 0, 2 for counts)."""
    if abs(value) >= 100 or float(value).is_integer():
        return f"{value:,.0f}"
    return f"{value:.1f}" if abs(value) >= 10 else f"{value:.2f}"


def summary(values: list[float], scale: float = 1.0) -> str:
    scaled = [v * scale for v in values]
    median = statistics.median(scaled)
    if len(scaled) == 1:
        return number(median)
    return f"{number(median)} ({number(min(scaled))}-{number(max(scaled))})"


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
    return {
        "cores": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m py_runtime.bench", description=__doc__)
    parser.add_argument("--dist", type=Path, default=DIST)
    commands = parser.add_subparsers(dest="command", required=True)
    cold = commands.add_parser(
        "startup", help="cold start: page load to ready and to a first token"
    )
    cold.add_argument("--model", type=Path, default=FIXTURE, help="a model folder")
    cold.add_argument("--dtype", default="q8")
    cold.add_argument("--runs", type=int, default=5)
    cold.add_argument("--json", type=Path, help="also write the raw numbers here")
    command = commands.add_parser("compare", help="ours vs Transformers.js vs native onnxruntime")
    command.add_argument("--model", type=Path, required=True, help="a model folder")
    command.add_argument("--dtype", default="q4")
    command.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    command.add_argument("--runs", type=int, default=5)
    command.add_argument("--prompt-tokens", type=int, default=512)
    command.add_argument("--decode-tokens", type=int, default=128)
    command.add_argument("--json", type=Path, help="also write the raw numbers here")
    args = parser.parse_args(argv)
    model = args.model.resolve()
    if args.command == "compare":
        results = compare(
            model,
            args.dtype,
            args.threads,
            args.runs,
            args.prompt_tokens,
            args.decode_tokens,
            args.dist,
        )
        print(
            f"{model.name} {args.dtype}, wasm: prefill {args.prompt_tokens} tokens, decode "
            f"{args.decode_tokens} (greedy, eos ignored); second turn on a chat history\n"
        )
        print_table(results, ["prefill", "decode", "outside"])
        print_table(results, ["ttft", "history"])
        print_table(results, ["peak_mib", "long_tasks", "longest_task_ms"])
    else:
        results = startup(args.runs, args.dist, model, args.dtype)
        print(
            f"cold start in a fresh headless Chromium: echo and {model.name} {args.dtype}, wasm\n"
        )
        print_table(
            results, ["ready_ms", "first_token_ms", "peak_mib", "long_tasks", "longest_task_ms"]
        )
    print(f"medians of {args.runs} runs (min-max); {os.cpu_count()} cores")
    if args.json:
        report = {
            "command": vars(args) | {"model": str(model)},
            "machine": machine(),
            "results": results,
        }
        args.json.write_text(json.dumps(report, indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
