// @ts-check
/**
 * The Panes client: one scene's connection to a Panes server (PROTOCOL.md), with everything
 * a window needs around it.
 *
 * - Connect and resume: keeps the session's identifier and secret in a `Storage`
 *   (`sessionStorage` in a browser), prefers a window ticket when it has one, stores the new
 *   session of a forked (duplicated) tab, and reconnects with backoff and jitter.
 * - Requests are promises with timeouts; a failed one rejects with a `PanesError` carrying the
 *   protocol's `code`. Server events are subscriptions: `client.on('activate', …)`.
 * - Catch-up after a reconnect: observations are re-made and whatever changed meanwhile is
 *   delivered as a change, watched lists are re-read, open documents catch up (documents.js).
 *
 * It touches no DOM: the socket, the storage and the timers are injected, so it runs in node
 * tests with a fake transport. `browser.js` wires it to a real window.
 *
 * @module panes-client
 */
import { backoffDelay } from './backoff.js';
import { Emitter } from './emitter.js';
import { PanesError, closedError, disconnectedError, timeoutError } from './errors.js';

export const PROTOCOL_VERSION = 1;
export const SUBPROTOCOL = 'panes.v1';
export const CLIENT_VERSION = 'panes-web/0.1';

/**
 * An activity (NSUserActivity): what a window shows, handed between windows and kept for
 * state restoration.
 * @typedef {object} Activity
 * @property {string} activityType
 * @property {string} [title]
 * @property {Record<string, any>} [userInfo]
 * @property {string} [targetContentIdentifier]
 */

/** @typedef {{ width: 'compact' | 'regular', pointer: 'fine' | 'coarse' }} Traits */
/** @typedef {{ visible: boolean, focused: boolean }} LifecycleState */

/**
 * A session as `connect` returns it.
 * @typedef {object} Session
 * @property {string} persistentIdentifier
 * @property {string} secret
 * @property {string} role
 * @property {string} configuration
 * @property {string} title
 * @property {Record<string, any>} userInfo
 * @property {Activity | null} [stateRestorationActivity]
 * @property {Record<string, any> | null} [restorationMetadata]
 * @property {number} createdAt
 * @property {number} lastActiveAt
 */

/**
 * The result of `connect`.
 * @typedef {object} ConnectResult
 * @property {string} scene
 * @property {string} workspace
 * @property {{ id: string, name: string, role: string }} user
 * @property {Session} session
 * @property {boolean} created
 * @property {string | null} forkedFrom
 * @property {{ userActivities: Activity[] }} connectionOptions
 * @property {{ status: 'none' | 'restored' | 'stale' | 'incompatible' | 'superseded' | 'cleanStart' }} restoration
 * @property {Traits} traits
 * @property {{ version: string, protocol: number }} server
 * @property {Record<string, number>} limits
 */

/**
 * One entry of the switcher (`listSessions`).
 * @typedef {object} SessionSummary
 * @property {string} persistentIdentifier
 * @property {string} title
 * @property {{ text?: string, image?: string } | null} [snapshot]
 * @property {string} configuration
 * @property {string} role
 * @property {string} state `foregroundActive`, `foregroundInactive`, `background`, `unattached` or `disconnected`
 * @property {string | null} [scene]
 * @property {string | null} [targetContentIdentifier]
 * @property {number} createdAt
 * @property {number} lastActiveAt
 */

/** @typedef {{ sessions: SessionSummary[], appState: string }} SessionList */

/**
 * A `preferenceChanged` event, as observers see it.
 * @typedef {object} PreferenceChange
 * @property {string} domain
 * @property {string} keyPath the key that changed (at or below the observed key path)
 * @property {number} [version]
 * @property {any} [new] the value now (absent when removed with no default)
 * @property {any} [old] the value before, when the observation asked for `old`
 * @property {boolean} [initial] sent because the observation asked for `initial`
 * @property {boolean} [isDefault] the value is the registered default
 * @property {boolean} [exists] false: the key has neither a value nor a default
 * @property {boolean} [removed] the value was removed
 * @property {boolean} [catchUp] a change made while this client was disconnected
 */

/**
 * @typedef {object} ObserveOptions
 * @property {boolean} [initial] deliver the current values first
 * @property {boolean} [old] include the value before each change
 * @property {boolean} [new] include the new value (default true)
 */

/**
 * A handle on an observation: `stop()` ends it; `ready` settles once the server has taken it
 * (and the `initial` values were delivered).
 * @typedef {object} ObservationHandle
 * @property {() => void} stop
 * @property {Promise<void>} ready
 */

