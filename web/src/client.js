// The page side of the worker protocol (see py_runtime/worker.py). One worker
// per page, shared by every session; it boots Pyodide and the engine.

export class WorkerClient {
  #worker = null;
  #workerURL;
  #config;
  #nextId = 1;
  #pending = new Map(); // id -> handlers {progress, chunk, ret, thrown}
  #bootError = null;
  #initialized = false;

  constructor(workerURL, config) {
    this.#workerURL = workerURL;
    this.#config = config;
  }

  /** Start the worker (and so the Pyodide boot) now; idempotent. */
  start() {
    if (this.#worker) return;
    this.#worker = createWorker(this.#workerURL);
    this.#worker.onmessage = (event) => this.#receive(JSON.parse(event.data));
    this.#worker.onerror = (event) => {
      event.preventDefault?.();
      this.#fail({ name: 'OperationError', message: `The runtime worker failed to load: ${event.message ?? 'unknown error'}` });
    };
  }

  /** The page configuration; frozen at the first call into the engine. */
  configure(config) {
    if (this.#initialized) {
      throw new DOMException('The runtime is already configured.', 'InvalidStateError');
    }
    this.#config = { ...this.#config, ...config };
  }

  /** Send a request; `handlers` get its progress, chunks, return value and error. */
  call(kind, payload, handlers) {
    this.start();
    if (!this.#initialized) {
      this.#initialized = true;
      const { model } = this.#config;
      // A model folder's URL is relative to the page, not to the worker.
      const config = model && model !== 'echo'
        ? { ...this.#config, model: new URL(model, document.baseURI).href }
        : this.#config;
      this.#post({ kind: 'init', config });
    }
    const id = this.#nextId++;
    if (this.#bootError) {
      queueMicrotask(() => handlers.thrown(this.#bootError));
      return id;
    }
    this.#pending.set(id, handlers);
    this.#post({ id, kind, ...payload });
    return id;
  }

  abort(target) {
    if (this.#pending.has(target)) this.#post({ kind: 'abort', target });
  }

  settle(target, keep) {
    this.#post({ kind: 'settle', target, keep });
  }

  #post(message) {
    this.#worker.postMessage(JSON.stringify(message));
  }

  #receive(message) {
    if (message.type === 'boot-error') {
      this.#fail(message.error);
      return;
    }
    const handlers = this.#pending.get(message.id);
    if (!handlers) return;
    switch (message.type) {
      case 'progress':
        handlers.progress?.(message.loaded);
        break;
      case 'chunk':
        handlers.chunk?.(message.chunk);
        break;
      case 'return':
        this.#pending.delete(message.id); // a `settle` answer, if any, is sent at once
        handlers.ret(message.value, message.id);
        break;
      case 'throw':
        this.#pending.delete(message.id);
        handlers.thrown(message.error);
        break;
    }
  }

  /** A boot failure rejects every pending and future call, never hangs. */
  #fail(error) {
    this.#bootError = error;
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const handlers of pending) handlers.thrown(error);
  }
}

function createWorker(url) {
  if (new URL(url).origin === location.origin) return new Worker(url, { type: 'module' });
  // A cross-origin script (e.g. from a CDN) cannot start a worker directly.
  const source = `import ${JSON.stringify(url)};`;
  return new Worker(URL.createObjectURL(new Blob([source], { type: 'text/javascript' })), { type: 'module' });
}
