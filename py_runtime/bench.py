"""Benchmarks, run in headless Chromium against the built ``dist/``.

``python -m py_runtime.bench startup [--runs 5]`` measures cold start: from
navigation start to the first ``create()`` resolving, with the runtime booted
at script load (``eager``, the default) or at the first call (``lazy``), for a
page that creates a session as soon as it can and for one that waits a second.

``python -m py_runtime.bench speed --model DIR [--dtype q4] [--threads 1 2]``
measures prefill and decode tokens/s of a model folder, in the page (ONNX
Runtime Web, wasm) and under CPython (onnxruntime), alternating, with the same
code (``py_runtime.speed``).
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

DIST = Path(__file__).resolve().parent.parent / "dist"

STARTUP_PAGE = """<!doctype html><meta charset=utf-8>
<script src="/language-model.js" data-boot="{boot}"></script>
<button id=go>go</button>
<script>
  document.getElementById('go').addEventListener('click', () => {{
    setTimeout(async () => {{
      const called = performance.now();
      await LanguageModel.create();
      const resolved = performance.now();
      console.debug('startup ' + JSON.stringify({{ called, resolved }}));
    }}, {delay});
  }});
</script>
"""


def startup(runs: int, dist: Path) -> dict[str, dict[str, list[float]]]:
    """Per boot mode and create() delay: navigation-to-resolved and call-to-resolved times (ms)."""
    from playwright.sync_api import sync_playwright

    from .host.browser import launch_args
    from .host.server import StaticServer

    pages = {
        f"/{boot}-{delay}.html": STARTUP_PAGE.format(boot=boot, delay=delay).encode()
        for boot in ("eager", "lazy")
        for delay in (0, 1000)
    }
    results: dict[str, dict[str, list[float]]] = {}
    with StaticServer({"/": dist}, pages) as server, sync_playwright() as playwright:
        browser = playwright.chromium.launch(**launch_args())
        for _ in range(runs):  # alternate the variants within each round
            for name in pages:
                context = browser.new_context()
                page = context.new_page()
                with page.expect_console_message(
                    lambda m: m.text.startswith("startup "), timeout=120_000
                ) as message:
                    page.goto(server.url + name)
                    page.click("#go")
                times = json.loads(message.value.text.removeprefix("startup "))
                variant = results.setdefault(name.strip("/").removesuffix(".html"), {})
                variant.setdefault("load_to_create_ms", []).append(times["resolved"])
                variant.setdefault("call_to_create_ms", []).append(
                    times["resolved"] - times["called"]
                )
                context.close()
        browser.close()
    return results


SPEED_PAGE = """<!doctype html><meta charset=utf-8>
<script src="/language-model.js" data-model="/_model/" data-dtype="{dtype}"
        data-threads="{threads}"></script>
<script>
  // Second-turn time to first token: the history is in the session (and its KV
  // cache) already; only the new question is prefilled.
  window.secondTurn = async (history, question) => {{
    const session = await LanguageModel.create(
      {{ samplingMode: 'most-predictable', initialPrompts: history }});
    const controller = new AbortController();
    const started = performance.now();
    const reader = session.promptStreaming(question, {{ signal: controller.signal }}).getReader();
    await reader.read();
    const ttft = performance.now() - started;
    controller.abort();
    session.destroy();
    return {{ ttftMs: ttft, historyTokens: session.contextUsage }};
  }};
</script>
"""


def speed(
    model: Path, dtype: str, threads: list[int], runs: int, prompt: int, decode: int, dist: Path
) -> dict[str, dict[str, list[float]]]:
    """Prefill and decode tokens/s per system and thread count (page and CPython)."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from playwright.sync_api import sync_playwright

    from .host.browser import launch_args
    from .host.server import StaticServer
    from .models.local import local_model
    from .speed import measure_speed

    async def native(count: int) -> list[dict]:
        lm = local_model(model, dtype, threads=count)
        await lm.load(lambda _: None, lambda: False)
        await measure_speed(lm, prompt, decode)  # warm-up
        return [await measure_speed(lm, prompt, decode) for _ in range(runs)]

    results: dict[str, dict[str, list[float]]] = {}

    def record(system: str, samples: list[dict]) -> None:
        entry = results.setdefault(system, {"prefill": [], "decode": [], "outside": []})
        entry["prefill"] += [s["prefillTokensPerSecond"] for s in samples]
        entry["decode"] += [s["decodeTokensPerSecond"] for s in samples]
        entry["outside"] += [s["outsideRunShare"] for s in samples]

    pages = {
        f"/speed-{count}.html": SPEED_PAGE.format(dtype=dtype, threads=count).encode()
        for count in threads
    }
    with (
        StaticServer({"/": dist, "/_model/": model}, pages) as server,
        sync_playwright() as playwright,
        ThreadPoolExecutor(1) as pool,
    ):
        browser = playwright.chromium.launch(**launch_args())
        for count in threads:
            page = browser.new_page()
            page.goto(f"{server.url}/speed-{count}.html")
            samples = page.evaluate(
                """async ([runs, promptTokens, decodeTokens]) => {
                  await promptAPIRuntime.benchmark({promptTokens, decodeTokens});  // warm-up
                  const samples = [];
                  for (let i = 0; i < runs; i++) {
                    samples.push(await promptAPIRuntime.benchmark({promptTokens, decodeTokens}));
                  }
                  return samples;
                }""",
                [runs, prompt, decode],
            )
            page.close()
            record(f"page wasm, {count} thread(s)", samples)
            record(
                f"CPython onnxruntime, {count} thread(s)",
                pool.submit(asyncio.run, native(count)).result(),
            )
        browser.close()
    return results


