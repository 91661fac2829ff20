// Errors are created here, in the page's realm, from the engine's
// {name, message, ...fields} (see py_runtime/errors.py).

/** QuotaExceededError (a DOMException, code 22), where the browser lacks one. */
export const QuotaExceededError =
  globalThis.QuotaExceededError ??
  class QuotaExceededError extends DOMException {
    #requested;
    #quota;

    constructor(message = '', options = {}) {
      super(message, 'QuotaExceededError');
      this.#requested = options.requested ?? null;
      this.#quota = options.quota ?? null;
    }

    get requested() {
      return this.#requested;
    }

    get quota() {
      return this.#quota;
    }
  };

/**
 * Rebuild an engine error in the page's realm. `thrown` holds the exceptions
 * page code threw while the shim performed the spec's "?" operations; the
 * engine names them by index and they are rethrown unchanged.
 */
export function toPageError(error, thrown = []) {
  const { name, message } = error;
  switch (name) {
    case 'JSException':
      return thrown[error.index];
    case 'TypeError':
      return new TypeError(message);
    case 'RangeError':
      return new RangeError(message);
    case 'QuotaExceededError':
      return new QuotaExceededError(message, { requested: error.requested, quota: error.quota });
    default:
      return new DOMException(message, name);
  }
}

export function invalidState(message = 'The session has been destroyed.') {
  return new DOMException(message, 'InvalidStateError');
}
