// Transports (web/src/transport.js's seam) for the extension: a page's, over a
// MessageChannel to its bridge, and an extension page's, over a chrome.runtime port.

import { CONNECT, PORT_NAME, brokenChannel } from './channel.js';

/** @typedef {import('../src/transport.js').Transport} Transport */

/** @implements {Transport} */
export class PageChannelTransport {
  /** @type {MessagePort | null} */
  #port = null;

  start(onMessage) {
    if (this.#port) return;
    const channel = new MessageChannel();
    channel.port1.onmessage = (event) => onMessage(event.data);
    this.#port = channel.port1;
    window.postMessage({ [CONNECT]: true }, '*', [channel.port2]);
  }

  /** @param {string} text */
  post(text) {
    this.#port?.postMessage(text);
  }
}

/** @implements {Transport} */
export class ExtensionPortTransport {
  /** @type {any} */
  #port = null;
  /** @type {string[] | null} messages sent before the router is ready */
  #queue = [];

  start(onMessage) {
    if (this.#port) return;
    // @ts-ignore: `chrome` exists in extension pages.
    const runtime = chrome.runtime;
    this.#port = {};
    runtime.sendMessage({ kind: 'engine' }).then((answer) => {
      if (answer?.error) throw new Error(answer.error);
      const port = runtime.connect({ name: PORT_NAME });
      port.onMessage.addListener((text) => onMessage(text));
      port.onDisconnect.addListener(() => onMessage(brokenChannel('The extension\'s engine stopped.')));
      for (const text of this.#queue ?? []) port.postMessage(text);
      this.#queue = null;
      this.#port = port;
    }, (error) => onMessage(brokenChannel(`The extension's engine did not start: ${error?.message ?? error}`)));
  }

  /** @param {string} text */
  post(text) {
    if (this.#queue) this.#queue.push(text);
    else this.#port.postMessage(text);
  }
}