/**
 * The part of a WebSocket the client uses, so a fake can stand in for it.
 * @typedef {object} SocketLike
 * @property {(data: string) => void} send
 * @property {(code?: number, reason?: string) => void} close
 * @property {((event?: any) => void) | null} onopen
 * @property {((event: { data: any }) => void) | null} onmessage
 * @property {((event: { code: number, reason?: string }) => void) | null} onclose
 * @property {((event?: any) => void) | null} onerror
 */

/** @typedef {(url: string, protocol: string) => SocketLike} SocketFactory */

/**
 * @typedef {object} Timers
 * @property {(callback: () => void, ms: number) => any} setTimeout
 * @property {(handle: any) => void} clearTimeout
 * @property {() => number} now
 */

/**
 * A `Storage` subset (`sessionStorage`).
 * @typedef {{ getItem(key: string): string | null, setItem(key: string, value: string): void, removeItem(key: string): void }} StorageLike
 */

/**
 * @typedef {'idle' | 'connecting' | 'connected' | 'reconnecting' | 'closed' | 'destroyed' | 'failed'} Status
 */

/**
 * @typedef {object} StatusChange
 * @property {Status} status
 * @property {number} [attempt] reconnection attempts so far
 * @property {number} [retryAt] when the next attempt starts (timers' clock)
 * @property {PanesError} [error] why it failed, for `failed`, or the last connect error
 */

/**
 * @typedef {object} ConnectEvent
 * @property {ConnectResult} result
 * @property {boolean} first the first connection of this client
 * @property {boolean} sessionChanged the session differs from the previous connection's (a
 *   fork, or a session that was gone and was replaced by a new one): push your state again
 */

/**
 * @typedef {object} ClientOptions
 * @property {string} url the WebSocket URL, e.g. `ws://127.0.0.1:8080/ws`
 * @property {string} [workspace] default `default`
 * @property {Record<string, any>} [auth] e.g. `{ name: 'Alice' }` or `{ token: '…' }`
 * @property {string} [client] client name and version, kept in restoration metadata
 * @property {Traits | (() => Traits)} [traits]
 * @property {LifecycleState} [lifecycle] the initial lifecycle report
 * @property {StorageLike | null} [storage] where the session's identifier and secret live
 * @property {string} [storageKey] default `panes.session.<workspace>`
 * @property {string | null} [ticket] a window ticket; wins over the stored session
 * @property {SocketFactory} [createSocket] default: the global `WebSocket`
 * @property {Partial<Timers>} [timers]
 * @property {() => number} [random] for backoff jitter
 * @property {number} [requestTimeoutMs] default 15000
 * @property {number} [connectTimeoutMs] default 15000
 * @property {number} [heartbeatMs] send a `ping` after this long without traffic, and drop the
 *   connection when it goes unanswered; 0 disables; default 25000
 * @property {import('./backoff.js').BackoffOptions} [backoff]
 */

/**
 * @typedef {object} RequestOptions
 * @property {number} [timeoutMs]
 * @property {boolean} [queue] while disconnected, wait for the connection (default) rather than fail
 */

/**
 * @typedef {object} PendingRequest
 * @property {string} type
 * @property {Record<string, any>} fields
 * @property {(value: any) => void} resolve
 * @property {(error: PanesError) => void} reject
 * @property {any} timer
 * @property {number} id
 */

/**
 * @typedef {object} ObservationRecord
 * @property {number} key
 * @property {string} domain
 * @property {string} keyPath
 * @property {ObserveOptions} options
 * @property {(change: PreferenceChange) => void} callback
 * @property {number | null} serverId
 * @property {number} epoch the connection it is registered on
 * @property {boolean} established the server took it at least once
 * @property {boolean} stopped
 * @property {Map<string, string>} known key path → JSON of the last value delivered
 * @property {() => void} ready
 */

const defaultTimers = /** @type {Timers} */ ({
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle),
  now: () => Date.now(),
});

/** Close codes after which the client does not reconnect on its own. */
const CLOSE_SESSION_DESTROYED = 4001;
const CLOSE_SESSION_TAKEN = 4002;

/**
 * @extends {Emitter<Record<string, any>>}
 */
