// @ts-check
/**
 * One scene's connection: the socket, the `connect` handshake, request and reply, and getting
 * the connection back when it is lost (backoff with jitter, `goingAway`, a heartbeat for links
 * that died quietly). The feature modules (scenes, preferences, documents, drag and drop)
 * talk to the server only through it.
 *
 * It touches no DOM: the socket constructor, the storage and the timers are injected.
 *
 * @module connection
 */
import { AppliedDrops } from './applied-drops.js';
import { backoffDelay } from './backoff.js';
import { closedError, destroyedError, disconnectedError } from './errors.js';
import { RequestTable } from './requests.js';
import { SessionStore } from './session-store.js';

/** @typedef {import('../types/panes-client.js').ClientOptions} ClientOptions */
/** @typedef {import('../types/panes-client.js').ConnectResult} ConnectResult */
/** @typedef {import('../types/panes-client.js').ConnectEvent} ConnectEvent */
/** @typedef {import('../types/panes-client.js').LifecycleState} LifecycleState */
/** @typedef {import('../types/panes-client.js').RequestOptions} RequestOptions */
/** @typedef {import('../types/panes-client.js').SocketLike} SocketLike */
/** @typedef {import('../types/panes-client.js').Status} Status */
/** @typedef {import('../types/panes-client.js').StatusChange} StatusChange */
/** @typedef {import('../types/panes-client.js').Timers} Timers */
/** @typedef {import('../types/panes-client.js').Traits} Traits */
/** @typedef {import('./errors.js').PanesError} PanesError */

export const PROTOCOL_VERSION = 1;
export const SUBPROTOCOL = 'panes.v1';
export const CLIENT_VERSION = 'panes-client/0.2.0';

/** Close codes after which the client does not resume its session. */
const CLOSE_SESSION_DESTROYED = 4001;
const CLOSE_SESSION_TAKEN = 4002;
/** The scene's token expired: reconnect at once with a new one (when `auth` can make one). */
const CLOSE_TOKEN_EXPIRED = 4010;
/** The node lost its lease on the shared database: another node resumes the session at once. */
const CLOSE_NODE_LOST = 4011;
/**
 * Too many failed authentications came from this address: the `connect` was refused unchecked
 * (`rate_limited`, whose `retryAfterMs` the client already waits for); never sooner than that.
 */
const CLOSE_AUTH_LIMITED = 4012;

/** @type {Timers} */
const defaultTimers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle),
  now: () => Date.now(),
};

/**
 * The socket factory the options ask for: `createSocket`, else a `WebSocket` constructor
 * (given, or the global one).
 * @param {ClientOptions} options
 * @returns {(url: string, protocol: string) => SocketLike}
 */
function socketFactory(options) {
  if (options.createSocket) return options.createSocket;
  const Constructor = options.WebSocket ?? /** @type {any} */ (globalThis).WebSocket;
  if (typeof Constructor !== 'function') {
    throw new TypeError(
      'panes-client: there is no global WebSocket here (Node 20 has none without --experimental-websocket); ' +
        "pass one: new PanesClient({ url, WebSocket }) with `import WebSocket from 'ws'`",
    );
  }
  return (url, protocol) => new Constructor(url, protocol);
}

export class Connection {
  /** @readonly */ url;
  /** @readonly */ workspace;
  /** @type {Record<string, any> | (() => Record<string, any> | Promise<Record<string, any>>)} */
  #auth;
  #clientName;
  /** @type {Traits | (() => Traits)} the `traits` option */
  #traits;
  /** @type {Traits | null} the traits reported since (`setTraits`): they win over the option */
  traits = null;
  /** @type {LifecycleState} the state `connect` reports */
  lifecycle;
  /** @type {LifecycleState | null} the state the last `connect` sent reported */
  lifecycleSent = null;
  #store;
  #appliedDrops;
  #createSocket;
  /** @type {Timers} */
  timers;
  random;
  #requestTimeoutMs;
  #connectTimeoutMs;
  #heartbeatMs;
  #backoff;
  #emit;

  /** @type {Status} */
  status = 'idle';
  /** @type {ConnectResult | null} */
  connectResult = null;
  /** Connections made so far. */
  epoch = 0;
  requests;

