// @ts-check
/**
 * Workspace documents over a `PanesClient`: the live list (`DocumentList`) and one open,
 * collaboratively edited document (`DocumentSession`).
 *
 * A `DocumentSession` keeps the document's text and revision, runs the OT client of
 * `ot-client.js` (one operation in flight, later edits buffered, incoming operations
 * transformed past them), and tracks other people's selections. After a reconnect it re-opens
 * the document at the revision it has, applies what it missed (its own unacknowledged
 * operation among them, recognised by op id) and resends what is left, so edits made while
 * offline are kept and sent once back.
 *
 * Positions are Unicode code points, as on the wire; bindings convert from UTF-16.
 *
 * @module documents
 */
import { Emitter } from './emitter.js';
import { OTClient } from './ot-client.js';
import { apply, codePointLength, transformSelection } from './ot.js';

/** @typedef {import('./ot.js').Operation} Operation */
/** @typedef {import('./ot.js').Selection} Selection */
/** @typedef {import('./panes-client.js').PanesClient} PanesClient */
/** @typedef {import('./errors.js').PanesError} PanesError */

/**
 * @typedef {object} Participant
 * @property {string} scene
 * @property {string} user
 * @property {string} name
 * @property {string} [color]
 */

/**
 * A document summary, as the list and `openDocument` report it.
 * @typedef {object} DocumentSummary
 * @property {string} id
 * @property {string} title
 * @property {string} [kind]
 * @property {number} length
 * @property {number} revision
 * @property {number} createdAt
 * @property {number} modifiedAt
 * @property {string} [createdBy]
 * @property {Participant[]} [participants]
 */

/**
 * Someone else's place in the document, in local coordinates.
 * @typedef {object} RemotePresence
 * @property {string} scene
 * @property {string} user
 * @property {string} name
 * @property {string} color
 * @property {Selection | null} selection
 * @property {number} updatedAt when their presence last arrived (ms since the epoch)
 */

/**
 * @typedef {object} DocumentChange
 * @property {Operation | null} op the operation applied to the local text, or null for a reset
 * @property {boolean} remote made by someone else (or a reset)
 * @property {{ scene?: string, user?: string, name?: string } | null} [author]
 */

/**
 * The workspace's documents, kept current across reconnects.
 * Events: `change` ({ change: 'reset' | 'created' | 'renamed' | 'deleted' | 'modified' | 'presence', document? }),
 * `unsupported` (the server has no documents).
 * @extends {Emitter<Record<string, any>>}
 */
export class DocumentList extends Emitter {
  /** @param {PanesClient} client */
  constructor(client) {
    super();
    this.client = client;
    /** @type {Map<string, DocumentSummary>} */
    this.documents = new Map();
    /** False once the server answered `unknown_type`; null until known. @type {boolean | null} */
    this.supported = null;
    this.loaded = false;
    this.stopped = false;
    /** @type {Array<() => void>} */
    this.offs = [];
  }

  start() {
    this.offs.push(
      this.client.on('documentsChanged', (/** @type {any} */ event) => {
        if (this.stopped || !event.document) return;
        const document = /** @type {DocumentSummary} */ (event.document);
        if (event.change === 'deleted') this.documents.delete(document.id);
        else this.documents.set(document.id, { ...this.documents.get(document.id), ...document });
        this.emit('change', { change: event.change, document });
      }),
      this.client.onEveryConnection(() => this.load()),
    );
    return this;
  }

  load() {
    this.client
      .request('observeDocuments', {}, { queue: false })
      .then((result) => {
        if (this.stopped) return;
        this.supported = true;
        this.loaded = true;
        this.documents = new Map((result.documents ?? []).map((/** @type {DocumentSummary} */ d) => [d.id, d]));
        this.emit('change', { change: 'reset' });
      })
      .catch((/** @type {PanesError} */ error) => {
        if (error.code === 'unknown_type') {
          this.supported = false;
          this.emit('unsupported', error);
        }
      });
  }