export class PanesClient extends Emitter {
  /** @param {ClientOptions} options */
  constructor(options) {
    super();
    this.url = options.url;
    this.workspace = options.workspace ?? 'default';
    this.auth = options.auth ?? {};
    this.clientName = options.client ?? CLIENT_VERSION;
    this.traits = options.traits ?? { width: 'regular', pointer: 'fine' };
    /** @type {LifecycleState} */
    this.lifecycleState = options.lifecycle ?? { visible: true, focused: true };
    this.storage = options.storage ?? null;
    this.storageKey = options.storageKey ?? `panes.session.${this.workspace}`;
    this.ticket = options.ticket ?? null;
    this.createSocket =
      options.createSocket ?? ((url, protocol) => /** @type {SocketLike} */ (/** @type {unknown} */ (new WebSocket(url, protocol))));
    this.timers = { ...defaultTimers, ...options.timers };
    this.random = options.random ?? Math.random;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 15000;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 15000;
    this.heartbeatMs = options.heartbeatMs ?? 25000;
    this.backoff = options.backoff ?? {};

    /** @type {Status} */
    this.status = 'idle';
    /** @type {SocketLike | null} */
    this.socket = null;
    this.nextId = 1;
    /** @type {Map<number, PendingRequest>} */
    this.pending = new Map();
    /** @type {PendingRequest[]} requests waiting for a connection */
    this.outbox = [];
    /** Failed connection attempts since the last success. */
    this.attempt = 0;
    /** Counts connections; state tied to one connection remembers its epoch. */
    this.epoch = 0;
    /** @type {ConnectResult | null} */
    this.connectResult = null;
    /** Request types this server answered with `unknown_type`. @type {Set<string>} */
    this.unsupported = new Set();
    /** @type {Map<number, ObservationRecord>} */
    this.observations = new Map();
    /** @type {Map<number, ObservationRecord>} server observation id → record, this connection */
    this.serverObservations = new Map();
    /** @type {Map<number, PreferenceChange[]>} initial events that came before their reply */
    this.unclaimedInitial = new Map();
    this.nextObservationKey = 1;
    /** @type {Set<(event: ConnectEvent) => void>} run on every connection, before queued requests */
    this.connectHooks = new Set();
    /** @type {{ reconnectAfterMs: number } | null} */
    this.goingAway = null;
    this.closedByUser = false;
    this.lastReceivedAt = 0;
    /** @type {any} */ this.reconnectTimer = null;
    /** @type {any} */ this.connectTimer = null;
    /** @type {any} */ this.heartbeatTimer = null;
    this.lifecycleInFlight = false;
    this.lifecycleDirty = false;
    /** @type {(value: ConnectResult) => void} */
    this.resolveReady = () => {};
    /** @type {(error: PanesError) => void} */
    this.rejectReady = () => {};
    /** Settles with the first connection (or the error that made connecting hopeless). */
    this.ready = /** @type {Promise<ConnectResult>} */ (
      new Promise((resolve, reject) => {
        this.resolveReady = resolve;
        this.rejectReady = reject;
      })
    );
    this.ready.catch(() => {}); // callers that never await it must not see an unhandled rejection
  }

  // MARK: Accessors

  /** The session this scene is attached to, once connected. */
  get session() {
    return this.connectResult?.session ?? null;
  }

  /** This scene's identifier on the current connection. */
  get scene() {
    return this.connectResult?.scene ?? null;
  }

  get user() {
    return this.connectResult?.user ?? null;
  }

  get connected() {
    return this.status === 'connected';
  }

  /**
   * False once the server answered a request of this type with `unknown_type`.
   * @param {string} type
   */
  supports(type) {
    return !this.unsupported.has(type);
  }

  // MARK: Connection

  /**
   * Connects (once). Resolves with the first `connect` result; rejects only when connecting
   * cannot succeed (`unauthenticated`, `not_a_member`, `unsupported_protocol`, …). Lost
   * connections are re-made on their own afterwards.
   * @returns {Promise<ConnectResult>}
   */
  start() {
    if (this.status === 'idle') this.openSocket();
    return this.ready;
  }

  /** Closes the connection for good (close code 1000). Pending requests fail with `closed`. */
  close() {
    this.closedByUser = true;
    this.clearTimers();
    this.releaseSocket('closed by the client');
    this.failAll((type) => closedError(type));
    this.setStatus({ status: 'closed' });
  }

  /** Skips the wait before the next reconnection attempt (e.g. when the browser is back online). */
  reconnectNow() {
    if (this.status !== 'reconnecting' || this.socket) return;
    this.timers.clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    this.openSocket();
  }

  /** Drops the connection as if the network failed; it is re-made with backoff. For tests and "retry". */
  dropConnection() {
    if (this.socket) this.abandonSocket(1006, 'dropped by the client');
  }

  /** @param {StatusChange} change */
  setStatus(change) {
    this.status = change.status;
    this.emit('status', change);
  }

  openSocket() {
    this.timers.clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    this.setStatus({ status: this.epoch === 0 ? 'connecting' : 'reconnecting', attempt: this.attempt });
    /** @type {SocketLike} */
    let socket;
    try {
      socket = this.createSocket(this.url, SUBPROTOCOL);
    } catch (error) {
      this.scheduleReconnect(this.nextBackoff());
      return;
    }
    this.socket = socket;
    socket.onopen = () => {
      if (this.socket === socket) this.sendConnect();
    };
    socket.onmessage = (event) => {
      if (this.socket === socket) this.receive(event.data);
    };
    socket.onclose = (event) => {
      if (this.socket === socket) this.socketClosed(event.code, event.reason ?? '');
    };
    socket.onerror = () => {}; // a close event follows
    this.connectTimer = this.timers.setTimeout(() => {
      if (this.socket === socket && this.status !== 'connected') this.abandonSocket(4000, 'connect timed out');
    }, this.connectTimeoutMs);
  }

