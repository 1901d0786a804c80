// @ts-check
/**
 * The drags whose `itemsDropped` this window has already handed to its listeners, kept in a
 * `Storage` (`sessionStorage` in a browser, so a reload remembers them), the last
 * `APPLIED_DROPS_KEPT` of them. The protocol lets a server deliver one drag's `itemsDropped`
 * again with the same `drag` (PROTOCOL.md, drop): a window applies each drag once.
 *
 * @module applied-drops
 */

/** @typedef {import('../types/panes-client.js').StorageLike} StorageLike */

/** How many drags are remembered: a redelivery comes soon after the first, so a few suffice. */
export const APPLIED_DROPS_KEPT = 64;

export class AppliedDrops {
  #storage;
  #key;
  /** Used when the storage is missing or throws: then only this page remembers. */
  /** @type {string[]} */
  #memory = [];

  /**
   * @param {StorageLike | null} storage
   * @param {string} key
   */
  constructor(storage, key) {
    this.#storage = storage;
    this.#key = key;
  }

  /**
   * Whether `drag` is new to this window; remembers it. Compared as the server's bytes (a
   * JavaScript string compares by code units, never by canonical equivalence).
   * @param {string} drag
   * @returns {boolean}
   */
  first(drag) {
    const applied = this.#load();
    if (applied.includes(drag)) return false;
    applied.push(drag);
    this.#save(applied.slice(-APPLIED_DROPS_KEPT));
    return true;
  }

  /**
   * What the storage holds, and what this page remembers that it does not: a write that failed
   * (storage full) while reads still work left the storage with an older list.
   * @returns {string[]}
   */
  #load() {
    /** @type {string[]} */
    let stored = [];
    try {
      const raw = this.#storage?.getItem(this.#key);
      if (raw) {
        const parsed = JSON.parse(raw);
        if (Array.isArray(parsed)) stored = parsed.filter((d) => typeof d === 'string');
      }
    } catch {
      /* unreadable or blocked: what this page remembers */
    }
    return [...stored, ...this.#memory.filter((d) => !stored.includes(d))];
  }

  /** @param {string[]} applied */
  #save(applied) {
    this.#memory = applied;
    try {
      this.#storage?.setItem(this.#key, JSON.stringify(applied));
    } catch {
      /* storage full or blocked: only this page remembers */
    }
  }
}
