// @ts-check
/**
 * Where a window keeps what it typed until the server has it: each open document's unsent
 * operations (with their op ids), the revision and text they apply to, and the window's undo
 * and redo stacks, keyed by the session's `persistentIdentifier` and the document. A window
 * that comes back (a reload, a crashed tab, a browser restart, reopened from the switcher)
 * finds them under its session and sends them once; a duplicated tab is a new session and
 * finds nothing of its original's.
 *
 * `MemoryPendingStore` is the default (Node, tests: it lasts as long as the process);
 * `IndexedDBPendingStore` is what `connectInBrowser` uses. Any object with the same three
 * methods can be passed as the client's `pendingStore` option.
 *
 * `save` is synchronous on purpose: `DocumentSession.applyLocal` calls it, and the write is
 * under way (an IndexedDB transaction created and asked to commit) before it returns control
 * to the page. The session never changes a record (nor anything in it) after handing it
 * over, so a store may keep it as it is; a store must not change it either.
 *
 * @module pending-store
 */

/** @typedef {import('../types/panes-client.js').PendingKey} PendingKey */
/** @typedef {import('../types/panes-client.js').PendingRecord} PendingRecord */
/** @typedef {import('../types/panes-client.js').PendingStore} PendingStore */

/** @param {PendingKey} key */
const keyString = (key) => JSON.stringify([key.session, key.document]);

/**
 * Kept in memory: survives a reconnect and a re-open in the same process, not a reload.
 * @implements {PendingStore}
 */
export class MemoryPendingStore {
  /** @type {Map<string, PendingRecord>} */
  #records = new Map();

  /** @param {PendingKey} key */
  async load(key) {
    return this.#records.get(keyString(key)) ?? null;
  }

  /**
   * @param {PendingKey} key
   * @param {PendingRecord} record kept as it is: nothing changes it
   */
  save(key, record) {
    this.#records.set(keyString(key), record);
  }

  /** @param {PendingKey} key */
  remove(key) {
    this.#records.delete(keyString(key));
  }

  /**
   * The documents with something kept for a session.
   * @param {string} session
   */
  async documents(session) {
    return [...this.#records.values()].filter((r) => r.session === session).map((r) => r.document);
  }
}

/**
 * In the browser's IndexedDB (database `panes-pending`), which outlives the tab and the browser.
 *
 * Two object stores, both keyed `[session, document]`: `windows` holds everything but the
 * base text, and is written on every local edit; `texts` holds the base text, written only
 * when it changed (`record.base.revision`), so typing into a 1 MB document does not write a
 * megabyte a keystroke (the session moves the base text forward only every few hundred
 * revisions, keeping the operations since in `record.since`).
 *
 * Writes use the browser's default durability: they survive a crashed tab and a browser
 * restart; a power cut may lose the last ones.
 * @implements {PendingStore}
 */
export class IndexedDBPendingStore {
  #name;
  #factory;
  /** @type {Promise<IDBDatabase> | null} */
  #opening = null;
  /** @type {IDBDatabase | null} */
  #db = null;
  #failed = false;
  /**
   * Writes asked for before the database was open, in order.
   * @type {Array<(db: IDBDatabase) => void>}
   */
  #queued = [];
  /**
   * The base revision last written per key.
   * @type {Map<string, number>}
   */
  #textRevision = new Map();

  #maxAgeMs;

  /**
   * @param {{ name?: string, indexedDB?: IDBFactory, maxAgeMs?: number }} [options] `maxAgeMs`:
   *   records not written for this long are deleted when the store opens (default 30 days, the
   *   server's `sessionMaxIdleMs`: by then the session they belong to is gone)
   */
  constructor(options = {}) {
    this.#name = options.name ?? 'panes-pending';
    this.#factory = options.indexedDB ?? globalThis.indexedDB;
    this.#maxAgeMs = options.maxAgeMs ?? 30 * 24 * 3_600_000;
    this.#open()
      .then((db) => this.#sweep(db))
      .catch(() => {});
  }

  /**
   * Deletes records of sessions long gone (a window closed for good, whose session the server
   * discarded): nothing will ever resume them.
   * @param {IDBDatabase} db
   */
  #sweep(db) {
    const cutoff = Date.now() - this.#maxAgeMs;
    const tx = db.transaction(['windows', 'texts'], 'readwrite');
    const texts = tx.objectStore('texts');
    const request = tx.objectStore('windows').openCursor();
    request.onsuccess = () => {
      const cursor = request.result;
      if (!cursor) return;
      if (!(cursor.value?.savedAt >= cutoff)) {
        texts.delete(cursor.primaryKey);
        cursor.delete();
      }
      cursor.continue();
    };
  }

