// Installs the globals and starts the runtime worker.

import { Client } from './client.js';
import { QuotaExceededError, toPageError } from './errors.js';
import { EXTENSION_CONTEXT, addExtensionMembers } from './extension.js';
import { LanguageModel, samplingOf } from './language-model.js';
import { useClient } from './request.js';
import { WorkerTransport } from './transport.js';
import { clearCached, listCached } from '../worker/model-cache.mjs';
import {
  LanguageModelToolCall, LanguageModelToolError, LanguageModelToolSuccess,
} from './tools.js';

const CONFIG_KEYS = [
  'model', 'dtype', 'device', 'contextWindow', 'threads', 'toolCallResults', 'cacheRevalidation',
  'downloadTimeout', 'serverModel', 'serverTimeout', 'jspi',
];

/**
 * Read the page's configuration from the script tag's data- attributes. Without a
 * script tag (an ES module imported by a bundle), the runtime boots at the first
 * call, so that `promptAPIRuntime.configure()` can come first.
 */
function configFromScript(script) {
  const data = script?.dataset ?? {};
  const config = {};
  for (const key of CONFIG_KEYS) {
    if (data[key] !== undefined) config[key] = data[key];
  }
  if (data.assetsUrl !== undefined) config.assetsURL = data.assetsUrl;
  const boot = data.boot ?? (script ? 'eager' : 'lazy');
  return { config, boot, keepNative: data.native === 'prefer' };
}

/**
 * Define LanguageModel & co. on globalThis and the `promptAPIRuntime`
 * configuration object. `baseURL` is where dist/ lives. A browser's own
 * LanguageModel is replaced (Chromium ships one that is often "unavailable"),
 * unless the script tag says data-native="prefer".
 */
export function install(baseURL, script) {
  const { config, boot, keepNative } = configFromScript(script);
  // The worker's URL is read when the runtime starts: assetsURL may be configured until then.
  const workerURL = () => {
    const assets = new URL(client.config.assetsURL ?? baseURL, document.baseURI).href;
    return new URL('worker.mjs', assets.endsWith('/') ? assets : `${assets}/`).href;
  };
  const client = new Client(new WorkerTransport(workerURL), config);
  const globals = installGlobals(client, keepNative);
  installRuntime(client, { cache: true });
  if (boot !== 'lazy') client.start();
  return globals;
}

/**
 * The `promptAPIRuntime` object: configuration before the first call, an early
 * start, and the model's speed. In the extension the engine's model is the
 * extension's (its options page); the page-side rules (toolCallResults) are the page's.
 * @param {Client} client
 * @param {{cache?: boolean}} [parts] `cache`: the page's model cache (not in the
 *   extension, whose cache its options page manages)
 */
export function installRuntime(client, { cache = false } = {}) {
  /** A call into the engine, as a promise of its result (errors of the page's realm). */
  const ask = (kind, payload) => new Promise((resolve, reject) => {
    client.call(kind, payload, { ret: resolve, thrown: (error) => reject(toPageError(error)) });
  });
  const runtime = {
    /** Choose the model ({model, dtype, device, contextWindow}) before the first call. */
    configure: (options) => client.configure(options),
    /** Start booting the runtime now (the default unless data-boot="lazy"). */
    start: () => client.start(),
    /** Prefill/decode speed of the configured real model: {promptTokens, decodeTokens}. */
    benchmark: ({ promptTokens = 512, decodeTokens = 128 } = {}) =>
      ask('benchmark', { promptTokens, decodeTokens }),
    /** What the engine holds now: {sessions, caches, tensors, matchers} (leak checks). */
    stats: () => ask('stats', {}),
  };
  if (cache) {
    // The worker is of the page's origin, so the page sees the same CacheStorage.
    runtime.cache = {
      /** The cached model files: [{url, bytes}]. */
      list: () => listCached(),
      /** Drop every cached model file (the next create() downloads again). */
      clear: () => clearCached(),
    };
  }
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
