// The chat demo: a conversation with the page's LanguageModel (docs/demo.md).
// Streamed answers, the download and the context, the sampling mode, a stop button,
// two closed-loop tools shown inline, and structured output held to a JSON Schema.

/* global promptAPIRuntime */
import { TOOLS, toolExamples } from './demo-tools.js';

const $ = (id) => document.getElementById(id);
const ui = {
  model: $('model-name'),
  availability: $('availability'),
  download: /** @type {HTMLProgressElement} */ ($('download')),
  downloadText: $('download-text'),
  context: /** @type {HTMLMeterElement} */ ($('context')),
  contextText: $('context-text'),
  settings: /** @type {HTMLFieldSetElement} */ ($('settings')),
  samplingMode: /** @type {HTMLSelectElement} */ ($('sampling-mode')),
  tools: /** @type {HTMLInputElement} */ ($('tools')),
  structured: /** @type {HTMLInputElement} */ ($('structured')),
  schemaEditor: $('schema-editor'),
  schema: /** @type {HTMLTextAreaElement} */ ($('schema')),
  conversation: $('conversation'),
  composer: /** @type {HTMLFormElement} */ ($('composer')),
  prompt: /** @type {HTMLTextAreaElement} */ ($('prompt')),
  send: /** @type {HTMLButtonElement} */ ($('send')),
  stop: /** @type {HTMLButtonElement} */ ($('stop')),
  newSession: /** @type {HTMLButtonElement} */ ($('new-session')),
};

// A schema the runtime can hold (docs/constrained-decoding.md lists what is held):
// confidence as a bounded percentage; maxLength keeps a small model's string short.
const DEFAULT_SCHEMA = `{
  "type": "object",
  "properties": {
    "answer": {"type": "string", "maxLength": 200},
    "confidence": {"type": "integer", "minimum": 0, "maximum": 100}
  },
  "required": ["answer", "confidence"]
}`;

const state = {
  session: null, // the current LanguageModel, made at the first prompt
  controller: null, // the running call's AbortController
  turn: null, // the assistant turn the tool hooks draw into
  toolBlocks: new Map(), // callId -> its element, for afterToolCall
};

// The model ---------------------------------------------------------------------

/** ?model=URL&dtype=fp32&device=wasm pick the model, before the first call. */
function configureFromURL() {
  const params = new URLSearchParams(location.search);
  const config = Object.fromEntries(['model', 'dtype', 'device'].flatMap(
    (key) => (params.has(key) ? [[key, params.get(key)]] : [])));
  if (Object.keys(config).length) promptAPIRuntime.configure(config);
  const described = [config.model ?? 'echo', config.dtype, config.device].filter(Boolean);
  ui.model.textContent = described.join(' · ');
}

async function showAvailability() {
  try {
    ui.availability.textContent = await LanguageModel.availability();
  } catch (error) {
    ui.availability.textContent = describeError(error);
  }
}

/** The create() options for the settings chosen now. */
function sessionOptions(signal) {
  const options = {
    samplingMode: ui.samplingMode.value,
    signal,
    monitor: (monitor) => monitor.addEventListener('downloadprogress', showProgress),
  };
  if (!ui.tools.checked) return options;
  return {
    ...options,
    expectedInputs: [{ type: 'tool-call' }, { type: 'tool-response' }], // the examples' parts
    expectedOutputs: [{ type: 'tool-call' }],
    tools: TOOLS,
    initialPrompts: toolExamples(),
    beforeToolCall: (call) => showToolCall(call),
    afterToolCall: (call, response) => showToolResponse(call, response),
  };
}

/** The session for the current settings, made on first use (after a click: the
 * first create() of a downloadable model needs user activation). */
async function currentSession(signal) {
  if (state.session) return state.session;
  const session = await LanguageModel.create(sessionOptions(signal));
  session.addEventListener('contextoverflow', () => {
    addNote('The context overflowed: the oldest turns were dropped.', 'overflow');
    ui.context.classList.add('overflowed');
  });
  state.session = session;
  showContext();
  showAvailability(); // downloaded now
  return session;
}

/** Drop the session (a setting changed): the next prompt starts a new one. */
function newSession() {
  state.controller?.abort();
  state.session?.destroy();
  state.session = null;
  ui.context.classList.remove('overflowed');
  if (!ui.conversation.childElementCount) return;
  const tools = ui.tools.checked ? 'tools on' : 'tools off';
  addNote(`New session: ${ui.samplingMode.value}, ${tools}.`, 'divider');
}

// Prompting ---------------------------------------------------------------------

/** The prompt options: the signal, and the schema when structured output is on. */
function promptOptions(signal) {
  if (!ui.structured.checked) return { signal };
  let responseConstraint;
  try {
    responseConstraint = JSON.parse(ui.schema.value);
  } catch (error) {
    throw new SyntaxError(`The JSON Schema is not JSON: ${error.message}`, { cause: error });
  }
  return { signal, responseConstraint };
}