TJS_PAGE = """<!doctype html><meta charset=utf-8>
<script type=module>
  import {{ AutoModelForCausalLM, AutoTokenizer, env }} from '/_tjs/transformers.min.js';
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  env.localModelPath = '/';
  env.backends.onnx.wasm.wasmPaths = '/_tjs_ort/';
  env.backends.onnx.wasm.numThreads = {threads};
  // Transformers.js's own API, as its users call it: prefill = generate one token,
  // decode = generate N more with end-of-sequence ignored (min_new_tokens).
  window.benchmarkTransformersJs = async ({{ promptTokens, decodeTokens }}) => {{
    window.tjs ??= {{
      tokenizer: await AutoTokenizer.from_pretrained('_model'),
      model: await AutoModelForCausalLM.from_pretrained(
        '_model', {{ dtype: '{dtype}', device: 'wasm' }}),
    }};
    const {{ tokenizer, model }} = window.tjs;
    const seed = tokenizer.encode(
      'The quick brown fox jumps over the lazy dog. ', {{ add_special_tokens: false }});
    const ids = Array.from({{ length: promptTokens }}, (_, i) => seed[i % seed.length]);
    const {{ Tensor }} = await import('/_tjs/transformers.min.js');
    const input_ids = new Tensor('int64', BigInt64Array.from(ids, BigInt), [1, ids.length]);
    const mask = new BigInt64Array(promptTokens).fill(1n);
    const attention_mask = new Tensor('int64', mask, [1, promptTokens]);
    const start = performance.now();
    await model.generate({{ input_ids, attention_mask, max_new_tokens: 1 }});
    const prefilled = performance.now();
    await model.generate({{ input_ids, attention_mask, max_new_tokens: decodeTokens + 1,
                            min_new_tokens: decodeTokens + 1, do_sample: false }});
    const done = performance.now();
    const prefillMs = prefilled - start;
    const decodeMs = (done - prefilled) - prefillMs;
    return {{ prefillTokensPerSecond: promptTokens / prefillMs * 1000,
              decodeTokensPerSecond: decodeTokens / decodeMs * 1000 }};
  }};
  // Its usual chat usage: the whole conversation is templated and generated from.
  window.secondTurnTransformersJs = async (history, question) => {{
    const {{ tokenizer, model }} = window.tjs;
    const inputs = tokenizer.apply_chat_template(
      [...history, {{ role: 'user', content: question }}],
      {{ add_generation_prompt: true, return_dict: true }});
    const started = performance.now();
    await model.generate({{ ...inputs, max_new_tokens: 1 }});
    return {{ ttftMs: performance.now() - started }};
  }};
  window.tjsReady = true;
</script>
"""

