// CreateMonitor: the object a create() monitor callback receives.

export class CreateMonitor extends EventTarget {
  #ondownloadprogress = null;

  get ondownloadprogress() {
    return this.#ondownloadprogress;
  }

  set ondownloadprogress(handler) {
    if (this.#ondownloadprogress === null) {
      this.addEventListener('downloadprogress', (event) => {
        if (typeof this.#ondownloadprogress === 'function') this.#ondownloadprogress.call(this, event);
      });
    }
    this.#ondownloadprogress = (typeof handler === 'object' && handler) || typeof handler === 'function' ? handler : null;
  }

  /** Fire `downloadprogress` (the engine already rounded `loaded` to 1/65536). */
  dispatchProgress(loaded) {
    this.dispatchEvent(new ProgressEvent('downloadprogress', { loaded, total: 1, lengthComputable: true }));
  }
}

Object.defineProperty(CreateMonitor.prototype, Symbol.toStringTag, {
  value: 'CreateMonitor', configurable: true,
});