  /** @type {SocketLike | null} */
  #socket = null;
  /** The current socket opened: the server was reached. */
  #opened = false;
  /** Failed attempts since the last connection. */
  #attempt = 0;
  /** @type {{ reconnectAfterMs: number } | null} */
  #goingAway = null;
  // The key of the last `connect` sent, kept while it has had no answer (its socket went, or
  // it was told to retry), so the next `connect` asking the same is its retry: a session it
  // made is attached, not made again.
  /** @type {{ key: string, asks: string } | null} */
  #connectKey = null;
  /** @type {{ session: string, animation: string } | null} set by `sessionDestroyed`, before its close */
  #destroying = null;
  #closedByUser = false;
  #lastReceivedAt = 0;
  /** The last `rate_limited` connect's `retryAfterMs`: how long a close with 4012 waits at least. */
  #authRetryAfterMs = 1000;
  /** @type {any} */ #reconnectTimer = null;
  /** @type {any} */ #connectTimer = null;
  /** @type {any} */ #heartbeatTimer = null;
  /** @type {Set<(event: ConnectEvent) => void>} */
  #connectHooks = new Set();
  /** @type {(value: ConnectResult) => void} */
  #resolveReady = () => {};
  /** @type {(error: PanesError) => void} */
  #rejectReady = () => {};
  /** @type {Promise<ConnectResult>} */
  ready;

