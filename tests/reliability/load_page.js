// Load and soak drivers (test_load.py, test_soak.py), run in a page whose runtime
// serves a real model. Seeded: a failure replays with the same seed.

/* eslint-env browser */
/* global LanguageModel */

// Prompts the fixture was trained on (and noise after them, deterministic when greedy).
const PROMPTS = ['Hello!', 'What is the capital of France?', 'What is the weather like in Paris today?'];
const GREEDY = { samplingMode: 'most-predictable' };

/** mulberry32: a small seeded generator in [0, 1). */
function generator(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** prompt() or promptStreaming(), aborted after `abortAfter` ms unless null; settled. */
async function settled(session, text, abortAfter, streaming) {
  const controller = new AbortController();
  if (abortAfter !== null) setTimeout(() => controller.abort(), abortAfter);
  try {
    if (!streaming) return { answer: await session.prompt(text, { signal: controller.signal }) };
    let answer = '';
    for await (const chunk of session.promptStreaming(text, { signal: controller.signal })) {
      answer += chunk;
    }
    return { answer };
  } catch (error) {
    return { error: error?.name, realm: error instanceof DOMException };
  }
}

/**
 * `prompts` prompts started at once over `sessions` sessions (round robin), a share
 * `abortShare` of them aborted after a random delay; then each session's kept prompts
 * are replayed one by one on a fresh session. Returns, per session, the kept answers
 * and the replay's, both contextUsage values, and every error's name.
 */
window.runLoad = async ({ sessions, prompts, abortShare, seed }) => {
  const random = generator(seed);
  const made = await Promise.all(
    Array.from({ length: sessions }, () => LanguageModel.create(GREEDY)));
  const jobs = [];
  for (let i = 0; i < prompts; i++) {
    const index = i % sessions;
    const text = PROMPTS[Math.floor(random() * PROMPTS.length)];
    const abortAfter = random() < abortShare ? Math.floor(random() * 300) : null;
    const streaming = random() < 0.5;
    jobs.push(settled(made[index], text, abortAfter, streaming).then((r) => ({ ...r, index, text })));
  }
  const results = await Promise.all(jobs);
  const report = [];
  for (let index = 0; index < sessions; index++) {
    const kept = results.filter((r) => r.index === index && 'answer' in r);
    const fresh = await LanguageModel.create(GREEDY);
    const replay = [];
    for (const r of kept) replay.push(await fresh.prompt(r.text));
    report.push({
      kept: kept.map((r) => r.answer),
      replay,
      usage: made[index].contextUsage,
      replayUsage: fresh.contextUsage,
      measured: await made[index].measureContextUsage('Hello!'),
      replayMeasured: await fresh.measureContextUsage('Hello!'),
    });
    fresh.destroy();
    made[index].destroy();
  }
  const errors = results.filter((r) => 'error' in r)
    .map((r) => `${r.error}${r.realm ? '' : ' (wrong realm)'}`);
  return { report, errors, aborted: errors.length };
};

/**
 * Soak, one step at a time (the test samples memory between steps): `soakPrompts(n)`
 * sends n more prompts one after another on one session (made at the first call;
 * the page's small context window makes it evict), `soakCycles(n)` destroys it and
 * runs n create/append/clone/prompt/destroy cycles.
 */
let soakSession = null;
let soakOverflows = 0;
let soakCount = 0;

window.soakPrompts = async (count) => {
  if (!soakSession) {
    soakSession = await LanguageModel.create(GREEDY);
    soakSession.addEventListener('contextoverflow', () => { soakOverflows += 1; });
  }
  for (let i = 0; i < count; i++, soakCount++) {
    await soakSession.prompt(PROMPTS[soakCount % PROMPTS.length]);
  }
  return { overflows: soakOverflows, usage: soakSession.contextUsage, window: soakSession.contextWindow };
};

window.soakCycles = async (count) => {
  soakSession?.destroy();
  soakSession = null;
  for (let i = 0; i < count; i++) {
    const made = await LanguageModel.create(GREEDY);
    await made.append('Hello!');
    const copy = await made.clone();
    await copy.prompt('Hello!');
    copy.destroy();
    made.destroy();
  }
};
