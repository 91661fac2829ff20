"""Jump-forward's verification in the page: ort-backend.mjs's ``speculate`` on the
fixture model (ONNX Runtime Web, XGrammar), driven directly, as the CPython test of
the NumPy backend does (tests/unit/test_jump_forward.py): drafts the model keeps,
drafts it rejects at their first token or further on, and sampled drafts.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page

from py_runtime.devtools.bench.pages import DIST, FIXTURE, worker_modules_server
from py_runtime.engine.js_regex import translate
from py_runtime.hosts.xgrammar_ebnf import ebnf
from py_runtime.tokenizer import Tokenizer

ANSWER = "Hello! How can I help you today?"
#: The fixture's prompt for "Hello!" (its template's default system turn).
PROMPT = (
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
    "<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n"
)
STOP_IDS = [4093, 4091]

pytestmark = pytest.mark.needs_files(
    DIST / "ort" / "ort.wasm.min.mjs", reason="dist/ is missing: run `python3 build/build.py`"
)

SCRIPT = """async (job) => {
  const { createOrtBackend } = await import('/dist/ort-backend.mjs');
  const backend = await createOrtBackend({
    modelURL: new URL('/model/', location.href).href, file: 'onnx/model.onnx', dtype: 'fp32',
    device: 'wasm', threads: 1, kvHeads: 2, headDim: 32, kvType: 'float32',
  });
  backend.useTokenizer(job.stopIds, job.tokenizerJSON);
  const grammar = { kind: 'ebnf', source: job.ebnf };
  const out = { speculates: backend.speculates, steps: [] };
  const step = async (cache, draft, topK = 1, temperature = 1) => {
    const passes = backend.passes;
    const { tokens, pending } = await backend.speculate(cache, draft, topK, temperature, 1);
    out.steps.push({
      tokens: Array.from(tokens), pending, passes: backend.passes - passes,
      length: backend.cacheLength(cache),
    });
    return { tokens: Array.from(tokens), pending };
  };
  // Greedy, by hand: rejected at once, rejected further on, kept whole.
  const cache = backend.newCache();
  await backend.forward(cache, job.prompt);
  await backend.constrain(cache, grammar);
  let result = await step(cache, job.spelled);
  await backend.forward(cache, result.tokens.slice(-1));
  result = await step(cache, job.partlySpelled);
  await backend.forward(cache, result.tokens.slice(-1));
  await step(cache, job.rest);
  out.stop = await backend.nextToken(cache, 1, 1, 1);
  await backend.constrain(cache, null);
  // Sampled: whatever is emitted, a fresh matcher takes every token.
  out.sampled = [];
  for (let run = 0; run < 5; run++) {
    const sampled = backend.newCache();
    await backend.forward(sampled, job.prompt);
    await backend.constrain(sampled, grammar);
    const ids = [];
    for (let guard = 0; guard < 64; guard++) {
      // The rest of the text as its own tokens (the draft generate() would make).
      const written = ids.reduce((n, id) => n + job.texts[id].length, 0);
      if (!job.drafts[written].length) { // nothing forced: the stop token, chosen
        ids.push(await backend.nextToken(sampled, 40, 1.5, 1));
        break;
      }
      const { tokens, pending } = await step(sampled, job.drafts[written], 40, 1.5);
      ids.push(...tokens);
      if (!pending) continue;
      const last = tokens.at(-1);
      if (last < 0 || job.stopIds.includes(last)) break;
      await backend.forward(sampled, [last]);
    }
    const replay = backend.newCache();
    await backend.constrain(replay, grammar);
    out.sampled.push({ ids, accepted: backend.accept(replay, ids) });
    await backend.constrain(replay, null);
    await backend.constrain(sampled, null);
    backend.release(replay);
    backend.release(sampled);
  }
  return out;
}"""


def spelled(tokenizer: Tokenizer, text: str) -> list[int]:
    """``text`` one character per token: not how the model writes it."""
    return [token for character in text for token in tokenizer.encode(character)]


def test_the_page_judges_drafts_as_cpython_does(page: Page) -> None:
    tokenizer_json = (FIXTURE / "tokenizer.json").read_text()
    tokenizer = Tokenizer.from_json(tokenizer_json)
    answer = tokenizer.encode(ANSWER)
    prompt = tokenizer.encode(PROMPT)
    job: dict[str, Any] = {
        "tokenizerJSON": tokenizer_json,
        "stopIds": STOP_IDS,
        "ebnf": ebnf(translate(r"Hello! How can I help you today\?")),
        "prompt": prompt,
        "spelled": spelled(tokenizer, ANSWER),
        "partlySpelled": [*answer[1:4], *spelled(tokenizer, tokenizer.decode(answer[4:]))],
        "rest": answer[5:],
        "texts": [tokenizer.decode([token]) for token in range(4096)],
        "drafts": [tokenizer.encode(ANSWER[n:]) for n in range(len(ANSWER) + 1)],
    }
    with worker_modules_server(FIXTURE) as server:
        page.goto(f"{server.url}/constrained.html")
        out = page.evaluate(SCRIPT, job)
    assert out["speculates"]
    base = len(prompt)
    first, second, third = out["steps"][:3]
    # Rejected at its first token: nothing ran, the model's own first token.
    assert first == {"tokens": answer[:1], "pending": True, "passes": 0, "length": base}
    # Kept for three tokens: one pass, cut back to them, the model's token after.
    assert second == {"tokens": answer[1:5], "pending": True, "passes": 1, "length": base + 4}
    # The rest as the model writes it: kept whole in one pass.
    assert third == {"tokens": answer[5:], "pending": False, "passes": 1, "length": base + 11}
    assert out["stop"] in STOP_IDS
    # Sampled drafts (the rest of the text, tokenized on its own) are kept or not
    # with their probability; what comes out is always the text, then a stop token.
    assert any(len(step["tokens"]) > 2 for step in out["steps"][3:])  # several kept
    for run in out["sampled"]:
        assert run["accepted"], run
        assert run["ids"][-1] in STOP_IDS
        assert tokenizer.decode(run["ids"][:-1]) == ANSWER