  /** @returns {Promise<IDBDatabase>} */
  #open() {
    if (this.#opening) return this.#opening;
    this.#opening = new Promise((resolve, reject) => {
      const request = this.#factory.open(this.#name, 1);
      request.onupgradeneeded = () => {
        const db = request.result;
        if (!db.objectStoreNames.contains('windows')) db.createObjectStore('windows');
        if (!db.objectStoreNames.contains('texts')) db.createObjectStore('texts');
      };
      request.onsuccess = () => {
        this.#db = request.result;
        for (const write of this.#queued.splice(0)) write(request.result);
        resolve(request.result);
      };
      request.onerror = () => {
        // No IndexedDB here (blocked, or a private mode without it): edits stay in memory only.
        this.#queued = [];
        this.#failed = true;
        reject(request.error);
      };
    });
    return this.#opening;
  }

  /**
   * @param {(db: IDBDatabase) => void} write
   */
  #write(write) {
    if (this.#failed) return;
    if (this.#db) {
      try {
        write(this.#db);
      } catch {
        /* quota or a closing database: what is in memory still goes to the server */
      }
    } else {
      this.#queued.push(write);
    }
  }

  /** @param {PendingKey} key */
  async load(key) {
    const db = await this.#open();
    const id = [key.session, key.document];
    return new Promise((resolve, reject) => {
      const tx = db.transaction(['windows', 'texts'], 'readonly');
      const windows = tx.objectStore('windows').get(id);
      const texts = tx.objectStore('texts').get(id);
      tx.oncomplete = () => {
        const record = windows.result;
        const text = texts.result;
        if (!record || !text || text.revision !== record.base?.revision) return resolve(null);
        this.#textRevision.set(keyString(key), text.revision);
        resolve({ ...record, base: { revision: text.revision, text: text.text } });
      };
      tx.onerror = () => reject(tx.error);
    });
  }

  /**
   * @param {PendingKey} key
   * @param {PendingRecord} record
   */
  save(key, record) {
    const id = [key.session, key.document];
    const k = keyString(key);
    const writeText = this.#textRevision.get(k) !== record.base.revision;
    this.#textRevision.set(k, record.base.revision);
    const { base, ...rest } = record;
    const windowRecord = { ...rest, base: { revision: base.revision } };
    this.#write((db) => {
      const tx = db.transaction(writeText ? ['windows', 'texts'] : ['windows'], 'readwrite');
      tx.objectStore('windows').put(windowRecord, id);
      if (writeText) tx.objectStore('texts').put({ revision: base.revision, text: base.text }, id);
      // Asks for the commit now rather than when this task ends.
      /** @type {any} */ (tx).commit?.();
    });
  }

  /** @param {PendingKey} key */
  remove(key) {
    const id = [key.session, key.document];
    this.#textRevision.delete(keyString(key));
    this.#write((db) => {
      const tx = db.transaction(['windows', 'texts'], 'readwrite');
      tx.objectStore('windows').delete(id);
      tx.objectStore('texts').delete(id);
      /** @type {any} */ (tx).commit?.();
    });
  }

  /**
   * The documents with something kept for a session.
   * @param {string} session
   */
  async documents(session) {
    const db = await this.#open();
    return new Promise((resolve, reject) => {
      const tx = db.transaction(['windows'], 'readonly');
      const request = tx.objectStore('windows').getAllKeys(IDBKeyRange.bound([session], [session, []]));
      tx.oncomplete = () => resolve(request.result.map((key) => String(/** @type {any[]} */ (key)[1])));
      tx.onerror = () => reject(tx.error);
    });
  }
}
