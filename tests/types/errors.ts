// What the declarations must reject: every `@ts-expect-error` below must see an error,
// or `tsc -p tests/types` fails ("Unused '@ts-expect-error' directive"). Never run.
import 'prompt-api-runtime';

async function wrongUses(session: LanguageModel): Promise<void> {
  // -- messages
  // @ts-expect-error: 'developer' is not a LanguageModelMessageRole.
  await session.prompt([{ role: 'developer', content: 'Hi' }]);
  // @ts-expect-error: 'video' is not a LanguageModelMessageType.
  await session.prompt([{ role: 'user', content: [{ type: 'video', value: 'x' }] }]);
  // @ts-expect-error: content is required.
  await session.append([{ role: 'user' }]);
  // @ts-expect-error: a number is not a LanguageModelMessageValue.
  await session.append([{ role: 'user', content: [{ type: 'text', value: 42 }] }]);
  // @ts-expect-error: a prompt is a string or messages, not a number.
  await session.prompt(42);
  // @ts-expect-error: prompt() needs its input.
  await session.prompt();

  // -- the result must be narrowed before it is used as a string
  const result = await session.prompt('Hi');
  // @ts-expect-error: the result may be a list of contents.
  result.toUpperCase();
  // @ts-expect-error: ... so it is not assignable to string either.
  const text: string = result;
  if (typeof result !== 'string') {
    const first = result[0];
    // @ts-expect-error: a content may be text, whose value has no callId.
    console.log(first.value.callId);
    // @ts-expect-error: result contents are only text and tool-call.
    if (first.type === 'image') console.log(first);
  }
  for await (const chunk of session.promptStreaming('Hi')) {
    // @ts-expect-error: a chunk may be a tool call.
    chunk.trim();
  }

  // -- create() options
  // @ts-expect-error: 'random' is not a LanguageModelSamplingMode.
  await LanguageModel.create({ samplingMode: 'random' });
  // @ts-expect-error: 'video' is not a LanguageModelMessageType.
  await LanguageModel.availability({ expectedInputs: [{ type: 'video' }] });
  // @ts-expect-error: LanguageModelExpected.type is required.
  await LanguageModel.availability({ expectedOutputs: [{ languages: ['en'] }] });
  // @ts-expect-error: inputSchema is required.
  await LanguageModel.create({ tools: [{ name: 'f', description: 'd' }] });
  // @ts-expect-error: description is required.
  await LanguageModel.create({ tools: [{ name: 'f', inputSchema: {} }] });
  // @ts-expect-error: maxParallelToolCalls is a number.
  await LanguageModel.create({ maxParallelToolCalls: '4' });
  // @ts-expect-error: maxToolRounds is a number.
  await LanguageModel.create({ maxToolRounds: true });
  // @ts-expect-error: execute is a function.
  await LanguageModel.create({ tools: [{ name: 'f', description: 'd', inputSchema: {}, execute: 'run' }] });
  // @ts-expect-error: readOnlyHint is a boolean.
  await LanguageModel.create({ tools: [{ name: 'f', description: 'd', inputSchema: {}, annotations: { readOnlyHint: 1 } }] });
  // @ts-expect-error: beforeToolCall denies with {deny: string}.
  await LanguageModel.create({ beforeToolCall: () => ({ refuse: 'no' }) });
  // @ts-expect-error: afterToolCall adds {context: prompt}.
  await LanguageModel.create({ afterToolCall: () => ({ context: 42 }) });
  // @ts-expect-error: monitor is a callback.
  await LanguageModel.create({ monitor: {} });
  // @ts-expect-error: initialPrompts holds messages.
  await LanguageModel.create({ initialPrompts: ['Hi'] });
  // @ts-expect-error: create() options are a dictionary.
  await LanguageModel.create('echo');
  // @ts-expect-error: availability() takes the core options: no initialPrompts.
  await LanguageModel.availability({ initialPrompts: [] });

  // -- prompt() options
  // @ts-expect-error: responseConstraint is an object (a JSON Schema or a RegExp).
  await session.prompt('Hi', { responseConstraint: '\\d+' });
  // @ts-expect-error: signal is an AbortSignal.
  await session.prompt('Hi', { signal: new AbortController() });
  // @ts-expect-error: append() takes only a signal.
  await session.append('Hi', { responseConstraint: {} });

  // -- the session
  // @ts-expect-error: there is no constructor.
  new LanguageModel();
  // @ts-expect-error: contextUsage is read-only.
  session.contextUsage = 0;
  // @ts-expect-error: contextWindow is read-only.
  session.contextWindow = 0;
  // @ts-expect-error: samplingMode may be null.
  const mode: LanguageModelSamplingMode = session.samplingMode;
  // @ts-expect-error: samplingMode is read-only.
  session.samplingMode = 'balanced';
  // @ts-expect-error: a handler is a function or null.
  session.oncontextoverflow = 'handler';
  // @ts-expect-error: destroy() returns nothing to await on.
  const destroyed: Promise<void> = session.destroy();

  // -- extension-only members are optional: they must be guarded
  // @ts-expect-error: params() may be absent (web pages).
  await LanguageModel.params();
  // @ts-expect-error: measureInputUsage() may be absent (web pages).
  await session.measureInputUsage('Hi');
  // @ts-expect-error: inputQuota may be absent (web pages).
  const quota: number = session.inputQuota;
  // @ts-expect-error: topK is read-only.
  session.topK = 3;

  // -- tool calls and responses
  // @ts-expect-error: a call needs callId (or callID).
  new LanguageModelToolCall({ name: 'f' });
  // @ts-expect-error: 'callid' is neither spelling.
  new LanguageModelToolCall({ callid: 'c', name: 'f' });
  // @ts-expect-error: a success needs its result.
  new LanguageModelToolSuccess({ callId: 'c', name: 'f' });
  // @ts-expect-error: 'json' is not a LanguageModelToolResultType.
  new LanguageModelToolSuccess({ callId: 'c', name: 'f', result: [{ type: 'json', value: {} }] });
  // @ts-expect-error: an error needs its errorMessage.
  new LanguageModelToolError({ callID: 'c', name: 'f' });
  const call = new LanguageModelToolCall({ callId: 'c', name: 'f', arguments: {} });
  // @ts-expect-error: callId is read-only.
  call.callId = 'd';
  // @ts-expect-error: arguments may be null.
  console.log(call.arguments.location);
  // @ts-expect-error: result is frozen.
  new LanguageModelToolSuccess({ callId: 'c', name: 'f', result: [] }).result.push({ type: 'text', value: '' });

  // -- promptAPIRuntime
  // @ts-expect-error: 'sometimes' is not a toolCallResults rule.
  promptAPIRuntime.configure({ toolCallResults: 'sometimes' });
  // @ts-expect-error: 'q3' is not a dtype.
  promptAPIRuntime.configure({ dtype: 'q3' });
  // @ts-expect-error: 'webnn' is not a device.
  promptAPIRuntime.configure({ device: 'webnn' });
  // @ts-expect-error: threads is a number.
  promptAPIRuntime.configure({ threads: 'many' });
  // @ts-expect-error: 'weekly' is not a cacheRevalidation policy.
  promptAPIRuntime.configure({ cacheRevalidation: 'weekly' });
  // @ts-expect-error: assetsURL is a string.
  promptAPIRuntime.configure({ assetsURL: new URL('https://example.com/') });
  // @ts-expect-error: configure() takes a config.
  promptAPIRuntime.configure();
  // @ts-expect-error: benchmark's promptTokens is a number.
  await promptAPIRuntime.benchmark({ promptTokens: '512' });
  // @ts-expect-error: the cache is absent in the extension: guard it.
  await promptAPIRuntime.cache.list();
  const entries = (await promptAPIRuntime.cache?.list()) ?? [];
  // @ts-expect-error: an entry's bytes is a number.
  const size: string = entries[0].bytes;

  console.log(text, mode, destroyed, quota, size);
}

export { wrongUses };
