// The extension's message channels. A page (MAIN world) hands the bridge (its
// isolated content script) one end of a MessageChannel; the bridge and the
// extension's own pages reach the engine's router (the offscreen document) over a
// chrome.runtime port named PORT_NAME. Both carry the worker protocol's JSON text.

/** The window message a page sends with its MessageChannel port. */
export const CONNECT = 'prompt-api-runtime:connect';
/** The chrome.runtime port name the router accepts. */
export const PORT_NAME = 'prompt-api-runtime';

/** A protocol `boot-error` for a channel that broke: every pending and later call rejects. */
export function brokenChannel(message) {
  return JSON.stringify({ kind: 'boot-error', error: { name: 'OperationError', message } });
}
