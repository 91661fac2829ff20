// The extension's settings (chrome.storage.local "settings") and what they mean.

/**
 * @typedef {object} Settings
 * @property {string} model 'echo', a named model ('smollm2'), or the base URL of a model folder
 * @property {string} dtype '' for the model's default
 * @property {string} device 'wasm' or 'webgpu'
 * @property {string} install 'auto': only where the browser's own LanguageModel is missing
 *   or unavailable; 'force': everywhere
 * @property {string[]} blocked origins that never get the API
 */

/** @type {Readonly<Settings>} */
export const DEFAULT_SETTINGS = Object.freeze({
  model: 'echo', dtype: '', device: 'wasm', install: 'auto', blocked: [],
});

/** Named models: where users get them (nothing is fetched until a page's create()). */
export const NAMED_MODELS = Object.freeze({
  smollm2: {
    url: 'https://huggingface.co/HuggingFaceTB/SmolLM2-135M-Instruct/resolve/main/', dtype: 'fp32',
  },
});

/** The pages the API is offered to: every secure web page (http only on localhost). */
export const MATCHES = ['https://*/*', 'http://localhost/*', 'http://127.0.0.1/*'];

/** The engine's init configuration for `settings`. */
export function engineConfig(settings) {
  if (settings.model === 'echo') return { model: 'echo' };
  const named = NAMED_MODELS[settings.model];
  const config = { model: named ? named.url : settings.model, device: settings.device || 'wasm' };
  const dtype = settings.dtype || named?.dtype;
  if (dtype) config.dtype = dtype;
  return config;
}

/** @returns {Promise<Settings>} */
export async function readSettings() {
  const { settings } = await chrome.storage.local.get('settings');
  return { ...DEFAULT_SETTINGS, ...settings };
}
