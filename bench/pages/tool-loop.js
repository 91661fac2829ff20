// The closed loop's own cost, in the page (bench/tool_loop_page.py).
// 1. The scheduler alone (web/src/tool-scheduler.js): calls whose tool settles at
//    once, so all the time is the scheduler's (dispatch, grouping, ordered commit).
// 2. End to end on the echo model: a closed-loop prompt() against the same exchange
//    done by hand in the open loop (prompt, build the responses, prompt again).

import { runToolCalls } from '/src/tool-scheduler.js';

const response = (call) => ({ callId: call.callId, name: call.name, result: [] });

async function schedulerCost({ calls, readOnly, maxParallel, repeats }) {
  const batch = Array.from({ length: calls }, (_, i) => ({ callId: `call_${i}`, name: 't', arguments: {} }));
  const schedule = {
    signal: new AbortController().signal,
    maxParallel,
    parallel: () => readOnly,
    run: async (call) => response(call),
    error: (call, errorMessage) => ({ callId: call.callId, name: call.name, errorMessage }),
    before: async () => null,
    after: async () => {},
  };
  await runToolCalls(batch, schedule); // warm-up
  const start = performance.now();
  for (let i = 0; i < repeats; i++) await runToolCalls(batch, schedule);
  return ((performance.now() - start) * 1000) / (repeats * calls); // microseconds per call
}

function tools(count, execute) {
  return Array.from({ length: count }, (_, i) => ({
    name: `t${i}`,
    description: `Tool ${i}. Args: {"n": ${i}}`,
    inputSchema: { type: 'object', properties: { n: { type: 'number' } } },
    annotations: { readOnlyHint: true },
    ...(execute && { execute }),
  }));
}

async function loopCost({ calls, repeats }) {
  const go = '<GenerateSimpleToolCalls>go';
  const closed = await LanguageModel.create({ expectedOutputs: [{ type: 'tool-call' }], tools: tools(calls, () => 'ok') });
  const open = await LanguageModel.create({
    expectedInputs: [{ type: 'tool-response' }], expectedOutputs: [{ type: 'tool-call' }], tools: tools(calls),
  });
  const byHand = async () => {
    const answer = await open.prompt(go);
    const content = answer.filter((part) => part.type === 'tool-call').map(({ value: call }) => ({
      type: 'tool-response',
      value: new LanguageModelToolSuccess({ callId: call.callId, name: call.name, result: [{ type: 'text', value: 'ok' }] }),
    }));
    return open.prompt([{ role: 'user', content }]);
  };
  const time = async (run) => {
    await run();
    const start = performance.now();
    for (let i = 0; i < repeats; i++) await run();
    return (performance.now() - start) / repeats;
  };
  // Interleaved, so that drift in the engine's speed falls on both.
  let closedMs = 0;
  let openMs = 0;
  for (let round = 0; round < 3; round++) {
    closedMs += await time(() => closed.prompt(go));
    openMs += await time(byHand);
  }
  closed.destroy();
  open.destroy();
  return { closedMs: closedMs / 3, openMs: openMs / 3 };
}

window.measure = async (job) => {
  const scheduler = [];
  for (const c of job.scheduler) scheduler.push({ ...c, usPerCall: await schedulerCost(c) });
  const loop = [];
  for (const c of job.loop) loop.push({ ...c, ...(await loopCost(c)) });
  return { scheduler, loop };
};