  /** The stored session to resume, if any. @returns {{ id: string, secret: string } | null} */
  storedSession() {
    try {
      const raw = this.storage?.getItem(this.storageKey);
      if (!raw) return null;
      const parsed = JSON.parse(raw);
      return typeof parsed?.id === 'string' && typeof parsed?.secret === 'string' ? parsed : null;
    } catch {
      return null;
    }
  }

  /** @param {{ id: string, secret: string } | null} session */
  storeSession(session) {
    try {
      if (session) this.storage?.setItem(this.storageKey, JSON.stringify(session));
      else this.storage?.removeItem(this.storageKey);
    } catch {
      /* storage full or blocked: the session simply will not survive a reload */
    }
  }

  sendConnect() {
    const socket = this.socket;
    if (!socket) return;
    /** @type {Record<string, any>} */
    const fields = {
      protocol: PROTOCOL_VERSION,
      client: this.clientName,
      workspace: this.workspace,
      auth: this.auth,
      traits: typeof this.traits === 'function' ? this.traits() : this.traits,
      state: { ...this.lifecycleState },
    };
    const stored = this.storedSession();
    if (this.ticket) fields.ticket = this.ticket;
    else if (stored) fields.session = stored;
    const id = this.nextId++;
    /** @type {PendingRequest} */
    const entry = {
      type: 'connect',
      fields,
      id,
      timer: null,
      resolve: (result) => this.didConnect(/** @type {ConnectResult} */ (result)),
      reject: (error) => this.connectFailed(error),
    };
    this.pending.set(id, entry);
    this.write({ type: 'connect', id, ...fields });
  }

