"""What a model adds to the page's memory, phase by phase, in headless Chromium.

The page's renderer (page + worker + wasm memories) is read from /proc at the end of
each phase: the high-water mark (VmHWM) and the resident size now (VmRSS), minus the
same page's with the echo model. Phases: the download (create()'s progress reaching 1),
session creation (create() resolved), a long prefill (one prompt of about N tokens,
answered with one token), and decode (a greedy answer of up to 128 tokens). ``--warm``:
the model is loaded once first, in the same profile, and measured from the model cache
(a second visit); ``--jspi off``: ONNX Runtime's plain build, as in browsers without JSPI.

    python3 bench/memory_phases.py [--model smollm2|DIR] [--dtype fp32] [--prompt-tokens 512]
        [--warm] [--jspi auto|off]

Prints markdown; needs dist/.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from py_runtime.devtools import models  # noqa: E402
from py_runtime.devtools.bench.pages import launch_profile  # noqa: E402
from py_runtime.devtools.memory import PROC, _descendants, _parents  # noqa: E402
from py_runtime.devtools.server import StaticServer  # noqa: E402

PAGE = """<!doctype html><meta charset=utf-8>
<script src="/_lm/language-model.js" data-model="{model}" data-dtype="{dtype}"
        data-jspi="{jspi}"></script>
<button id=go>go</button>"""

RUN = """async ({promptTokens}) => {
  const phases = [];
  const mark = async (name) => { await window.memoryMark(name); };
  let downloaded = null;
  const session = await LanguageModel.create({
    samplingMode: 'most-predictable',
    monitor: (m) => m.addEventListener('downloadprogress', (e) => {
      if (e.loaded === 1 && !downloaded) downloaded = mark('download');
    }),
  });
  await downloaded;
  await mark('session creation');
  const words = 'the quick brown fox jumps over the lazy dog and runs away ';
  const long = words.repeat(Math.ceil(promptTokens / 12)).split(' ')
    .slice(0, promptTokens).join(' ');
  const measured = await session.measureContextUsage(long);
  const probe = await session.clone();
  await probe.prompt(long + ' Answer with one word.');
  await mark('prefill');
  await session.prompt('Write a long story about a dragon.');
  await mark('decode');
  return measured;
}"""


def renderer_memory(browser_pid: int) -> tuple[float, float]:
    """(VmHWM, VmRSS) in MiB of the largest page renderer under the browser."""
    best = (0.0, 0.0)
    for pid in _descendants(browser_pid, _parents()):
        try:
            command = (PROC / str(pid) / "cmdline").read_bytes().decode(errors="replace")
            if "--type=renderer" not in command or "--top-chrome-webui" in command:
                continue
            status = (PROC / str(pid) / "status").read_text()
        except OSError:
            continue
        fields = {
            line.split(":")[0]: line.split()[1] for line in status.splitlines() if "kB" in line
        }
        hwm, rss = int(fields.get("VmHWM", 0)) / 1024, int(fields.get("VmRSS", 0)) / 1024
        best = max(best, (hwm, rss))
    return best


#: True once every model file the page loaded is in its model cache.
CACHED = """async () => (await promptAPIRuntime.cache.list()).length >= 2"""


def measure(
    model: Path | None, dtype: str, prompt_tokens: int, warm: bool = False, jspi: str = "auto"
) -> dict[str, tuple[float, float]]:
    from playwright.sync_api import sync_playwright

    marks: dict[str, tuple[float, float]] = {}
    mounts = {"/_lm/": ROOT / "dist"}
    if model:
        mounts["/model/"] = model
    page_html = PAGE.format(model="/model/" if model else "echo", dtype=dtype, jspi=jspi)
    with (
        StaticServer(mounts, {"/index.html": page_html.encode()}) as server,
        sync_playwright() as p,
        tempfile.TemporaryDirectory() as profile,
    ):
        context, pid = launch_profile(p, Path(profile))
        assert pid is not None, "no browser pid: /proc is needed"
        if warm:  # a first visit fills the model cache; its renderer goes with its page
            first = context.new_page()
            first.goto(f"{server.url}/index.html")
            first.click("#go")
            first.evaluate("async () => (await LanguageModel.create()).destroy()")
            first.wait_for_function(CACHED, timeout=300_000)
            first.close()
            time.sleep(1)
        page = context.new_page()
        page.expose_function(
            "memoryMark", lambda name: marks.__setitem__(name, renderer_memory(pid))
        )
        page.goto(f"{server.url}/index.html")
        page.click("#go")
        if model:
            page.evaluate(RUN, {"promptTokens": prompt_tokens})
        else:
            page.evaluate("async () => (await LanguageModel.create()).prompt('hi')")
            time.sleep(0.5)
            marks["echo"] = renderer_memory(pid)
        context.close()
    return marks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--dtype", default="fp32")
    parser.add_argument("--prompt-tokens", type=int, default=512)
    parser.add_argument("--warm", action="store_true", help="measure a second visit")
    parser.add_argument("--jspi", choices=["auto", "off"], default="auto")
    args = parser.parse_args()
    folder = Path(models.resolve(args.model) or args.model)
    from py_runtime.engine.vocabulary import model_file

    size = (folder / model_file(args.dtype)).stat().st_size / 2**20
    data = folder / (model_file(args.dtype) + "_data")
    size += data.stat().st_size / 2**20 if data.is_file() else 0
    echo_hwm, _ = measure(None, args.dtype, 0)["echo"]
    marks = measure(folder, args.dtype, args.prompt_tokens, args.warm, args.jspi)
    visit = "second visit (model cache)" if args.warm else "first visit"
    print(
        f"## {folder.name} {args.dtype}, {visit}, JSPI {args.jspi}: file {size:.0f} MiB; "
        f"echo page peak {echo_hwm:.0f} MiB\n"
    )
    print("| after | peak (VmHWM) | added peak | added / file | resident now |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, (hwm, rss) in marks.items():
        added = hwm - echo_hwm
        print(f"| {name} | {hwm:.0f} MiB | {added:.0f} MiB | {added / size:.2f}x | {rss:.0f} MiB |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
