// The engine's router, in the extension's offscreen document: one engine (the
// runtime worker) for every tab, reached by each page's bridge and each extension
// page over its own chrome.runtime port. Each connection has its own request ids;
// the router gives every request an engine-wide id, and a connection may name only
// the sessions it created: another page's sessions are invisible to it. A closed
// connection (a closed tab) has its requests aborted and its sessions destroyed.

/** @typedef {{post: (text: string) => void}} Engine */

const SETTLES = new Set(['prompt', 'append']); // the page answers their return with `settle`
const SESSION_RESULTS = new Set(['create', 'clone']);

class Connection {
  /** @param {(text: string) => void} send */
  constructor(send) {
    this.send = send;
    this.open = true;
    /** @type {Map<number, number>} the connection's request id -> the engine's */
    this.ids = new Map();
    /** @type {Set<number>} the sessions this connection created */
    this.sessions = new Set();
  }
}

/**
 * One request in flight: its connection, the connection's id for it, its kind, and
 * whether it has returned and waits for the connection's settle (prompt, append).
 * @typedef {{connection: Connection, id: number, kind: string, returned: boolean}} Request
 */

export class Router {
  #engine;
  #config;
  #initialized = false;
  #nextId = 1;
  /** @type {Map<number, Request>} by engine id */
  #requests = new Map();
  /** @type {string | null} the engine's boot-error, answered to every later call */
  #bootError = null;
  /** @type {Set<Connection>} */
  #connections = new Set();

  /**
   * @param {Engine} engine
   * @param {object} config the engine's `init` configuration (the extension's settings)
   */
  constructor(engine, config) {
    this.#engine = engine;
    this.#config = config;
  }

  /**
   * A new client connection: returns its handlers for incoming text and for its end.
   * @param {(text: string) => void} send
   */
  connect(send) {
    const connection = new Connection(send);
    this.#connections.add(connection);
    if (this.#bootError) send(this.#bootError);
    return {
      receive: (/** @type {string} */ text) => this.#fromClient(connection, text),
      close: () => this.#close(connection),
    };
  }

  /** What is open, over all connections: the options page and the tests read it. */
  status() {
    let sessions = 0;
    for (const connection of this.#connections) sessions += connection.sessions.size;
    return { connections: this.#connections.size, sessions, requests: this.#requests.size };
  }

  /** A reply from the engine. @param {string} text */
  fromEngine(text) {
    const reply = JSON.parse(text);
    if (reply.kind === 'boot-error') {
      this.#bootError = text;
      const connections = new Set([...this.#requests.values()].map((r) => r.connection));
      this.#requests.clear();
      for (const connection of connections) if (connection.open) connection.send(text);
      return;
    }
    const request = this.#requests.get(reply.id);
    if (!request) return; // the router's own destroy
    const { connection, id, kind } = request;
    if (reply.kind === 'return' && SETTLES.has(kind)) {
      request.returned = true;
      if (!connection.open) this.#settle(reply.id, false);
    } else if (reply.kind === 'return' || reply.kind === 'throw') {
      this.#requests.delete(reply.id);
      connection.ids.delete(id);
      if (reply.kind === 'return' && SESSION_RESULTS.has(kind)) {
        if (connection.open) connection.sessions.add(reply.value.session);
        else this.#destroy(reply.value.session);
      }
    }
    if (connection.open) connection.send(JSON.stringify({ ...reply, id }));
  }

  #toEngine(message) {
    if (!this.#initialized) {
      this.#initialized = true;
      this.#engine.post(JSON.stringify({ kind: 'init', config: this.#config }));
    }
    this.#engine.post(JSON.stringify(message));
  }

  #settle(engineId, keep) {
    const request = this.#requests.get(engineId);
    this.#requests.delete(engineId);
    request?.connection.ids.delete(request.id);
    this.#toEngine({ kind: 'settle', target: engineId, keep });
  }

  #destroy(session) {
    this.#toEngine({ kind: 'destroy', id: this.#nextId++, session });
  }

  /** @param {Connection} connection @param {string} text */
  #fromClient(connection, text) {
    let message;
    try {
      message = JSON.parse(text);
    } catch {
      return;
    }
    if (message.kind === 'init') return; // the engine runs on the extension's settings
    if (message.kind === 'abort' || message.kind === 'settle') {
      const target = connection.ids.get(message.target);
      const request = target === undefined ? undefined : this.#requests.get(target);
      if (!request) return;
      if (message.kind === 'settle' && request.returned) this.#settle(target, !!message.keep);
      else if (message.kind === 'abort' && !request.returned) this.#toEngine({ kind: 'abort', target });
      return;
    }
    if (typeof message.id !== 'number') return;
    if (this.#bootError) {
      connection.send(this.#bootError);
      return;
    }
    if ('session' in message && !connection.sessions.has(message.session)) {
      // Not a session of this connection: answered as for a destroyed one.
      const error = { name: 'InvalidStateError', message: 'The session has been destroyed.' };
      connection.send(JSON.stringify({ kind: 'throw', id: message.id, error }));
      return;
    }
    if (message.kind === 'stats') {
      // The engine's counts cover every page's sessions: not for one page to read.
      const error = { name: 'NotSupportedError', message: 'stats() is not available in the extension.' };
      connection.send(JSON.stringify({ kind: 'throw', id: message.id, error }));
      return;
    }
    if (message.kind === 'destroy') connection.sessions.delete(message.session);
    const engineId = this.#nextId++;
    connection.ids.set(message.id, engineId);
    this.#requests.set(engineId, { connection, id: message.id, kind: message.kind, returned: false });
    this.#toEngine({ ...message, id: engineId });
  }

  /** A closed connection: abort what runs, refuse what waits, destroy its sessions. */
  #close(connection) {
    if (!connection.open) return;
    connection.open = false;
    this.#connections.delete(connection);
    for (const [engineId, request] of [...this.#requests]) {
      if (request.connection !== connection) continue;
      if (request.returned) this.#settle(engineId, false);
      else this.#toEngine({ kind: 'abort', target: engineId });
    }
    for (const session of connection.sessions) this.#destroy(session);
    connection.sessions.clear();
  }
}