  /**
   * Documents by title (as the server lists them), so the list stays put while people type;
   * ties by identifier.
   */
  sorted() {
    return [...this.documents.values()].sort(
      (a, b) => a.title.localeCompare(b.title, undefined, { sensitivity: 'base' }) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
    );
  }

  stop() {
    this.stopped = true;
    for (const off of this.offs.splice(0)) off();
    if (this.client.connected) this.client.request('unobserveDocuments', {}, { queue: false }).catch(() => {});
  }
}

/** Makes op-id prefixes unique per page load, so a reloaded page never reuses an op id. */
const loadNonce = Math.floor(Math.random() * 36 ** 6).toString(36);
let openCount = 0;

/**
 * One open document. Events: `change` (DocumentChange), `presence` (the remote map changed),
 * `status` ('open' | 'catchingUp' | 'closed' | 'deleted'), `deleted`, `error` (PanesError),
 * `reset` ({ lostLocalEdits }), `saved` (everything local is on the server).
 * @extends {Emitter<Record<string, any>>}
 */
export class DocumentSession extends Emitter {
  /**
   * @param {PanesClient} client
   * @param {string} documentId
   * @param {{ name?: string, color?: string, historyLimit?: number }} [options]
   */
  constructor(client, documentId, options = {}) {
    super();
    this.client = client;
    this.id = documentId;
    this.name = options.name ?? client.user?.name ?? '';
    this.color = options.color ?? '#3b82f6';
    this.historyLimit = options.historyLimit ?? 500;
    this.text = '';
    /** @type {DocumentSummary | null} */
    this.summary = null;
    /** @type {OTClient | null} */
    this.ot = null;
    /** @type {'opening' | 'open' | 'catchingUp' | 'closed' | 'deleted'} */
    this.status = 'opening';
    /** Other scenes' selections, by scene. @type {Map<string, RemotePresence>} */
    this.remote = new Map();
    /**
     * Server operations by revision, in server coordinates, to move late presence.
     * @type {Array<{ revision: number, op: Operation }>}
     */
    this.history = [];
    /** @type {Selection | null} */
    this.selection = null;
    this.presenceDirty = false;
    this.presenceInFlight = false;
    /** @type {any} */ this.presenceTimer = null;
    this.openEpoch = -1;
    this.reopening = false;
    this.reopenAgain = false;
    this.readOnly = false;
    /** @type {Array<() => void>} */
    this.offs = [];
  }

  /** True when every local edit is acknowledged by the server. */
  get synchronized() {
    return !this.ot || this.ot.state.name === 'synchronized';
  }

  /** Closed or deleted: nothing more happens. */
  get gone() {
    return this.status === 'closed' || this.status === 'deleted';
  }

  /** The server revision the local text is based on. */
  get revision() {
    return this.ot?.revision ?? 0;
  }

  /**
   * Opens the document and starts following it. Rejects with the server's error
   * (`document_not_found`, `unknown_type` on a server without documents, …).
   * @returns {Promise<this>}
   */
  async open() {
    this.offs.push(
      this.client.on('documentOperation', (/** @type {any} */ event) => {
        if (event.document !== this.id || !this.ot) return;
        this.serverOperation(event.revision, event.operation, event.opId, event.author ?? null);
      }),
      this.client.on('presence', (/** @type {any} */ event) => {
        if (event.document === this.id) this.remotePresence(event);
      }),
      this.client.on('documentDeleted', (/** @type {any} */ event) => {
        if (event.document === this.id) this.markDeleted();
      }),
      this.client.on('documentsChanged', (/** @type {any} */ event) => {
        if (event.document?.id === this.id && event.change !== 'deleted') {
          this.summary = { ...this.summary, ...event.document };
          if (event.change === 'presence') this.emit('presence', {});
        }
      }),
      this.client.on('disconnect', () => this.ot?.disconnected()),
      this.client.onEveryConnection(() => {
        if (this.ot && this.status !== 'closed' && this.status !== 'deleted' && this.openEpoch !== this.client.epoch) {
          this.ot.disconnected();
          this.reopen();
        }
      }),
    );
    for (;;) {
      try {
        const result = await this.client.request('openDocument', { document: this.id });
        this.openEpoch = this.client.epoch;
        this.start(result);
        return this;
      } catch (error) {
        const e = /** @type {PanesError} */ (error);
        if (e.code !== 'disconnected' && e.code !== 'timeout') {
          this.detach();
          this.status = 'closed';
          throw e;
        }
        // The connection dropped while opening: try again once it is back.
        await new Promise((resolve) => this.client.once('connect', resolve));
      }
    }
  }

