// @ts-check
/**
 * Which session a scene resumes: its identifier and secret, kept in a `Storage`
 * (`sessionStorage` in a browser, so a reload resumes it and a duplicated tab copies it), and
 * a window ticket that wins over it once.
 *
 * @module session-store
 */

/** @typedef {import('../types/panes-client.js').StorageLike} StorageLike */
/** @typedef {{ id: string, secret: string }} StoredSession */

export class SessionStore {
  #storage;
  #key;
  /** @type {string | null} */
  ticket;

  /**
   * @param {StorageLike | null} storage
   * @param {string} key
   * @param {string | null} ticket
   */
  constructor(storage, key, ticket) {
    this.#storage = storage;
    this.#key = key;
    this.ticket = ticket;
  }

  /** The stored session to resume, if any. @returns {StoredSession | null} */
  get stored() {
    try {
      const raw = this.#storage?.getItem(this.#key);
      if (!raw) return null;
      const parsed = JSON.parse(raw);
      return typeof parsed?.id === 'string' && typeof parsed?.secret === 'string' ? parsed : null;
    } catch {
      return null;
    }
  }

  /** @param {StoredSession | null} session */
  store(session) {
    try {
      if (session) this.#storage?.setItem(this.#key, JSON.stringify(session));
      else this.#storage?.removeItem(this.#key);
    } catch {
      /* storage full or blocked: the session simply will not survive a reload */
    }
  }

  /** What `connect` names: the ticket if there is one, else the stored session. */
  connectFields() {
    if (this.ticket) return { ticket: this.ticket };
    const stored = this.stored;
    return stored ? { session: stored } : {};
  }
}
