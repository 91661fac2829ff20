// Every member of types/prompt-api-runtime.d.ts, used as a page would use it. Only
// type-checked (`npx tsc --strict --noEmit -p tests/types`), never run.
import 'prompt-api-runtime';

// -- promptAPIRuntime: configure before the first call, start, benchmark, cache ------

promptAPIRuntime.configure({
  model: '/models/smollm2/',
  dtype: 'q4f16',
  device: 'webgpu',
  threads: 2,
  contextWindow: '4096',
  toolCallResults: 'always-array',
  cacheRevalidation: 'never',
  assetsURL: '/static/prompt-api-runtime/',
});
promptAPIRuntime.configure({ model: 'echo', dtype: 'fp32', device: 'wasm', threads: '1', contextWindow: 1000 });
promptAPIRuntime.configure({ toolCallResults: 'when-called', cacheRevalidation: 'daily' });
promptAPIRuntime.configure({ cacheRevalidation: 'always' });
promptAPIRuntime.configure({});
promptAPIRuntime.start();

async function runtimeObject(): Promise<void> {
  const speed: PromptAPIRuntimeBenchmarkResult = await promptAPIRuntime.benchmark({
    promptTokens: 128, decodeTokens: 64,
  });
  const defaults = await promptAPIRuntime.benchmark();
  const fields: number[] = [
    speed.promptTokens, speed.decodeTokens, speed.prefillMs, speed.decodeMs,
    speed.prefillTokensPerSecond, speed.decodeTokensPerSecond, speed.outsideRunShare,
    defaults.decodeTokensPerSecond,
  ];
  console.log(fields);
  // Absent in the browser extension.
  const cache: PromptAPIRuntimeCache | undefined = promptAPIRuntime.cache;
  if (cache) {
    const entries: PromptAPIRuntimeCacheEntry[] = await cache.list();
    let total = 0;
    for (const { url, bytes } of entries) {
      console.log(url.toUpperCase());
      total += bytes;
    }
    console.log(total);
    const cleared: void = await cache.clear();
    console.log(cleared);
  }
  const config: PromptAPIRuntimeConfig = { dtype: 'bnb4' };
  const dtypes: PromptAPIRuntimeDtype[] = ['fp32', 'fp16', 'q8', 'int8', 'uint8', 'q4', 'q4f16', 'bnb4'];
  const runtime: PromptAPIRuntime = promptAPIRuntime;
  runtime.configure(config);
  console.log(dtypes);
}

// -- availability and create with every option -----------------------------------

const weatherSchema = {
  type: 'object',
  properties: { location: { type: 'string' } },
  required: ['location'],
};