  /** @param {ConnectResult} result */
  didConnect(result) {
    this.timers.clearTimeout(this.connectTimer);
    const previous = this.connectResult?.session.persistentIdentifier ?? null;
    const first = this.epoch === 0;
    this.connectResult = result;
    this.storeSession({ id: result.session.persistentIdentifier, secret: result.session.secret });
    if (this.ticket) {
      this.ticket = null;
      this.emit('ticketUsed', {});
    }
    this.attempt = 0;
    this.goingAway = null;
    this.epoch += 1;
    this.lastReceivedAt = this.timers.now();
    this.serverObservations.clear();
    this.setStatus({ status: 'connected' });
    this.scheduleHeartbeat();
    /** @type {ConnectEvent} */
    const event = {
      result,
      first,
      sessionChanged: previous !== null && previous !== result.session.persistentIdentifier,
    };
    for (const record of this.observations.values()) this.sendObserve(record);
    for (const hook of [...this.connectHooks]) {
      try {
        hook(event);
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
    }
    const queued = this.outbox.splice(0);
    for (const entry of queued) this.sendEntry(entry);
    if (this.lifecycleDirty) this.flushLifecycle();
    this.emit('connect', event);
    if (first) this.resolveReady(result);
  }

  /** @param {PanesError} error */
  connectFailed(error) {
    this.emit('connectError', error);
    if (error.code === 'ticket_invalid' && this.ticket) {
      // Used, expired, or another user's: carry on with the stored session, or a new one.
      this.ticket = null;
      this.emit('ticketUsed', { invalid: true });
      this.sendConnect();
      return;
    }
    if (error.code === 'session_not_found' && this.storedSession()) {
      // Gone (discarded, expired) or not ours: the protocol says start a new one.
      this.storeSession(null);
      this.sendConnect();
      return;
    }
    if (error.action === 'retry' || error.code === 'timeout') {
      const wait = Math.max(error.retryAfterMs ?? 0, this.nextBackoff());
      this.abandonSocket(1000, 'retrying later', wait);
      return;
    }
    // `fix` or `giveUp`: trying again cannot help.
    this.clearTimers();
    this.releaseSocket('cannot connect');
    this.failAll((type) => closedError(type));
    this.setStatus({ status: 'failed', error });
    this.emit('error', error);
    this.rejectReady(error);
  }

  /**
   * Gives up on the current socket without waiting for its close handshake, and reconnects.
   * @param {number} code
   * @param {string} reason
   * @param {number} [wait] overrides the backoff delay
   */
  abandonSocket(code, reason, wait) {
    if (!this.releaseSocket(reason)) return;
    this.socketClosed(code, reason, wait);
  }

  /**
   * Lets go of the socket without hearing from it again: its handlers are detached first, so
   * its own close event cannot start a reconnect. Returns whether there was one.
   * @param {string} reason
   */
  releaseSocket(reason) {
    const socket = this.socket;
    if (!socket) return false;
    this.socket = null;
    detach(socket);
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
  socketClosed(code, reason, wait) {
    this.socket = null;
    this.timers.clearTimeout(this.connectTimer);
    this.timers.clearTimeout(this.heartbeatTimer);
    const wasConnected = this.status === 'connected';
    this.failAll((type) => disconnectedError(type));
    if (this.closedByUser || this.status === 'destroyed' || this.status === 'failed') return;
    if (code === CLOSE_SESSION_DESTROYED) {
      this.destroyed({ session: this.session?.persistentIdentifier ?? '', animation: 'standard' });
      return;
    }
    if (code === CLOSE_SESSION_TAKEN) this.storeSession(null); // another connection resumed it: start anew
    if (wasConnected) this.emit('disconnect', { code, reason });
    let delay = wait ?? this.nextBackoff();
    if (this.goingAway) {
      delay = this.goingAway.reconnectAfterMs + Math.round(this.random() * 250);
      this.goingAway = null;
    }
    this.scheduleReconnect(delay);
  }

  nextBackoff() {
    return backoffDelay(this.attempt++, this.backoff, this.random);
  }

  /** @param {number} delay */
  scheduleReconnect(delay) {
    this.timers.clearTimeout(this.reconnectTimer);
    const retryAt = this.timers.now() + delay;
    this.setStatus({ status: 'reconnecting', attempt: this.attempt, retryAt });
    this.reconnectTimer = this.timers.setTimeout(() => {
      this.reconnectTimer = null;
      this.openSocket();
    }, delay);
  }

  scheduleHeartbeat() {
    if (!this.heartbeatMs) return;
    this.timers.clearTimeout(this.heartbeatTimer);
    this.heartbeatTimer = this.timers.setTimeout(() => this.heartbeat(), this.heartbeatMs);
  }

  heartbeat() {
    if (this.status !== 'connected') return;
    const idle = this.timers.now() - this.lastReceivedAt;
    if (idle < this.heartbeatMs) {
      this.heartbeatTimer = this.timers.setTimeout(() => this.heartbeat(), this.heartbeatMs - idle);
      return;
    }
    const epoch = this.epoch;
    this.request('ping', {}, { queue: false, timeoutMs: Math.min(10000, this.heartbeatMs) })
      .catch((error) => {
        // No answer: the link is dead even if the socket has not noticed. Reconnect.
        if (error.code === 'timeout' && epoch === this.epoch && this.socket) this.abandonSocket(1006, 'heartbeat timed out');
      });
    this.scheduleHeartbeat();
  }

  clearTimers() {
    this.timers.clearTimeout(this.reconnectTimer);
    this.timers.clearTimeout(this.connectTimer);
    this.timers.clearTimeout(this.heartbeatTimer);
    this.reconnectTimer = this.connectTimer = this.heartbeatTimer = null;
  }

  /** @param {(type: string) => PanesError} makeError */
  failAll(makeError) {
    const entries = [...this.pending.values()];
    this.pending.clear();
    if (this.closedByUser || this.status === 'destroyed' || this.status === 'failed') {
      entries.push(...this.outbox.splice(0));
    }
    for (const entry of entries) {
      this.timers.clearTimeout(entry.timer);
      if (entry.type === 'connect') continue;
      entry.reject(makeError(entry.type));
    }
  }

  /**
   * @param {{ session: string, animation: string }} event
   */
  destroyed(event) {
    if (this.status === 'destroyed') return;
    this.clearTimers();
    this.storeSession(null);
    this.setStatus({ status: 'destroyed' });
    this.failAll((type) => closedError(type));
    this.emit('destroyed', event);
  }

  // MARK: Messages

  /** @param {Record<string, any>} message */
  write(message) {
    this.socket?.send(JSON.stringify(message));
  }

  /** @param {any} data */
  receive(data) {
    this.lastReceivedAt = this.timers.now();
    /** @type {any} */
    let message;
    try {
      message = JSON.parse(typeof data === 'string' ? data : String(data));
    } catch {
      return; // the server only sends JSON; ignore anything else
    }
    if (!message || typeof message.type !== 'string') return;
    if (message.type === 'reply') {
      const entry = this.pending.get(message.re);
      if (!entry) return; // timed out already, or a reply to a frame with no readable id
      this.pending.delete(message.re);
      this.timers.clearTimeout(entry.timer);
      if (message.ok) {
        entry.resolve(message.result ?? {});
      } else {
        const error = new PanesError(message.error ?? { code: 'internal_error' }, message.request ?? entry.type);
        if (error.code === 'unknown_type') this.unsupported.add(entry.type);
        entry.reject(error);
      }
      return;
    }
    switch (message.type) {
      case 'preferenceChanged':
        this.preferenceChanged(message);
        break;
      case 'sessionDestroyed':
        this.emit(message.type, message);
        this.destroyed({ session: message.session, animation: message.animation ?? 'standard' });
        return;
      case 'goingAway':
        this.goingAway = { reconnectAfterMs: Number(message.reconnectAfterMs) || 0 };
        break;
    }
    this.emit(message.type, message);
  }

  /**
   * Sends a request and resolves with its result.
   * @param {string} type
   * @param {Record<string, any>} [fields]
   * @param {RequestOptions} [options]
   * @returns {Promise<any>}
   */
  request(type, fields = {}, options = {}) {
    const { timeoutMs = this.requestTimeoutMs, queue = true } = options;
    if (this.status === 'closed' || this.status === 'destroyed' || this.status === 'failed') {
      return Promise.reject(closedError(type));
    }
    return new Promise((resolve, reject) => {
      /** @type {PendingRequest} */
      const entry = { type, fields, resolve, reject, timer: null, id: 0 };
      entry.timer = this.timers.setTimeout(() => {
        const queued = this.outbox.indexOf(entry);
        if (queued >= 0) this.outbox.splice(queued, 1);
        if (entry.id) this.pending.delete(entry.id);
        reject(timeoutError(type, timeoutMs));
      }, timeoutMs);
      if (this.status === 'connected' && this.socket) {
        this.sendEntry(entry);
      } else if (queue) {
        this.outbox.push(entry);
      } else {
        this.timers.clearTimeout(entry.timer);
        reject(disconnectedError(type));
      }
    });
  }

  /** @param {PendingRequest} entry */
  sendEntry(entry) {
    entry.id = this.nextId++;
    this.pending.set(entry.id, entry);
    try {
      this.write({ type: entry.type, id: entry.id, ...entry.fields });
    } catch {
      this.pending.delete(entry.id);
      this.timers.clearTimeout(entry.timer);
      entry.reject(disconnectedError(entry.type));
    }
  }

  /**
   * Runs `hook` on every connection from now on (and now, if connected), before requests
   * queued while disconnected are sent. Returns the function that removes it.
   * @param {(event: ConnectEvent) => void} hook
   * @returns {() => void}
   */
  onEveryConnection(hook) {
    this.connectHooks.add(hook);
    if (this.status === 'connected' && this.connectResult) {
      hook({ result: this.connectResult, first: false, sessionChanged: false });
    }
    return () => {
      this.connectHooks.delete(hook);
    };
  }

  // MARK: Scenes and sessions

  /**
   * Reports visibility and focus; only the latest state is sent, one report at a time.
   * @param {LifecycleState} state
   */
  setLifecycle(state) {
    if (state.visible === this.lifecycleState.visible && state.focused === this.lifecycleState.focused) return;
    this.lifecycleState = { visible: state.visible, focused: state.focused };
    this.lifecycleDirty = true;
    this.flushLifecycle();
  }

  flushLifecycle() {
    if (this.lifecycleInFlight || this.status !== 'connected') return;
    this.lifecycleDirty = false;
    this.lifecycleInFlight = true;
    const sent = { ...this.lifecycleState };
    this.request('lifecycle', sent, { queue: false })
      .catch(() => {
        this.lifecycleDirty = true; // resent with the next connection (connect carries it anyway)
      })
      .finally(() => {
        this.lifecycleInFlight = false;
        if (this.lifecycleDirty && this.status === 'connected') this.flushLifecycle();
      });
  }

  /**
   * Saves the session's state restoration activity (`null` clears it).
   * @param {Activity | null} activity
   * @returns {Promise<{ savedAt: number, metadata: any }>}
   */
  updateActivity(activity) {
    return this.request('updateActivity', { activity });
  }

  /**
   * Sets the session's per-window `userInfo`.
   * @param {Record<string, any>} userInfo
   * @param {{ merge?: boolean }} [options] merge sets only the given keys (null removes one)
   * @returns {Promise<{ userInfo: Record<string, any> }>}
   */
  setUserInfo(userInfo, options = {}) {
    return this.request('setUserInfo', { userInfo, mode: options.merge ? 'merge' : 'replace' });
  }

  /**
   * Lists every session of this user in the workspace, newest first.
   * @returns {Promise<SessionList>}
   */
  listSessions() {
    return this.request('listSessions', { watch: false });
  }

  /**
   * Calls `callback` with the session list now and whenever it changes, across reconnects.
   * @param {(list: SessionList) => void} callback
   * @returns {{ stop: () => void }}
   */
  watchSessions(callback) {
    let stopped = false;
    const offEvent = this.on('sessionsChanged', (/** @type {SessionList} */ list) => {
      if (!stopped) callback(list);
    });
    const offHook = this.onEveryConnection(() => {
      this.request('listSessions', { watch: true }, { queue: false })
        .then((list) => {
          if (!stopped) callback(list);
        })
        .catch(() => {});
    });
    return {
      stop: () => {
        if (stopped) return;
        stopped = true;
        offEvent();
        offHook();
        if (this.connected) this.request('listSessions', { watch: false }, { queue: false }).catch(() => {});
      },
    };
  }

  /**
   * Destroys one of the user's sessions; its window closes with `animation`.
   * @param {string} session a persistentIdentifier (this scene's own, to close this window)
   * @param {'standard' | 'commit' | 'decline'} [animation]
   */
  requestDestruction(session, animation = 'standard') {
    return this.request('requestDestruction', { session, animation });
  }

  /** Round trip to the server. @returns {Promise<{ now: number }>} */
  ping() {
    return this.request('ping');
  }

  // MARK: Preferences

  /**
   * Observes a preference key path (a key, or a subtree), like key-value observing: `callback`
   * hears every change made anywhere, by anyone, in version order. After a reconnect the
   * observation is re-made, and values that changed meanwhile are delivered with `catchUp`.
   * @param {string} keyPath
   * @param {ObserveOptions} options
   * @param {(change: PreferenceChange) => void} callback
   * @param {{ domain?: 'user' | 'workspace' }} [scope]
   * @returns {ObservationHandle}
   */
  observe(keyPath, options, callback, scope = {}) {
    /** @type {() => void} */
    let markReady = () => {};
    const ready = new Promise((resolve) => {
      markReady = () => resolve(undefined);
    });
    /** @type {ObservationRecord} */
    const record = {
      key: this.nextObservationKey++,
      domain: scope.domain ?? 'user',
      keyPath,
      options: { new: true, ...options },
      callback,
      serverId: null,
      epoch: 0,
      established: false,
      stopped: false,
      known: new Map(),
      ready: markReady,
    };
    this.observations.set(record.key, record);
    if (this.status === 'connected') this.sendObserve(record);
    return {
      stop: () => this.stopObservation(record),
      ready,
    };
  }

  /** @param {ObservationRecord} record */
  sendObserve(record) {
    const epoch = this.epoch;
    record.serverId = null;
    // `initial` is always asked for: it seeds what the client knows, so a catch-up after a
    // reconnect can tell what changed; the caller hears it only if it asked.
    const options = ['initial', 'new'];
    if (record.options.old) options.push('old');
    this.request('observe', { domain: record.domain, keyPath: record.keyPath, options }, { queue: false })
      .then((result) => {
        const id = Number(result.observation);
        const initial = this.unclaimedInitial.get(id) ?? [];
        this.unclaimedInitial.delete(id);
        if (epoch !== this.epoch) return;
        if (record.stopped) {
          this.request('unobserve', { observation: id }, { queue: false }).catch(() => {});
          return;
        }
        record.serverId = id;
        record.epoch = epoch;
        this.serverObservations.set(id, record);
        this.deliverInitial(record, initial);
        record.established = true;
        record.ready();
      })
      .catch((error) => {
        if (error.code === 'unknown_type') record.ready(); // no preferences on this server: nothing to wait for
        // Otherwise re-made with the next connection.
      });
  }

  /**
   * @param {ObservationRecord} record
   * @param {PreferenceChange[]} events
   */
  deliverInitial(record, events) {
    const catchUp = record.established;
    const seen = new Set();
    for (const event of events) {
      seen.add(event.keyPath);
      const value = event.exists === false ? undefined : event.new;
      const encoded = value === undefined ? '' : JSON.stringify(value);
      const before = record.known.get(event.keyPath);
      if (encoded === '') record.known.delete(event.keyPath);
      else record.known.set(event.keyPath, encoded);
      if (catchUp) {
        if ((before ?? '') === encoded) continue;
        /** @type {PreferenceChange} */
        const change = { ...event, initial: false, catchUp: true };
        if (record.options.old) change.old = before === undefined || before === '' ? undefined : JSON.parse(before);
        if (encoded === '') change.removed = true;
        record.callback(change);
      } else if (record.options.initial) {
        record.callback(event);
      }
    }
    if (catchUp) {
      for (const [keyPath, before] of [...record.known]) {
        if (seen.has(keyPath)) continue;
        record.known.delete(keyPath);
        /** @type {PreferenceChange} */
        const change = { domain: record.domain, keyPath, removed: true, catchUp: true };
        if (record.options.old) change.old = JSON.parse(before);
        record.callback(change);
      }
    }
  }

  /** @param {any} event */
  preferenceChanged(event) {
    const ids = Array.isArray(event.observations) ? event.observations : [];
    if (event.initial) {
      for (const id of ids) {
        const list = this.unclaimedInitial.get(id) ?? [];
        list.push(event);
        this.unclaimedInitial.set(id, list);
      }
      return;
    }
    for (const id of ids) {
      const record = this.serverObservations.get(id);
      if (!record || record.stopped) continue;
      const value = 'new' in event ? event.new : undefined;
      if (value === undefined) record.known.delete(event.keyPath);
      else record.known.set(event.keyPath, JSON.stringify(value));
      record.callback(event);
    }
  }

  /** @param {ObservationRecord} record */
  stopObservation(record) {
    if (record.stopped) return;
    record.stopped = true;
    this.observations.delete(record.key);
    if (record.serverId !== null) {
      this.serverObservations.delete(record.serverId);
      if (record.epoch === this.epoch && this.connected) {
        this.request('unobserve', { observation: record.serverId }, { queue: false }).catch(() => {});
      }
    }
  }

  /**
   * Sets a preference; every observer in every window hears it.
   * @param {string} keyPath
   * @param {any} value
   * @param {{ domain?: 'user' | 'workspace', ifVersion?: number }} [options]
   * @returns {Promise<{ version: number, changed: boolean }>}
   */
  setPreference(keyPath, value, options = {}) {
    /** @type {Record<string, any>} */
    const fields = { domain: options.domain ?? 'user', keyPath, value };
    if (options.ifVersion !== undefined) fields.ifVersion = options.ifVersion;
    return this.request('setPreference', fields);
  }

  /**
   * Removes a preference (observers then see its default, if one is registered).
   * @param {string} keyPath
   * @param {{ domain?: 'user' | 'workspace', ifVersion?: number }} [options]
   * @returns {Promise<{ version: number, changed: boolean }>}
   */
  removePreference(keyPath, options = {}) {
    /** @type {Record<string, any>} */
    const fields = { domain: options.domain ?? 'user', keyPath };
    if (options.ifVersion !== undefined) fields.ifVersion = options.ifVersion;
    return this.request('removePreference', fields);
  }

  // MARK: Windows

  /**
   * "Open in New Window": brings forward the window that already shows the activity's content
   * (or the named session), or returns a ticket for a new window (`action: 'open'`, `url`).
   * @param {Activity} activity
   * @param {{ session?: string }} [options]
   * @returns {Promise<{ action: 'activated' | 'open', session: string, scene?: string, ticket?: string, url?: string, expiresAt?: number, created?: boolean }>}
   */
  requestActivation(activity, options = {}) {
    /** @type {Record<string, any>} */
    const fields = { activity };
    if (options.session) fields.session = options.session;
    return this.request('requestActivation', fields);
  }

  /**
   * Updates a session's switcher entry: title, snapshot, restoration activity.
   * @param {{ session: string, title?: string, snapshot?: { text?: string, image?: string }, activity?: Activity }} update
   * @returns {Promise<{ session: SessionSummary }>}
   */
  requestRefresh(update) {
    return this.request('requestRefresh', update);
  }

  // MARK: Drag and drop

  /**
   * Starts a drag; put the returned `drag` in the native drag data as `application/x-panes-drag`.
   * @param {Array<{ activity: Activity, operations?: Array<'copy' | 'move'> }>} items
   * @returns {Promise<{ drag: string, expiresAt: number }>}
   */
  beginDrag(items) {
    return this.request('beginDrag', { items });
  }

  /**
   * Drops a drag on this scene, another scene (`scene`), or the new-window zone.
   * @param {string} drag
   * @param {'scene' | 'newWindow'} target
   * @param {{ scene?: string, operation?: 'copy' | 'move' }} [options]
   * @returns {Promise<{ items?: Activity[], delivered?: string, windows?: Array<{ session: string, ticket: string, url: string }>, operation: string }>}
   */
  drop(drag, target, options = {}) {
    /** @type {Record<string, any>} */
    const fields = { drag, target, operation: options.operation ?? 'copy' };
    if (options.scene) fields.scene = options.scene;
    return this.request('drop', fields);
  }

  /**
   * Cancels a drag this scene began (the native drag ended without a drop).
   * @param {string} drag
   */
  cancelDrag(drag) {
    return this.request('cancelDrag', { drag });
  }
}

/**
 * Removes a socket's handlers so nothing it does later reaches the client.
 * @param {SocketLike} socket
 */
function detach(socket) {
  socket.onopen = socket.onmessage = socket.onclose = socket.onerror = null;
}