TJS_DIST = Path(__file__).resolve().parent.parent / "node_modules" / "@huggingface" / "transformers"


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
) -> dict[str, dict[str, list[float]]]:
    """Ours in the page, Transformers.js in the page and onnxruntime in CPython,
    alternating run by run, on the same model files, dtype and thread count."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from playwright.sync_api import sync_playwright

    from .host.browser import launch_args
    from .host.server import StaticServer
    from .models.local import local_model
    from .speed import measure_speed

    results: dict[str, dict[str, list[float]]] = {}

    def record(system: str, sample: dict) -> None:
        entry = results.setdefault(system, {})
        for key, name in (
            ("prefillTokensPerSecond", "prefill"),
            ("decodeTokensPerSecond", "decode"),
            ("outsideRunShare", "outside"),
            ("ttftMs", "ttft"),
            ("historyTokens", "history"),
        ):
            if key in sample:
                entry.setdefault(name, []).append(sample[key])

    pages: dict[str, bytes] = {}
    for count in threads:
        pages[f"/ours-{count}.html"] = SPEED_PAGE.format(dtype=dtype, threads=count).encode()
        pages[f"/tjs-{count}.html"] = TJS_PAGE.format(dtype=dtype, threads=count).encode()
    mounts = {
        "/": dist,
        "/_model/": model,
        "/_tjs/": TJS_DIST / "dist",
        "/_tjs_ort/": TJS_DIST / "node_modules" / "onnxruntime-web" / "dist",
    }
    with (
        StaticServer(mounts, pages) as server,
        sync_playwright() as playwright,
        ThreadPoolExecutor(1) as pool,
    ):
        browser = playwright.chromium.launch(**launch_args())
        for count in threads:
            native = local_model(model, dtype, threads=count)
            pool.submit(asyncio.run, native.load(lambda _: None, lambda: False)).result()
            ours = browser.new_page()
            ours.goto(f"{server.url}/ours-{count}.html")
            tjs = browser.new_page()
            tjs.goto(f"{server.url}/tjs-{count}.html")
            tjs.wait_for_function("window.tjsReady === true")
            options = {"promptTokens": prompt, "decodeTokens": decode}
            for run in range(runs + 1):  # run 0 warms each system up
                samples = {
                    f"ours (page, wasm), {count} thread(s)": ours.evaluate(
                        "(o) => promptAPIRuntime.benchmark(o)", options
                    ),
                    f"Transformers.js (page, wasm), {count} thread(s)": tjs.evaluate(
                        "(o) => benchmarkTransformersJs(o)", options
                    ),
                    f"onnxruntime (CPython), {count} thread(s)": pool.submit(
                        asyncio.run, measure_speed(native, prompt, decode)
                    ).result(),
                }
                if run:
                    for system, sample in samples.items():
                        record(system, sample)
            history = chat_history(history_turns)
            for run in range(runs + 1):
                samples = {
                    f"ours, 2nd turn, {count} thread(s)": ours.evaluate(
                        "([h, q]) => secondTurn(h, q)", [history, "And now?"]
                    ),
                    f"Transformers.js, 2nd turn, {count} thread(s)": tjs.evaluate(
                        "([h, q]) => secondTurnTransformersJs(h, q)", [history, "And now?"]
                    ),
                }
                if run:
                    for system, sample in samples.items():
                        record(system, sample)
            ours.close()
            tjs.close()
        browser.close()
    return results


def print_table(title: str, results: dict[str, dict[str, list[float]]], runs: int) -> None:
    print(title)
    print(f"{'system':<46}{'prefill tok/s':>20}{'decode tok/s':>20}{'outside run %':>16}")
    for system, values in results.items():
        if "prefill" not in values:
            continue
        outside = statistics.median(values["outside"]) * 100 if "outside" in values else None
        shown = f"{outside:.1f}" if outside is not None else "-"
        print(
            f"{system:<46}{summary(values['prefill']):>20}{summary(values['decode']):>20}"
            f"{shown:>16}"
        )
    if any("ttft" in values for values in results.values()):
        print(f"{'system':<46}{'2nd-turn TTFT ms':>20}{'history tokens':>20}")
    for system, values in results.items():
        if "ttft" in values:
            history = f"{statistics.median(values['history']):.0f}" if "history" in values else "-"
            print(f"{system:<46}{summary(values['ttft']):>20}{history:>20}")
    print(f"medians of {runs} runs (min-max), after one warm-up run")


def summary(values: list[float]) -> str:
    return f"{statistics.median(values):8.0f} ({min(values):.0f}-{max(values):.0f})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m py_runtime.bench", description=__doc__)
    parser.add_argument("--dist", type=Path, default=DIST)
    commands = parser.add_subparsers(dest="command", required=True)
    cold = commands.add_parser("startup", help="page load to the first create() resolving")
    cold.add_argument("--runs", type=int, default=5)
    cold.add_argument("--json", type=Path, help="also write the raw numbers here")
    for name, help_text in (
        ("speed", "prefill/decode tokens/s, page vs CPython"),
        ("compare", "prefill/decode: ours vs Transformers.js vs native onnxruntime"),
    ):
        command = commands.add_parser(name, help=help_text)
        command.add_argument("--model", type=Path, required=True, help="a model folder")
        command.add_argument("--dtype", default="q4")
        command.add_argument("--threads", type=int, nargs="+", default=[1, 2])
        command.add_argument("--runs", type=int, default=5)
        command.add_argument("--prompt-tokens", type=int, default=512)
        command.add_argument("--decode-tokens", type=int, default=128)
        command.add_argument("--json", type=Path, help="also write the raw numbers here")
    args = parser.parse_args(argv)
    if args.command in ("speed", "compare"):
        measure = compare if args.command == "compare" else speed
        results = measure(
            args.model.resolve(),
            args.dtype,
            args.threads,
            args.runs,
            args.prompt_tokens,
            args.decode_tokens,
            args.dist,
        )
        print_table(
            f"{args.model.name} {args.dtype}: prefill {args.prompt_tokens} tokens, decode "
            f"{args.decode_tokens} (greedy, eos ignored), headless Chromium",
            results,
            args.runs,
        )
        if args.json:
            args.json.write_text(json.dumps(results, indent=2))
        return 0
    results = startup(args.runs, args.dist)
    print(f"{'boot-create delay':<20}{'load to create() ms':>26}{'call to create() ms':>26}")
    for name, variant in results.items():
        load, call = variant["load_to_create_ms"], variant["call_to_create_ms"]
        print(f"{name:<20}{summary(load):>26}{summary(call):>26}")
    print(f"medians of {args.runs} runs (min-max), headless Chromium, echo model")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