async function openLoop(): Promise<void> {
  const core: LanguageModelCreateCoreOptions = {
    samplingMode: 'most-predictable',
    expectedInputs: [{ type: 'text', languages: ['en', 'fr'] }, { type: 'tool-response' }],
    expectedOutputs: [{ type: 'text', languages: ['en'] }, { type: 'tool-call' }],
    tools: [{ name: 'get_weather', description: 'Get the weather', inputSchema: weatherSchema }],
  };
  const availability: Availability = await LanguageModel.availability(core);
  const noOptions = await LanguageModel.availability();
  switch (availability) {
    case 'unavailable': case 'downloadable': case 'downloading': case 'available':
      console.log(availability, noOptions);
  }

  const controller = new AbortController();
  const monitor: CreateMonitorCallback = (m: CreateMonitor) => {
    m.addEventListener('downloadprogress', (e) => console.log(e.loaded / e.total));
    m.ondownloadprogress = function (e) {
      const self: CreateMonitor = this;
      console.log(self, e.loaded);
    };
    const handler = (e: ProgressEvent) => console.log(e.lengthComputable);
    m.addEventListener('downloadprogress', handler, { once: true });
    m.removeEventListener('downloadprogress', handler);
    m.ondownloadprogress = null;
  };
  const options: LanguageModelCreateOptions = {
    ...core,
    signal: controller.signal,
    monitor,
    initialPrompts: [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: [{ type: 'text', value: 'Weather in Paris?' }] },
      {
        role: 'assistant',
        content: [{
          type: 'tool-call',
          value: new LanguageModelToolCall({ callId: 'c0', name: 'get_weather', arguments: { location: 'Paris' } }),
        }],
      },
      { role: 'assistant', content: 'Sunny', prefix: false },
    ],
  };
  const session: LanguageModel = await LanguageModel.create(options);
  const plain = await LanguageModel.create();
  plain.destroy();

  // -- attributes and events
  const usage: number = session.contextUsage;
  const window: number = session.contextWindow;
  const mode: LanguageModelSamplingMode | null = session.samplingMode;
  console.log(usage, window, mode);
  session.oncontextoverflow = function (event: Event) {
    const self: LanguageModel = this;
    console.log(self.contextUsage, event.type);
  };
  session.oncontextoverflow = null;
  const overflow = (event: Event) => console.log(event.type);
  session.addEventListener('contextoverflow', overflow);
  session.removeEventListener('contextoverflow', overflow);
  session.addEventListener('quotaoverflow', overflow, { once: true });
  session.addEventListener('custom', { handleEvent: (event) => console.log(event) });
  const overflowHandler: LanguageModel['oncontextoverflow'] = session.oncontextoverflow;
  console.log(overflowHandler);

  // -- prompt: a string, or contents when the model calls tools
  const promptOptions: LanguageModelPromptOptions = {
    responseConstraint: { type: 'object', properties: { answer: { type: 'string' } } },
    omitResponseConstraintInput: true,
    signal: controller.signal,
  };
  const structured: LanguageModelPromptResult = await session.prompt('Answer in JSON', promptOptions);
  if (typeof structured === 'string') console.log(JSON.parse(structured));
  const byRegExp = await session.prompt('A date?', { responseConstraint: /\d{4}-\d{2}-\d{2}/u });
  console.log(byRegExp);

  const result = await session.prompt([{ role: 'user', content: 'What is the weather in Paris?' }]);
  const responses: LanguageModelToolResponse[] = [];
  if (typeof result === 'string') {
    console.log(result.trim());
  } else {
    for (const content of result) {
      if (content.type === 'tool-call') {
        const call: LanguageModelToolCall = content.value;
        const id: string = call.callId;
        const sameId: string = call.callID;
        const name: string = call.name;
        const args: Record<string, any> | null = call.arguments;
        const location = String(args?.location ?? 'nowhere');
        responses.push(location === 'Mars'
          ? new LanguageModelToolError({ callId: id, name, errorMessage: 'out of range' })
          : new LanguageModelToolSuccess({
            callID: sameId, name,
            result: [{ type: 'text', value: `Sunny in ${location}` }, { type: 'object', value: { celsius: 21 } }],
          }));
      } else {
        const text: string = content.value;
        const type: 'text' = content.type;
        console.log(text, type);
      }
    }
  }

  // -- tool responses go back in a user message
  const followUp: LanguageModelMessage = {
    role: 'user',
    content: responses.map((value): LanguageModelMessageContent => ({ type: 'tool-response', value })),
  };
  const success = new LanguageModelToolSuccess({
    callId: 'c1', name: 'get_weather', result: [{ type: 'image', value: new Blob() }, { type: 'audio', value: null }],
  });
  const failure = new LanguageModelToolError({ callID: 'c2', callId: 'c2', name: 'get_weather', errorMessage: 'down' });
  const successResult: ReadonlyArray<LanguageModelToolResultContent> = success.result;
  const resultType: LanguageModelToolResultType = successResult[0].type;
  console.log(success.callId, success.callID, success.name, resultType, successResult[0].value);
  console.log(failure.callId, failure.callID, failure.name, failure.errorMessage);
  const noArguments = new LanguageModelToolCall({ callID: 'c3', name: 'now' });
  console.log(noArguments.arguments === null);
  await session.prompt([followUp, {
    role: 'user',
    content: [{ type: 'tool-response', value: success }, { type: 'tool-response', value: failure }],
  }]);

  // -- multimodal contents (the types allow them; text-only models reject them)
  const image: LanguageModelMessageContent = { type: 'image', value: new Blob() };
  const audio: LanguageModelMessageContent = { type: 'audio', value: new ArrayBuffer(8) };
  const bytes: LanguageModelMessageContent = { type: 'audio', value: new Uint8Array(8) };
  const role: LanguageModelMessageRole = 'assistant';
  const messageType: LanguageModelMessageType = 'tool-response';
  const value: LanguageModelMessageValue = 'text';
  console.log(image, audio, bytes, role, messageType, value);

  // -- streaming: text pieces, and whole tool calls
  const stream: ReadableStream<LanguageModelStreamChunk> = session.promptStreaming('Tell me a story', {
    responseConstraint: /[A-Z][a-z ]+\./, signal: controller.signal,
  });
  let story = '';
  for await (const chunk of stream) {
    if (typeof chunk === 'string') story += chunk;
    else console.log(chunk.type, chunk.value.name, chunk.value.arguments);
  }
  const reader = session.promptStreaming([{ role: 'user', content: 'Again' }]).getReader();
  const first = await reader.read();
  if (!first.done) console.log(first.value);

  // -- append, measure, clone, destroy
  const appended: void = await session.append('Remember: Paris.', { signal: controller.signal });
  await session.append([{ role: 'user', content: [{ type: 'text', value: 'And Lyon.' }] }]);
  const measured: number = await session.measureContextUsage(story, promptOptions);
  const measuredPlain: number = await session.measureContextUsage([{ role: 'user', content: 'x' }]);
  const appendOptions: LanguageModelAppendOptions = { signal: controller.signal };
  const cloneOptions: LanguageModelCloneOptions = { signal: controller.signal };
  const copy: LanguageModel = await session.clone(cloneOptions);
  const copy2 = await copy.clone();
  await copy2.append('x', appendOptions);
  console.log(appended, measured, measuredPlain);
  copy.destroy();
  copy2.destroy();
  const destroyable: DestroyableModel = session;
  destroyable.destroy();

  // -- errors: QuotaExceededError (the runtime installs one where the browser lacks it)
  try {
    await session.prompt('x'.repeat(100_000));
  } catch (error) {
    if (error instanceof QuotaExceededError) {
      const requested: number | null = error.requested;
      const quota: number | null = error.quota;
      console.log(requested, quota, error.name, error.message);
    } else if (error instanceof DOMException && error.name === 'InvalidStateError') {
      console.log('destroyed');
    }
  }
  const quotaOptions: QuotaExceededErrorOptions = { quota: 1000, requested: 1200 };
  const made: DOMException = new QuotaExceededError('too long', quotaOptions);
  const bare = new QuotaExceededError();
  console.log(made, bare);

  // -- instanceof narrows
  const something: unknown = session;
  if (something instanceof LanguageModel) console.log(something.contextWindow);
}