  /**
   * @param {ClientOptions} options
   * @param {(type: string, payload: any) => void} emit delivers an event to the client's subscribers
   */
  constructor(options, emit) {
    if (!options || typeof options.url !== 'string') throw new TypeError('panes-client: `url` is required');
    this.url = options.url;
    this.workspace = options.workspace ?? 'default';
    this.#auth = options.auth ?? {};
    this.#clientName = options.client ?? CLIENT_VERSION;
    this.#traits = options.traits ?? { width: 'regular', pointer: 'fine' };
    this.lifecycle = options.lifecycle ?? { visible: true, focused: true };
    this.#store = new SessionStore(options.storage ?? null, options.storageKey ?? `panes.session.${this.workspace}`, options.ticket ?? null);
    this.#appliedDrops = new AppliedDrops(options.storage ?? null, `${options.storageKey ?? `panes.session.${this.workspace}`}.drops`);
    this.#createSocket = socketFactory(options);
    this.timers = { ...defaultTimers, ...options.timers };
    this.random = options.random ?? Math.random;
    this.#requestTimeoutMs = options.requestTimeoutMs ?? 15000;
    this.#connectTimeoutMs = options.connectTimeoutMs ?? 15000;
    this.#heartbeatMs = options.heartbeatMs ?? 25000;
    this.#backoff = options.backoff ?? {};
    this.#emit = emit;
    this.requests = new RequestTable(this.timers, this.random);
    this.requests.resend = (entry) => {
      if (this.connected && this.#socket) this.#send(entry);
      else this.requests.queue(entry);
    };
    this.ready = new Promise((resolve, reject) => {
      this.#resolveReady = resolve;
      this.#rejectReady = reject;
    });
    this.ready.catch(() => {}); // callers that never await it must not see an unhandled rejection
  }

  get connected() {
    return this.status === 'connected';
  }

  /** Ended for good: closed, destroyed, or failed. */
  get finished() {
    return this.status === 'closed' || this.status === 'destroyed' || this.status === 'failed';
  }

  // MARK: Lifetime

  start() {
    if (this.status === 'idle') this.#openSocket();
    return this.ready;
  }

  close() {
    if (this.finished) return;
    this.#closedByUser = true;
    this.#clearTimers();
    this.#releaseSocket('closed by the client');
    this.status = 'closed';
    this.requests.failAll((type) => closedError(type), true);
    this.#setStatus({ status: 'closed' });
  }

  reconnectNow() {
    if (this.status !== 'reconnecting' || this.#socket) return;
    this.#openSocket();
  }

  dropConnection() {
    if (this.#socket) this.#abandonSocket(1006, 'dropped by the client');
  }

  /**
   * @param {(event: ConnectEvent) => void} hook
   * @returns {() => void}
   */
  onEveryConnection(hook) {
    this.#connectHooks.add(hook);
    if (this.connected && this.connectResult) hook({ result: this.connectResult, first: false, sessionChanged: false });
    return () => {
      this.#connectHooks.delete(hook);
    };
  }

  // MARK: Requests

  /**
   * @param {string} type
   * @param {Record<string, any>} [fields]
   * @param {RequestOptions} [options]
   * @returns {Promise<any>}
   */
  request(type, fields = {}, options = {}) {
    const { timeoutMs = this.#requestTimeoutMs, queue = true, idempotencyKey } = options;
    if (this.finished) return Promise.reject(this.status === 'destroyed' ? destroyedError(type) : closedError(type));
    const { entry, promise } = this.requests.create(type, fields, timeoutMs, { queue, key: idempotencyKey });
    if (this.connected && this.#socket) this.#send(entry);
    else if (queue) this.requests.queue(entry);
    else this.requests.fail(entry, disconnectedError(type));
    return promise;
  }

  /** @param {import('./requests.js').Entry} entry */
  #send(entry) {
    const frame = this.requests.frameFor(entry);
    try {
      this.#write(frame);
    } catch {
      this.requests.fail(entry, disconnectedError(entry.type));
    }
  }

  /** @param {Record<string, any>} message */
  #write(message) {
    if (!this.#socket) throw new Error('no socket');
    this.#socket.send(JSON.stringify(message));
  }

  // MARK: Socket

  /** @param {StatusChange} change */
  #setStatus(change) {
    this.status = change.status;
    this.#emit('status', change);
  }

  #openSocket() {
    this.timers.clearTimeout(this.#reconnectTimer);
    this.#reconnectTimer = null;
    this.#setStatus({ status: this.epoch === 0 ? 'connecting' : 'reconnecting', attempt: this.#attempt });
    /** @type {SocketLike} */
    let socket;
    try {
      socket = this.#createSocket(this.url, SUBPROTOCOL);
    } catch {
      this.#scheduleReconnect(this.#nextBackoff(true));
      return;
    }
    this.#socket = socket;
    this.#opened = false;
    socket.onopen = () => {
      if (this.#socket !== socket) return;
      this.#opened = true;
      this.#sendConnect();
    };
    socket.onmessage = (event) => {
      if (this.#socket === socket) this.#receive(event.data);
    };
    socket.onclose = (event) => {
      if (this.#socket === socket) this.#socketClosed(event.code, event.reason ?? '');
    };
    socket.onerror = () => {}; // a close event follows
    this.#connectTimer = this.timers.setTimeout(() => {
      if (this.#socket === socket && !this.connected) this.#abandonSocket(4000, 'connect timed out');
    }, this.#connectTimeoutMs);
  }

  /**
   * Sends `connect` on the current socket, once `auth` is known (a function may fetch a fresh
   * token first).
   */
  #sendConnect() {
    const socket = this.#socket;
    const auth = this.#auth;
    if (typeof auth !== 'function') {
      this.#sendConnectWith(auth);
      return;
    }
    Promise.resolve()
      .then(() => auth())
      .then(
        (value) => {
          if (this.#socket === socket) this.#sendConnectWith(value ?? {});
        },
        () => {
          // The application could not provide credentials now: try again later.
          if (this.#socket === socket) this.#abandonSocket(1000, 'no credentials', this.#nextBackoff(false));
        },
      );
  }

  /**
   * A new token for later connections, after `refreshToken` replaced the scene's.
   * @param {string} token
   */
  tokenRefreshed(token) {
    if (typeof this.#auth !== 'function') this.#auth = { ...this.#auth, token };
  }

  /**
   * The traits the next `connect` reports: the last ones reported, else the option's.
   * @returns {Traits}
   */
  nextTraits() {
    if (this.traits) return { ...this.traits };
    const traits = this.#traits;
    return { ...(typeof traits === 'function' ? traits() : traits) };
  }

  /** @param {Record<string, any>} auth */
  #sendConnectWith(auth) {
    const fields = {
      protocol: PROTOCOL_VERSION,
      client: this.#clientName,
      workspace: this.workspace,
      auth,
      traits: this.nextTraits(),
      state: { ...this.lifecycle },
      ...this.#store.connectFields(),
    };
    this.lifecycleSent = fields.state;
    // What the server compares a retry with (its fingerprint): another ask needs another key.
    const asks = JSON.stringify([fields.workspace, fields.session?.id ?? null, fields.ticket ?? null]);
    if (this.#connectKey?.asks !== asks) this.#connectKey = { key: this.requests.newKey(), asks };
    // Outside the request table's timeouts: the connect timer covers it.
    const { entry, promise } = this.requests.create('connect', fields, this.#connectTimeoutMs + 1000,
      { queue: false, key: this.#connectKey.key });
    promise.then(
      (result) => {
        this.#connectKey = null;
        this.#didConnect(/** @type {ConnectResult} */ (result));
      },
      (error) => {
        // Answered (not retry-class): the next connect asks anew.
        if (error.action !== 'retry' && error.code !== 'disconnected') this.#connectKey = null;
        if (error.code !== 'disconnected' && error.code !== 'closed') this.#connectFailed(error);
      },
    );
    this.#send(entry);
  }

  /** @param {ConnectResult} result */
  #didConnect(result) {
    if (this.finished) return;
    this.timers.clearTimeout(this.#connectTimer);
    const previous = this.connectResult?.session.persistentIdentifier ?? null;
    const first = this.epoch === 0;
    this.connectResult = result;
    this.#store.store({ id: result.session.persistentIdentifier, secret: result.session.secret });
    if (this.#store.ticket) {
      this.#store.ticket = null;
      this.#emit('ticketUsed', {});
    }
    this.#attempt = 0;
    this.#goingAway = null;
    this.epoch += 1;
    this.#lastReceivedAt = this.timers.now();
    this.#setStatus({ status: 'connected' });
    this.#scheduleHeartbeat();
    /** @type {ConnectEvent} */
    const event = { result, first, sessionChanged: previous !== null && previous !== result.session.persistentIdentifier };
    for (const hook of [...this.#connectHooks]) {
      try {
        hook(event);
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
    }
    for (const entry of this.requests.takeQueued()) this.#send(entry);
    this.#emit('connect', event);
    if (first) this.#resolveReady(result);
  }

  /** @param {PanesError} error */
  #connectFailed(error) {
    if (this.finished) return;
    this.#emit('connectError', error);
    if (error.code === 'ticket_invalid' && this.#store.ticket) {
      // Used, expired, or another user's: carry on with the stored session, or a new one.
      this.#store.ticket = null;
      this.#emit('ticketUsed', { invalid: true });
      this.#sendConnect();
      return;
    }
    if (error.code === 'session_not_found' && this.#store.stored) {
      // Gone (discarded, expired) or not ours: the protocol says start a new one.
      this.#store.store(null);
      this.#sendConnect();
      return;
    }
    if (error.action === 'retry' || error.code === 'timeout') {
      // A `rate_limited` connect is followed by close 4012: the wait holds for that too.
      if (error.code === 'rate_limited') this.#authRetryAfterMs = error.retryAfterMs ?? 1000;
      const wait = Math.max(error.retryAfterMs ?? 0, this.#nextBackoff(false));
      this.#abandonSocket(1000, 'retrying later', wait);
      return;
    }
    // `fix` or `giveUp`: trying again cannot help.
    this.#clearTimers();
    this.#releaseSocket('cannot connect');
    this.status = 'failed';
    this.requests.failAll((type) => closedError(type), true);
    this.#setStatus({ status: 'failed', error });
    this.#emit('error', error);
    this.#rejectReady(error);
  }

  /**
   * Gives up on the current socket without waiting for its close handshake, and reconnects.
   * @param {number} code
   * @param {string} reason
   * @param {number} [wait] overrides the backoff delay
   */
  #abandonSocket(code, reason, wait) {
    if (!this.#releaseSocket(reason)) return;
    this.#socketClosed(code, reason, wait);
  }

  /**
   * Lets go of the socket without hearing from it again: its handlers are detached first, so
   * its own close event cannot start a reconnect. Returns whether there was one.
   * @param {string} reason
   */
  #releaseSocket(reason) {
    const socket = this.#socket;
    if (!socket) return false;
    this.#socket = null;
    socket.onopen = socket.onmessage = socket.onclose = socket.onerror = null;
    try {
      socket.close(1000, reason);
    } catch {
      /* already closed */
    }
    return true;
  }

  /**
   * @param {number} code
   * @param {string} reason
   * @param {number} [wait]
   */
  #socketClosed(code, reason, wait) {
    this.#socket = null;
    const reached = this.#opened;
    this.timers.clearTimeout(this.#connectTimer);
    this.timers.clearTimeout(this.#heartbeatTimer);
    const wasConnected = this.connected;
    if (this.#closedByUser || this.finished) return;
    if (code === CLOSE_SESSION_DESTROYED || this.#destroying) {
      this.#destroyed();
      return;
    }
    // Requests with a key wait for the next connection and go again with it.
    this.requests.failAll((type) => disconnectedError(type), false, { keepKeyed: true });
    if (code === CLOSE_SESSION_TAKEN) this.#store.store(null); // another connection resumed it: start anew
    if (wasConnected) this.#emit('disconnect', { code, reason });
    let delay = wait ?? this.#nextBackoff(!reached);
    if (code === CLOSE_TOKEN_EXPIRED) delay = 0; // nothing is wrong with the server: get a new token and come back
    // The load balancer sends the reconnect to a node that can serve it; a little jitter so a
    // node's windows do not all arrive in the same millisecond.
    if (code === CLOSE_NODE_LOST) delay = Math.round(this.random() * 250);
    if (code === CLOSE_AUTH_LIMITED) delay = Math.max(delay, this.#authRetryAfterMs);
    if (this.#goingAway) {
      delay = this.#goingAway.reconnectAfterMs + Math.round(this.random() * 250);
      this.#goingAway = null;
    }
    this.#scheduleReconnect(delay);
  }

  /** @param {boolean} unreachable the last attempt never reached the server */
  #nextBackoff(unreachable) {
    return backoffDelay(this.#attempt++, this.#backoff, this.random, { unreachable });
  }

  /** @param {number} delay */
  #scheduleReconnect(delay) {
    this.timers.clearTimeout(this.#reconnectTimer);
    const retryAt = this.timers.now() + delay;
    this.#setStatus({ status: 'reconnecting', attempt: this.#attempt, retryAt });
    this.#reconnectTimer = this.timers.setTimeout(() => {
      this.#reconnectTimer = null;
      this.#openSocket();
    }, delay);
  }

  #scheduleHeartbeat() {
    if (!this.#heartbeatMs) return;
    this.timers.clearTimeout(this.#heartbeatTimer);
    this.#heartbeatTimer = this.timers.setTimeout(() => this.#heartbeat(), this.#heartbeatMs);
  }

  #heartbeat() {
    if (!this.connected) return;
    const idle = this.timers.now() - this.#lastReceivedAt;
    if (idle < this.#heartbeatMs) {
      this.#heartbeatTimer = this.timers.setTimeout(() => this.#heartbeat(), this.#heartbeatMs - idle);
      return;
    }
    const epoch = this.epoch;
    this.request('ping', {}, { queue: false, timeoutMs: Math.min(10000, this.#heartbeatMs) }).catch((error) => {
      // No answer: the link is dead even if the socket has not noticed. Reconnect.
      if (error.code === 'timeout' && epoch === this.epoch && this.#socket) this.#abandonSocket(1006, 'heartbeat timed out');
    });
    this.#scheduleHeartbeat();
  }

  #clearTimers() {
    this.timers.clearTimeout(this.#reconnectTimer);
    this.timers.clearTimeout(this.#connectTimer);
    this.timers.clearTimeout(this.#heartbeatTimer);
    this.#reconnectTimer = this.#connectTimer = this.#heartbeatTimer = null;
  }

  /**
   * The session is gone (close 4001): stop for good. Requests still unanswered are rejected
   * now, with an error that says so; replies that came before the close were delivered.
   */
  #destroyed() {
    const event = this.#destroying ?? { session: this.connectResult?.session.persistentIdentifier ?? '', animation: 'standard' };
    this.#clearTimers();
    this.#releaseSocket('session destroyed');
    this.#store.store(null);
    this.status = 'destroyed';
    this.requests.failAll((type) => destroyedError(type), true);
    this.#setStatus({ status: 'destroyed' });
    this.#emit('destroyed', event);
  }

  // MARK: Frames

  /** @param {any} data */
  #receive(data) {
    this.#lastReceivedAt = this.timers.now();
    /** @type {any} */
    let message;
    try {
      message = JSON.parse(typeof data === 'string' ? data : String(data));
    } catch {
      return; // the server only sends JSON objects; anything else is ignored
    }
    if (!message || typeof message !== 'object' || typeof message.type !== 'string') return;
    if (message.type === 'reply') {
      this.requests.settle(message);
      return;
    }
    switch (message.type) {
      case 'sessionDestroyed':
        // The close (4001) follows; replies that come before it are still delivered.
        this.#destroying = { session: String(message.session ?? ''), animation: String(message.animation ?? 'standard') };
        break;
      case 'goingAway':
        this.#goingAway = { reconnectAfterMs: Number(message.reconnectAfterMs) || 0 };
        break;
      case 'itemsDropped':
        // A drag's items reach a window at least once: one delivered again (the same `drag`)
        // is not handed to the listeners twice.
        if (typeof message.drag === 'string' && !this.#appliedDrops.first(message.drag)) return;
        break;
    }
    this.#emit(message.type, message);
  }
}