  /** @param {any} result an `openDocument` result without catch-up */
  start(result) {
    this.summary = result.document ?? this.summary;
    this.text = String(result.text ?? '');
    openCount += 1;
    const prefix = `${this.client.session?.persistentIdentifier ?? 'anon'}.${loadNonce}${openCount.toString(36)}`;
    this.ot = new OTClient({
      revision: Number(result.revision ?? 0),
      idPrefix: prefix,
      send: (revision, op, opId) => this.sendEdit(revision, op, opId),
    });
    this.history = [];
    this.remote.clear();
    for (const presence of result.presence ?? []) this.remotePresence(presence);
    this.setStatus('open');
  }

  /** @param {'opening' | 'open' | 'catchingUp' | 'closed' | 'deleted'} status */
  setStatus(status) {
    this.status = status;
    this.emit('status', status);
  }

  /**
   * Re-opens at the local revision and catches up: after a reconnect, or when an operation
   * arrives out of order.
   */
  async reopen() {
    if (!this.ot || this.status === 'closed' || this.status === 'deleted') return;
    if (this.reopening) {
      this.reopenAgain = true;
      return;
    }
    this.reopening = true;
    this.setStatus('catchingUp');
    const ot = this.ot;
    ot.disconnected();
    try {
      const result = await this.client.request('openDocument', { document: this.id, revision: ot.revision }, { queue: false });
      if (this.ot !== ot || this.gone) return;
      this.openEpoch = this.client.epoch;
      this.summary = result.document ?? this.summary;
      if (result.catchUp === 'snapshot') {
        this.reset(result);
      } else {
        for (const entry of result.operations ?? []) {
          this.serverOperation(entry.revision, entry.operation, entry.opId, entry.author ?? null);
        }
        if (Array.isArray(result.presence)) {
          this.remote.clear();
          for (const presence of result.presence) this.remotePresence(presence);
          this.emit('presence', {});
        }
        this.ot.resend();
      }
      this.setStatus('open');
      this.presenceDirty = this.selection !== null;
      this.flushPresence();
    } catch (error) {
      const e = /** @type {PanesError} */ (error);
      if (e.code === 'document_not_found') this.markDeleted();
      else if (e.code === 'revision_in_future' || e.code === 'revision_unavailable') await this.reload();
      // `disconnected`: the next connection re-opens.
    } finally {
      this.reopening = false;
      if (this.reopenAgain) {
        this.reopenAgain = false;
        this.reopen();
      }
    }
  }

  /** Opens afresh, dropping unsent edits (when they cannot be applied). */
  async reload() {
    try {
      const result = await this.client.request('openDocument', { document: this.id }, { queue: false });
      this.openEpoch = this.client.epoch;
      this.reset(result);
      this.setStatus('open');
    } catch (error) {
      if (/** @type {PanesError} */ (error).code === 'document_not_found') this.markDeleted();
    }
  }

  /**
   * Takes the server's whole text. Unsent local edits cannot be carried over a snapshot.
   * @param {any} result
   */
  reset(result) {
    const lostLocalEdits = !this.synchronized;
    const selection = this.selection;
    this.start(result);
    if (selection) this.selection = clampSelection(selection, codePointLength(this.text));
    this.emit('change', /** @type {DocumentChange} */ ({ op: null, remote: true, author: null }));
    this.emit('reset', { lostLocalEdits });
  }

