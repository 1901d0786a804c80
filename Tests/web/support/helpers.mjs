// Shared by the tests against the real server: clients on their own workspace, and waiting for
// events (never for time).
import { PanesClient } from '../../../web/panes-client.js';
import { WebSocket } from './server.mjs';

let workspaces = 0;

/** A workspace of the calling test's own, so tests on one server never see each other. */
export function freshWorkspace(name = 'w') {
  workspaces += 1;
  return `${name.replace(/[^A-Za-z0-9]/g, '').slice(0, 40)}-${process.pid}-${workspaces}`;
}

/** `sessionStorage` in memory. */
export class MemoryStorage {
  constructor(entries = {}) {
    this.map = new Map(Object.entries(entries));
  }
  getItem(key) {
    return this.map.has(key) ? this.map.get(key) : null;
  }
  setItem(key, value) {
    this.map.set(key, String(value));
  }
  removeItem(key) {
    this.map.delete(key);
  }
  copy() {
    return new MemoryStorage(Object.fromEntries(this.map));
  }
}

/**
 * A client of `server`, not started. Backoff is short so reconnects are quick; the heartbeat
 * is off unless asked for.
 * @param {{ url: string }} server
 * @param {Partial<import('../../../web/types/panes-client.js').ClientOptions>} [options]
 */
export function clientOf(server, options = {}) {
  const client = new PanesClient({
    url: server.url,
    auth: { name: 'alice' },
    storage: new MemoryStorage(),
    WebSocket,
    heartbeatMs: 0,
    backoff: { baseMs: 20, maxMs: 200, unreachableMaxMs: 100 },
    ...options,
  });
  opened.add(client);
  return client;
}

/** Every client a test made, closed by `closeAll`. */
const opened = new Set();

export function closeAll() {
  for (const client of opened) client.close();
  opened.clear();
}

/**
 * The next `type` event of `source` for which `predicate` holds.
 * @param {{ on: (type: string, listener: (payload: any) => void) => () => void }} source
 * @param {string} type
 * @param {(payload: any) => boolean} [predicate]
 * @returns {Promise<any>}
 */
export function next(source, type, predicate = () => true) {
  return new Promise((resolve) => {
    const off = source.on(type, (payload) => {
      if (!predicate(payload)) return;
      off();
      resolve(payload);
    });
  });
}

/**
 * Resolves once `test()` holds, checked now and after every `type` event of `source`.
 * @param {{ on: (type: string, listener: (payload: any) => void) => () => void }} source
 * @param {string} type
 * @param {() => boolean} test
 */
export function until(source, type, test) {
  if (test()) return Promise.resolve();
  return next(source, type, () => test()).then(() => undefined);
}

/** Resolves once every document session is open, acknowledged, and at the same revision. */
export async function converged(sessions) {
  const done = () => sessions.every((s) => s.status === 'open' && s.synchronized && s.revision === sessions[0].revision);
  while (!done()) {
    await new Promise((resolve) => {
      const offs = sessions.flatMap((s) => ['change', 'saved', 'status'].map((type) => s.on(type, () => wake())));
      const wake = () => {
        for (const off of offs) off();
        resolve(undefined);
      };
    });
  }
}

/** Resolves when `client` is connected (now, or at its next connection). */
export function connected(client) {
  return until(client, 'status', () => client.status === 'connected');
}

/**
 * Collects what a callback receives; `atLeast(n)` resolves once it has `n` entries.
 * @template T
 */
export class Recorder {
  /** @type {T[]} */
  items = [];
  /** @type {Array<() => void>} */
  #waiters = [];
  /** The callback to hand out. */
  add = (/** @type {T} */ item) => {
    this.items.push(item);
    for (const wake of this.#waiters.splice(0)) wake();
  };

  /** @param {number} count */
  async atLeast(count) {
    while (this.items.length < count) await new Promise((resolve) => this.#waiters.push(() => resolve(undefined)));
    return this.items;
  }
}
