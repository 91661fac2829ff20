// Installs the globals and starts the runtime worker.

import { Client } from './client.js';
import { QuotaExceededError, toPageError } from './errors.js';
import { EXTENSION_CONTEXT, addExtensionMembers } from './extension.js';
import { LanguageModel, samplingOf, useClient } from './language-model.js';
import { WorkerTransport } from './transport.js';
import {
  LanguageModelToolCall, LanguageModelToolError, LanguageModelToolSuccess,
} from './tools.js';

/** Read the page's configuration from the script tag's data- attributes. */
function configFromScript(script) {
  const data = script?.dataset ?? {};
  const config = {};
  for (const key of ['model', 'dtype', 'device', 'contextWindow', 'threads', 'toolCallResults']) {
    if (data[key] !== undefined) config[key] = data[key];
  }
  return { config, boot: data.boot ?? 'eager', keepNative: data.native === 'prefer' };
}

/**
 * Define LanguageModel & co. on globalThis and the `promptAPIRuntime`
 * configuration object. `baseURL` is where dist/ lives. A browser's own
 * LanguageModel is replaced (Chromium ships one that is often "unavailable"),
 * unless the script tag says data-native="prefer".
 */
export function install(baseURL, script) {
  const { config, boot, keepNative } = configFromScript(script);
  const client = new Client(new WorkerTransport(new URL('worker.mjs', baseURL).href), config);
  const globals = installGlobals(client, keepNative);
  installRuntime(client);
  if (boot !== 'lazy') client.start();
  return globals;
}

/**
 * The `promptAPIRuntime` object: configuration before the first call, an early
 * start, and the model's speed. In the extension the engine's model is the
 * extension's (its options page); the page-side rules (toolCallResults) are the page's.
 * @param {Client} client
 */
export function installRuntime(client) {
  const runtime = {
    /** Choose the model ({model, dtype, device, contextWindow}) before the first call. */
    configure: (options) => client.configure(options),
    /** Start booting the runtime now (the default unless data-boot="lazy"). */
    start: () => client.start(),
    /** Prefill/decode speed of the configured real model: {promptTokens, decodeTokens}. */
    benchmark: ({ promptTokens = 512, decodeTokens = 128 } = {}) => new Promise((resolve, reject) => {
      client.call('benchmark', { promptTokens, decodeTokens }, {
        ret: resolve, thrown: (error) => reject(toPageError(error)),
      });
    }),
  };
  Object.defineProperty(globalThis, 'promptAPIRuntime', { value: runtime, configurable: true });
}

/**
 * Define LanguageModel & co. on globalThis, on `client` (a page's worker, or the
 * extension's engine). Returns the globals.
 * @param {Client} client
 * @param {boolean} keepNative keep a browser's own globals where it has them
 */
export function installGlobals(client, keepNative) {
  useClient(client);
  if (EXTENSION_CONTEXT) addExtensionMembers(LanguageModel, samplingOf);
  const globals = {
    LanguageModel, LanguageModelToolCall, LanguageModelToolSuccess, LanguageModelToolError,
  };
  if (!globalThis.QuotaExceededError) globals.QuotaExceededError = QuotaExceededError;
  for (const [name, value] of Object.entries(globals)) {
    if (!(keepNative && name in globalThis)) {
      Object.defineProperty(globalThis, name, { value, writable: true, configurable: true });
    }
  }
  return globals;
}
