// @ts-check
/**
 * Requests as promises: each gets an id, a timeout, and exactly one outcome: its reply, a
 * timeout, or the error that ended its connection. Requests made while disconnected wait in
 * an outbox for the next connection (unless asked not to).
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
 */

export class RequestTable {
  #timers;
  #nextId = 1;
  /** @type {Map<number, Entry>} sent, waiting for their reply */
  #pending = new Map();
  /** @type {Entry[]} waiting for a connection */
  #outbox = [];
  /** Request types this server answered with `unknown_type`. @type {Set<string>} */
  unsupported = new Set();

  /** @param {Timers} timers */
  constructor(timers) {
    this.#timers = timers;
  }

  /**
   * A new request, not yet sent nor queued; it times out after `timeoutMs` wherever it is.
   * @param {string} type
   * @param {Record<string, any>} fields
   * @param {number} timeoutMs
   * @returns {{ entry: Entry, promise: Promise<any> }}
   */
  create(type, fields, timeoutMs) {
    /** @type {Entry} */
    const entry = { type, fields, resolve: () => {}, reject: () => {}, timer: null, id: 0 };
    const promise = new Promise((resolve, reject) => {
      entry.resolve = resolve;
      entry.reject = reject;
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
    return { type: entry.type, id: entry.id, ...entry.fields };
  }

  /** @param {Entry} entry */
  queue(entry) {
    this.#outbox.push(entry);
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
   * queued one too (the client will not connect again).
   * @param {(type: string) => PanesError} makeError
   * @param {boolean} includeQueued
   */
  failAll(makeError, includeQueued) {
    const entries = [...this.#pending.values()];
    this.#pending.clear();
    if (includeQueued) entries.push(...this.#outbox.splice(0));
    for (const entry of entries) {
      this.#timers.clearTimeout(entry.timer);
      entry.reject(makeError(entry.type));
    }
  }
}
