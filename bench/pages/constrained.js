// The module worker of bench/pages/constrained.html: the product's OrtBackend
// (web/worker/ort-backend.mjs, served at /dist/ beside dist/ort/ and dist/xgrammar/)
// on one model, measured: grammar compile times, the mask's share of a decode step,
// and what jump-forward would find. bench/constrained_page.py sends the job and
// prints the tables.

import { createOrtBackend } from '/dist/ort-backend.mjs';

const log = (text) => self.postMessage({ log: text });

/** Greedy decode of up to `steps` tokens on `cache`, timing each part of each step. */
async function decode(backend, cache, steps, stopIds, { forced = false } = {}) {
  const rows = { ids: [], maskMs: [], nextMs: [], runMs: [], stepMs: [], forced: [], forcedMs: [], end: 'length' };
  for (let i = 0; i < steps; i++) {
    const started = performance.now();
    if (forced) {
      const before = performance.now();
      rows.forced.push(backend.forced(cache));
      rows.forcedMs.push(performance.now() - before);
    }
    const mask0 = backend.maskMs;
    const next0 = performance.now();
    const token = await backend.nextToken(cache, 1, 1, 1);
    rows.nextMs.push(performance.now() - next0);
    rows.maskMs.push(backend.maskMs - mask0);
    if (token === -1 || stopIds.includes(token)) {
      rows.end = token === -1 ? 'no token allowed' : `stop token ${token}`;
      rows.stepMs.push(performance.now() - started);
      break;
    }
    rows.ids.push(token);
    const run0 = backend.runMs;
    await backend.forward(cache, [token]);
    rows.runMs.push(backend.runMs - run0);
    rows.stepMs.push(performance.now() - started);
  }
  return rows;
}

async function timedConstrain(backend, cache, grammar) {
  const compile0 = backend.compileMs;
  const started = performance.now();
  await backend.constrain(cache, grammar);
  return { wallMs: performance.now() - started, compileMs: backend.compileMs - compile0 };
}

async function measure(job) {
  const result = {};
  let started = performance.now();
  const backend = await createOrtBackend({
    modelURL: new URL('/model/', self.location.href).href,
    file: job.file,
    dtype: job.dtype,
    device: 'wasm',
    threads: job.threads,
    kvHeads: job.kvHeads,
    headDim: job.headDim,
    kvType: 'float32',
  });
  result.loadMs = performance.now() - started;
  result.crossOriginIsolated = self.crossOriginIsolated;
  log(`loaded in ${result.loadMs.toFixed(0)} ms`);
  backend.useTokenizer(job.stopIds, job.tokenizerJSON);

  const prompt = backend.newCache();
  started = performance.now();
  await backend.forward(prompt, job.promptIds);
  result.prefillMs = performance.now() - started;

  // 1. Compile times. The first constrain() loads XGrammar and prepares the vocabulary.
  result.firstUse = await timedConstrain(backend, prompt, job.trivial[0]);
  result.trivial = await timedConstrain(backend, prompt, job.trivial[1]);
  result.compile = [];
  for (const { name, grammar } of job.grammars) {
    const cold = await timedConstrain(backend, prompt, grammar);
    await backend.constrain(prompt, null);
    const cached = await timedConstrain(backend, prompt, grammar);
    await backend.constrain(prompt, null);
    result.compile.push({ name, cold, cached });
    log(`compiled ${name}: ${cold.wallMs.toFixed(1)} ms`);
  }

  // 2. Decoding, unconstrained and under each grammar, from the prompt's cache.
  result.decode = [];
  for (const { name, grammar, prefix } of [{ name: 'unconstrained', grammar: null, prefix: [] }, ...job.decode]) {
    const cache = await backend.clone(prompt);
    if (grammar) await backend.constrain(cache, grammar);
    if (prefix.length) {
      if (!backend.accept(cache, prefix)) throw new Error(`${name}: the grammar rejected the prefix`);
      await backend.forward(cache, prefix);
    }
    result.decode.push({ name, ...(await decode(backend, cache, job.steps, job.stopIds)) });
    backend.release(cache);
    log(`decoded ${name}`);
  }

  // 3. Jump-forward: the forced text at each step of a long-keys schema.
  const cache = await backend.clone(prompt);
  await backend.constrain(cache, job.jump.grammar);
  result.jump = { name: job.jump.name, ...(await decode(backend, cache, job.jump.steps, job.stopIds, { forced: true })) };
  backend.release(cache);
  backend.release(prompt);
  return result;
}

self.onmessage = async ({ data }) => {
  try {
    self.postMessage({ result: await measure(data) });
  } catch (error) {
    self.postMessage({ error: `${error?.message ?? error}\n${error?.stack ?? ''}` });
  }
};
