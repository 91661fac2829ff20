// Closed-loop tools for the echo model, whose calls block until the test releases
// them. The echo model calls every declared tool (<GenerateSimpleToolCalls>), in
// declaration order, with the arguments after "Args: " in its description, so a
// tool per call, each with its own id, plays one call of a model's batch.

const kGo = '<GenerateSimpleToolCalls>go';

class Gates {
  constructor() {
    this.started = [];
    this.open = new Map();
  }

  /** A closed-loop declaration whose call `id` waits for release(id). */
  tool(name, id, {readOnly = false} = {}) {
    return {
      name,
      description: `Gated tool. Args: {"id": "${id}"}`,
      inputSchema: {type: 'object', properties: {id: {type: 'string'}}},
      annotations: {readOnlyHint: readOnly},
      execute: async ({id: callArg}) => {
        this.started.push(callArg);
        await new Promise((resolve) => this.open.set(callArg, resolve));
        return `done-${callArg}`;
      },
    };
  }

  release(id) {
    const resolve = this.open.get(id);
    assert_true(resolve !== undefined, `call ${id} is waiting`);
    this.open.delete(id);
    resolve();
  }

  pending() {
    return [...this.open.keys()];
  }
}

/** A tool that runs at once, logging `name-id` to `log`. */
function loggingTool(name, id, log, {readOnly = false, result = 'ok'} = {}) {
  return {
    name,
    description: `Logging tool. Args: {"id": "${id}"}`,
    inputSchema: {type: 'object', properties: {id: {type: 'string'}}},
    annotations: {readOnlyHint: readOnly},
    execute: async () => {
      log.push(`${name}-start-${id}`);
      await Promise.resolve();
      log.push(`${name}-end-${id}`);
      return result;
    },
  };
}

function closedLoop(tools, options = {}) {
  return {expectedOutputs: [{type: 'tool-call'}], tools, ...options};
}

/** Poll until `predicate` holds, letting tasks run between checks. */
async function until(predicate, what = 'the condition') {
  for (let i = 0; i < 1000 && !predicate(); i++) await new Promise((r) => setTimeout(r, 0));
  assert_true(predicate(), `${what} held`);
}

/** Let pending tasks run, then check `predicate` still holds (nothing started early). */
async function settleFor(ms = 20) {
  await new Promise((r) => setTimeout(r, ms));
}

/** The echo text of a tool's response, as the model sees it. */
function echoedSuccess(callId, name, values) {
  return `<tool-response>${JSON.stringify({callId, name, result: values})}</tool-response>`;
}

function echoedError(callId, name, errorMessage) {
  return `<tool-response>${JSON.stringify({callId, name, errorMessage})}</tool-response>`;
}

/** The callIds of the tool responses in an echoed text, in order. */
function echoedCallIds(text) {
  return [...text.matchAll(/<tool-response>\{"callId":"([^"]+)"/g)].map((m) => m[1]);
}