// -- the closed loop: tools with execute, hooks, limits ----------------------------

async function closedLoop(): Promise<void> {
  const tool: LanguageModelToolDeclaration = {
    name: 'get_weather',
    description: 'Get the current weather for a location',
    inputSchema: weatherSchema,
    annotations: { readOnlyHint: true },
    execute: async ({ location }: { location: string }, { callId, signal }: LanguageModelToolExecuteInfo) => {
      const response = await fetch(`/weather?q=${location}&id=${callId}`, { signal });
      return response.json();
    },
  };
  const annotations: LanguageModelToolAnnotations = {};
  const session = await LanguageModel.create({
    expectedOutputs: [{ type: 'tool-call' }],
    tools: [
      tool,
      { name: 'now', description: 'The time', inputSchema: { type: 'object' }, annotations, execute: () => Date.now() },
      { name: 'sync', description: 'Sync', inputSchema: { type: 'object' }, execute: (_args, info) => info.signal.aborted },
    ],
    maxParallelToolCalls: 4,
    maxToolRounds: 10,
    beforeToolCall: (call, { signal }) => {
      if (signal.aborted) return undefined;
      return call.arguments?.location === 'Mars' ? { deny: 'out of range' } : undefined;
    },
    afterToolCall: async (call, response) => {
      if (response instanceof LanguageModelToolError) {
        return { context: [{ role: 'user', content: `Retry ${call.name}: ${response.errorMessage}` }] };
      }
      console.log(call.callId, response.result);
    },
  });
  // A closed-loop prompt() resolves with text; the types still give the union.
  const answer = await session.prompt('What is the weather in Paris?');
  console.log(typeof answer === 'string' ? answer : answer.length);
  const withHooks = await LanguageModel.create({
    expectedOutputs: [{ type: 'tool-call' }],
    tools: [tool],
    beforeToolCall: async () => null,
    afterToolCall: () => ({ context: 'Keep it short.' }),
  });
  withHooks.destroy();
  session.destroy();
}

// -- extension-only members: absent in web pages, so guarded ----------------------

async function extensionOnly(): Promise<void> {
  if (LanguageModel.params) {
    const params: LanguageModelParams | null = await LanguageModel.params();
    if (params) console.log(params.defaultTopK, params.maxTopK, params.defaultTemperature, params.maxTemperature);
  }
  const params = await LanguageModel.params?.();
  const session = await LanguageModel.create({ topK: 3, temperature: 0.5 });
  if (session.measureInputUsage) {
    const usage: number = await session.measureInputUsage('Hi', { omitResponseConstraintInput: false });
    console.log(usage);
  }
  const inputUsage: number | undefined = session.inputUsage;
  const inputQuota: number | undefined = session.inputQuota;
  const topK: number | undefined = session.topK;
  const temperature: number | undefined = session.temperature;
  if ('onquotaoverflow' in session) {
    session.onquotaoverflow = function (event) {
      console.log(this.inputQuota, event.type);
    };
  }
  console.log(params?.maxTopK, inputUsage, inputQuota, topK, temperature);
}

export { closedLoop, extensionOnly, openLoop, runtimeObject };
