// Members the IDL exposes only in extension contexts: LanguageModel.params(),
// the deprecated measureInputUsage()/inputUsage/inputQuota/onquotaoverflow,
// and topK/temperature. A window has none of them.

import { PARAMS } from './protocol.js';

// @ts-ignore: `chrome` exists only in extension contexts.
export const EXTENSION_CONTEXT = !!globalThis.chrome?.runtime?.id;

/** Add the extension-only members to the LanguageModel class. */
export function addExtensionMembers(LanguageModel, sampling) {
  const quotaOverflowHandlers = new WeakMap();
  const members = {
    measureInputUsage(input, options = {}) {
      return this.measureContextUsage(input, options);
    },
    get inputUsage() { return this.contextUsage; },
    get inputQuota() { return this.contextWindow; },
    get topK() { return sampling(this).topK; },
    get temperature() { return sampling(this).temperature; },
    get onquotaoverflow() { return quotaOverflowHandlers.get(this) ?? null; },
    set onquotaoverflow(handler) {
      if (!quotaOverflowHandlers.has(this)) {
        this.addEventListener('quotaoverflow', (event) => {
          const current = quotaOverflowHandlers.get(this);
          if (typeof current === 'function') current.call(this, event);
        });
      }
      quotaOverflowHandlers.set(this, typeof handler === 'function' ? handler : null);
    },
  };
  Object.defineProperties(LanguageModel.prototype, Object.getOwnPropertyDescriptors(members));
  Object.defineProperty(LanguageModel, 'params', {
    value: async function params() {
      return { ...PARAMS };
    },
    writable: true,
    configurable: true,
  });
}
