// @ts-check
/**
 * Requests as promises: each gets an id, a timeout, and exactly one outcome: its reply, a
 * timeout, or the error that ended its connection. Requests made while disconnected wait in
 * an outbox for the next connection (unless asked not to).
 *
 * A request that changes stored state carries an `idempotencyKey` (PROTOCOL.md, "What a client
 * may retry"): when its connection drops before the reply, or the server answers
 * `outcome_unknown`, it is sent again with the same key rather than failed, until its timeout,
 * and the server answers it with the first attempt's outcome, applied once.
 *
 * @module requests
 */
import { PanesError, timeoutError } from './errors.js';

/** @typedef {import('../types/panes-client.js').Timers} Timers */

/**
 * @typedef {object} Entry
 * @property {string} type
 * @property {Record<string, any>} fields
 * @property {(value: any) => void} resolve
 * @property {(error: PanesError) => void} reject
 * @property {any} timer
 * @property {number} id 0 until sent
 * @property {string | null} key its `idempotencyKey`, the same for every send of it
 * @property {boolean} queue may wait for a connection (and so be sent again on the next one)
 * @property {boolean} done settled: never sent again
 */

/**
 * The requests whose outcome the server keeps under their `idempotencyKey`: each is sent with
 * one (`connect` takes its own, made by the connection).
 */
export const KEYED_REQUESTS = new Set([
  'setUserInfo', 'updateActivity', 'requestRefresh', 'renameDocument', 'setPreference', 'removePreference',
  'createDocument', 'requestActivation', 'beginDrag', 'deleteDocument', 'requestDestruction', 'drop', 'cancelDrag',
  'saveVersion', 'createDocumentLink',
]);

/**
 * A prefix no other client is likely to have: keys are `prefix:counter`, new for each request.
 * @param {() => number} random
 */
function keyPrefix(random) {
  let prefix = '';
  for (let part = 0; part < 3; part += 1) prefix += Math.floor(random() * 0x100000000).toString(36).padStart(7, '0');
  return prefix;
}

export class RequestTable {
  #timers;
  #nextId = 1;
  #keyPrefix;
  #nextKey = 1;
  // Sends a request again (after `outcome_unknown`): on the socket if connected, else queued.
  /** @type {(entry: Entry) => void} */
  resend = (entry) => this.queue(entry);
  /** @type {Map<number, Entry>} sent, waiting for their reply */
  #pending = new Map();
  /** @type {Entry[]} waiting for a connection */
  #outbox = [];
  /** Request types this server answered with `unknown_type`. @type {Set<string>} */
  unsupported = new Set();

  /**
   * @param {Timers} timers
   * @param {() => number} [random] for the keys' prefix; default `Math.random`
   */
  constructor(timers, random = Math.random) {
    this.#timers = timers;
    this.#keyPrefix = keyPrefix(random);
  }

  /** A new `idempotencyKey`, never given before by this client. */
  newKey() {
    return `${this.#keyPrefix}:${this.#nextKey++}`;
  }

  /**
   * A new request, not yet sent nor queued; it times out after `timeoutMs` wherever it is.
   * @param {string} type
   * @param {Record<string, any>} fields
   * @param {number} timeoutMs
   * @param {{ queue?: boolean, key?: string | null }} [options] `key`: the request's own
   *   `idempotencyKey`; by default a new one for a request that takes one (`KEYED_REQUESTS`)
   * @returns {{ entry: Entry, promise: Promise<any> }}
   */
  create(type, fields, timeoutMs, options = {}) {
    const key = options.key !== undefined ? options.key : KEYED_REQUESTS.has(type) ? this.newKey() : null;
    /** @type {Entry} */
    const entry = { type, fields, resolve: () => {}, reject: () => {}, timer: null, id: 0, key, queue: options.queue ?? true,
      done: false };
    const promise = new Promise((resolve, reject) => {
      entry.resolve = (value) => {
        entry.done = true;
        resolve(value);
      };
      entry.reject = (error) => {
        entry.done = true;
        reject(error);
      };
    });
    entry.timer = this.#timers.setTimeout(() => {
      const queued = this.#outbox.indexOf(entry);
      if (queued >= 0) this.#outbox.splice(queued, 1);
      if (entry.id) this.#pending.delete(entry.id);
      entry.reject(timeoutError(type, timeoutMs));
    }, timeoutMs);
    return { entry, promise };
  }

  /**
   * Gives `entry` an id and records it as sent; returns the frame to send.
   * @param {Entry} entry
   */
  frameFor(entry) {
    entry.id = this.#nextId++;
    this.#pending.set(entry.id, entry);
    return entry.key ? { type: entry.type, id: entry.id, idempotencyKey: entry.key, ...entry.fields }
      : { type: entry.type, id: entry.id, ...entry.fields };
  }

  /** @param {Entry} entry */
  queue(entry) {
    if (!entry.done) this.#outbox.push(entry);
  }

  /** Empties the outbox, oldest first. */
  takeQueued() {
    return this.#outbox.splice(0);
  }

  /**
   * Settles an entry with an error now (sending it failed).
   * @param {Entry} entry
   * @param {PanesError} error
   */
  fail(entry, error) {
    if (entry.id) this.#pending.delete(entry.id);
    this.#timers.clearTimeout(entry.timer);
    entry.reject(error);
  }

  /**
   * A `reply` frame: settles its request. Returns false when no request waits for it (timed
   * out already, or a reply to a frame with no readable id).
   * @param {any} reply
   */
  settle(reply) {
    const entry = typeof reply.re === 'number' ? this.#pending.get(reply.re) : undefined;
    if (!entry) return false;
    this.#pending.delete(reply.re);
    if (!reply.ok && reply.error?.code === 'outcome_unknown' && entry.key && entry.queue) {
      // Whether it was applied is not known yet: sent again with its key, it is answered with
      // what happened (its timeout still runs).
      this.#timers.setTimeout(() => {
        if (!entry.done) this.resend(entry);
      }, reply.error.retryAfterMs ?? 1000);
      entry.id = 0;
      return true;
    }
    this.#timers.clearTimeout(entry.timer);
    if (reply.ok) {
      entry.resolve(reply.result ?? {});
    } else {
      const error = new PanesError(reply.error ?? { code: 'internal_error' }, reply.request ?? entry.type);
      if (error.code === 'unknown_type') this.unsupported.add(entry.type);
      entry.reject(error);
    }
    return true;
  }

  /**
   * Rejects every sent request (their connection is gone) and, with `includeQueued`, every
   * queued one too (the client will not connect again). With `keepKeyed`, a sent request that
   * has an `idempotencyKey` and may wait goes back to the front of the outbox instead, to be
   * sent again with its key on the next connection: it may have been applied, and its retry
   * is then answered with what it did, not applied again.
   * @param {(type: string) => PanesError} makeError
   * @param {boolean} includeQueued
   * @param {{ keepKeyed?: boolean }} [options]
   */
  failAll(makeError, includeQueued, options = {}) {
    let entries = [...this.#pending.values()];
    this.#pending.clear();
    if (options.keepKeyed && !includeQueued) {
      const kept = entries.filter((entry) => entry.key && entry.queue);
      entries = entries.filter((entry) => !(entry.key && entry.queue));
      for (const entry of kept) entry.id = 0;
      this.#outbox.unshift(...kept);
    }
    if (includeQueued) entries.push(...this.#outbox.splice(0));
    for (const entry of entries) {
      this.#timers.clearTimeout(entry.timer);
      entry.reject(makeError(entry.type));
    }
  }
}