  /**
   * A local edit, made on `this.text` (code points). Applies it and sends it.
   * @param {Operation} op
   */
  applyLocal(op) {
    if (!this.ot || this.status === 'closed' || this.status === 'deleted') return;
    this.text = apply(this.text, op);
    for (const presence of this.remote.values()) {
      if (presence.selection) presence.selection = transformSelection(op, presence.selection, false);
    }
    this.ot.applyClient(op);
    this.emit('change', /** @type {DocumentChange} */ ({ op, remote: false, author: null }));
  }

  /**
   * @param {number} revision
   * @param {Operation} op
   * @param {string} opId
   */
  sendEdit(revision, op, opId) {
    const ot = this.ot;
    this.client
      .request('edit', { document: this.id, revision, operation: op, opId }, { queue: false })
      .then((result) => {
        if (this.ot !== ot || !ot) return;
        if (ot.outstandingId !== opId) return; // acknowledged already, by the catch-up replay
        const state = ot.state;
        const acknowledged = state.name === 'synchronized' ? null : state.outstanding;
        if (ot.serverAck(opId) && acknowledged) this.pushHistory(Number(result.revision ?? ot.revision), acknowledged);
        if (this.synchronized) {
          this.emit('saved', {});
          this.flushPresence();
        }
      })
      .catch((/** @type {PanesError} */ error) => {
        if (this.ot !== ot || !ot || this.status === 'closed') return;
        switch (error.code) {
          case 'disconnected':
          case 'closed':
            return; // the next connection re-opens and resends
          case 'timeout':
          case 'document_not_open':
          case 'revision_unavailable':
          case 'revision_in_future':
            this.reopen();
            return;
          case 'rate_limited':
            this.client.timers.setTimeout(() => {
              if (this.ot === ot && ot.outstandingId === opId && this.client.connected) ot.resend();
            }, error.retryAfterMs ?? 250);
            return;
          case 'document_not_found':
            this.markDeleted();
            return;
          default:
            // invalid_operation, too_large, forbidden: this edit can never be applied.
            if (error.code === 'forbidden') this.readOnly = true;
            this.emit('error', error);
            this.reload();
        }
      });
  }

  /**
   * An operation the server applied, at `revision`.
   * @param {number} revision
   * @param {Operation} op
   * @param {string | undefined} opId
   * @param {{ scene?: string, user?: string, name?: string } | null} author
   */
  serverOperation(revision, op, opId, author) {
    const ot = this.ot;
    if (!ot) return;
    if (revision <= ot.revision) return; // seen already
    if (revision > ot.revision + 1) {
      this.reopen(); // a gap: fetch what is missing
      return;
    }
    this.pushHistory(revision, op);
    const local = ot.applyServer(op, opId);
    if (local === null) {
      if (this.synchronized) this.emit('saved', {});
      return; // our own operation, replayed: now acknowledged
    }
    this.text = apply(this.text, local);
    for (const presence of this.remote.values()) {
      if (!presence.selection) continue;
      presence.selection = transformSelection(local, presence.selection, author?.scene === presence.scene);
    }
    this.emit('change', /** @type {DocumentChange} */ ({ op: local, remote: true, author }));
  }

  /**
   * @param {number} revision
   * @param {Operation} op
   */
  pushHistory(revision, op) {
    this.history.push({ revision, op });
    if (this.history.length > this.historyLimit) this.history.splice(0, this.history.length - this.historyLimit);
  }