async function send(text) {
  addTurn('user', 'You').append(textPart(text));
  const turn = addTurn('assistant', 'Model');
  const structured = ui.structured.checked;
  if (structured) turn.classList.add('json');
  setBusy(new AbortController());
  const { signal } = state.controller;
  state.turn = turn;
  // Shown while create() runs (the model's download, on the progress bar).
  const starting = state.session ? null : turn.appendChild(element('div', 'note', 'Starting a session…'));
  try {
    const options = promptOptions(signal);
    const session = await currentSession(signal);
    starting?.remove();
    for await (const chunk of session.promptStreaming(text, options)) appendText(turn, chunk);
    if (structured) showJSON(turn);
  } catch (error) {
    starting?.remove();
    showError(turn, error);
  } finally {
    state.turn = null;
    turn.parentElement.classList.remove('streaming');
    setBusy(null);
    showContext();
  }
}

function setBusy(controller) {
  state.controller = controller;
  ui.settings.disabled = ui.send.disabled = controller !== null;
  ui.stop.disabled = controller === null;
  if (controller === null) ui.prompt.focus();
}

// Drawing -----------------------------------------------------------------------

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

const textPart = (text) => element('div', 'text', text);

/** A turn of the conversation; its parts go into the returned element. */
function addTurn(role, label) {
  const item = element('li', `turn ${role}${role === 'assistant' ? ' streaming' : ''}`);
  const body = element('div', 'body');
  item.append(element('span', 'who', label), body);
  ui.conversation.append(item);
  item.scrollIntoView({ block: 'end' });
  return body;
}

function addNote(text, kind) {
  ui.conversation.append(element('li', `note ${kind}`, text));
}

/** Streamed text goes into the turn's last text part (a tool call starts a new one). */
function appendText(turn, chunk) {
  const last = turn.lastElementChild;
  const part = last?.classList.contains('text') ? last : turn.appendChild(textPart(''));
  part.textContent += chunk;
  turn.parentElement.scrollIntoView({ block: 'end' });
}

/** beforeToolCall: show the call in the answer, as the model made it. */
function showToolCall(call) {
  const block = element('div', 'tool');
  block.append(
    element('span', 'tool-name', call.name),
    element('code', 'tool-arguments', JSON.stringify(call.arguments)),
    element('span', 'tool-result pending', 'running…'),
  );
  state.toolBlocks.set(call.callId, block);
  state.turn?.append(block);
}

/** afterToolCall: show the result (or the error the model was given). */
function showToolResponse(call, response) {
  const result = state.toolBlocks.get(call.callId)?.querySelector('.tool-result');
  state.toolBlocks.delete(call.callId);
  if (!result) return;
  const failed = 'errorMessage' in response;
  result.className = `tool-result${failed ? ' failed' : ''}`;
  result.textContent = failed ? response.errorMessage
    : response.result.map(({ value }) => (typeof value === 'string' ? value : JSON.stringify(value))).join(' ');
}

/** Structured output: the answer pretty-printed, or why it is not JSON. */
function showJSON(turn) {
  const text = turn.textContent;
  try {
    const value = JSON.parse(text);
    turn.replaceChildren(element('pre', 'text', JSON.stringify(value, null, 2)));
  } catch (error) {
    // The echo model ignores constraints; a real model's answer may be cut at the cap.
    turn.append(element('div', 'note', `Not JSON (${error.message}).`));
  }
}

/** An error as "name: message" (DOMExceptions and TypeErrors alike). */
function describeError(error) {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

const HINTS = {
  NotSupportedError: 'The runtime cannot hold the answer to this schema: change or remove the keyword'
    + ' it names (docs/constrained-decoding.md, "Constrained decoding", lists what is held).',
  QuotaExceededError: 'The prompt does not fit in the context window.',
};

function showError(turn, error) {
  const box = element('div', 'error');
  box.setAttribute('role', 'alert');
  box.append(element('strong', '', describeError(error)));
  const hint = HINTS[error?.name];
  if (hint) box.append(element('div', 'hint', hint));
  turn.append(box);
}

/** downloadprogress: `loaded` of `total` (1). */
function showProgress(event) {
  ui.download.value = event.loaded / (event.total || 1);
  ui.downloadText.textContent = `${Math.round(ui.download.value * 100)} %`;
}

function showContext() {
  const session = state.session;
  if (!session) return;
  ui.context.max = session.contextWindow;
  ui.context.value = session.contextUsage;
  ui.context.high = session.contextWindow * 0.8;
  ui.contextText.textContent = `${session.contextUsage} / ${session.contextWindow} tokens`;
}

// Wiring ------------------------------------------------------------------------

function wire() {
  ui.schema.value = DEFAULT_SCHEMA;
  ui.composer.addEventListener('submit', (event) => {
    event.preventDefault();
    const text = ui.prompt.value.trim();
    if (!text || state.controller) return;
    ui.prompt.value = '';
    send(text);
  });
  // Enter sends, Shift+Enter is a new line.
  ui.prompt.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      ui.composer.requestSubmit();
    }
  });
  ui.stop.addEventListener('click', () => {
    state.controller?.abort(new DOMException('Stopped by the user.', 'AbortError'));
  });
  for (const control of [ui.samplingMode, ui.tools]) control.addEventListener('change', newSession);
  ui.newSession.addEventListener('click', newSession);
  ui.structured.addEventListener('change', () => {
    ui.schemaEditor.hidden = !ui.structured.checked;
  });
  ui.schemaEditor.hidden = !ui.structured.checked;
}

configureFromURL();
wire();
showAvailability();