  /**
   * A `presence` event (or an entry of `openDocument`'s `presence`).
   * @param {any} event
   */
  remotePresence(event) {
    if (!event || !event.scene || event.scene === this.client.scene) return;
    if (event.left) {
      this.remote.delete(event.scene);
      this.emit('presence', {});
      return;
    }
    /** @type {Selection | null} */
    let selection = null;
    if (event.selection && typeof event.selection.anchor === 'number') {
      selection = { anchor: event.selection.anchor, head: event.selection.head ?? event.selection.anchor };
      const from = Number(event.revision ?? this.revision);
      for (const entry of this.history) {
        if (entry.revision > from) selection = transformSelection(entry.op, selection, false);
      }
      if (this.ot) selection = this.ot.transformSelection(selection);
      selection = clampSelection(selection, codePointLength(this.text));
    }
    const previous = this.remote.get(event.scene);
    this.remote.set(event.scene, {
      scene: event.scene,
      user: event.user ?? previous?.user ?? '',
      name: event.name ?? previous?.name ?? event.user ?? '',
      color: event.color ?? previous?.color ?? '#888',
      selection,
      updatedAt: Date.now(),
    });
    this.emit('presence', {});
  }

  /**
   * This scene's selection (code points, local text), shared with the others.
   * @param {Selection | null} selection
   */
  setSelection(selection) {
    const same =
      selection && this.selection
        ? selection.anchor === this.selection.anchor && selection.head === this.selection.head
        : selection === this.selection;
    if (same) return;
    this.selection = selection;
    this.presenceDirty = true;
    if (this.presenceTimer === null) {
      this.presenceTimer = this.client.timers.setTimeout(() => {
        this.presenceTimer = null;
        this.flushPresence();
      }, 30);
    }
  }

  /** Sends the selection when everything local is acknowledged (its coordinates are then the server's). */
  flushPresence() {
    if (!this.presenceDirty || this.presenceInFlight || !this.ot || !this.synchronized) return;
    if (this.status !== 'open' || !this.client.connected || !this.client.supports('setPresence')) return;
    this.presenceDirty = false;
    this.presenceInFlight = true;
    this.client
      .request(
        'setPresence',
        { document: this.id, revision: this.ot.revision, selection: this.selection, name: this.name, color: this.color },
        { queue: false },
      )
      .catch(() => {})
      .finally(() => {
        this.presenceInFlight = false;
        if (this.presenceDirty) this.flushPresence();
      });
  }

  /**
   * Everyone here: the list's participants and anyone whose presence arrived, without this scene.
   * @returns {Participant[]}
   */
  participants() {
    /** @type {Map<string, Participant>} */
    const byScene = new Map();
    for (const p of this.summary?.participants ?? []) {
      if (p.scene !== this.client.scene) byScene.set(p.scene, p);
    }
    for (const p of this.remote.values()) {
      byScene.set(p.scene, { ...byScene.get(p.scene), scene: p.scene, user: p.user, name: p.name, color: p.color });
    }
    return [...byScene.values()];
  }

  markDeleted() {
    if (this.status === 'deleted') return;
    this.setStatus('deleted');
    this.detach();
    this.emit('deleted', {});
  }

  detach() {
    for (const off of this.offs.splice(0)) off();
    if (this.presenceTimer !== null) this.client.timers.clearTimeout(this.presenceTimer);
    this.presenceTimer = null;
  }

  /** Stops following the document (`closeDocument`). */
  close() {
    if (this.status === 'closed') return;
    const wasOpen = this.status !== 'deleted' && this.ot !== null;
    this.setStatus('closed');
    this.detach();
    if (wasOpen && this.client.connected) {
      this.client.request('closeDocument', { document: this.id }, { queue: false }).catch(() => {});
    }
  }
}

/**
 * @param {Selection} selection
 * @param {number} length
 * @returns {Selection}
 */
function clampSelection(selection, length) {
  const clamp = (/** @type {number} */ n) => Math.min(Math.max(n, 0), length);
  return { anchor: clamp(selection.anchor), head: clamp(selection.head) };
}

/**
 * Opens a document on `client`.
 * @param {PanesClient} client
 * @param {string} documentId
 * @param {{ name?: string, color?: string }} [options]
 */
export function openDocument(client, documentId, options) {
  return new DocumentSession(client, documentId, options).open();
}
