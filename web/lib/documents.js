// @ts-check
/**
 * One open, collaboratively edited document (`DocumentSession`). (The live list of the
 * workspace's documents, `DocumentList`, is `document-list.js`, re-exported here.)
 *
 * A `DocumentSession` keeps the document's text and revision and runs the OT client of
 * `ot-client.js` (one operation in flight, later edits buffered, incoming operations
 * transformed past them); presence is `presence.js`. After a reconnect it re-opens the
 * document at the revision it has, applies what it missed (its own unacknowledged operation
 * among them, recognised by op id) and resends what is left, so edits made while offline are
 * kept and sent once back.
 *
 * Positions are Unicode code points, as on the wire; bindings convert from UTF-16.
 *
 * @module documents
 */
import { EventSource, emit } from './emitter.js';
import { connectionOf } from './internal.js';
import { OTClient } from './ot-client.js';
import { apply, codePointLength } from './ot.js';
import { Presence } from './presence.js';

export { DocumentList } from './document-list.js';

/** @typedef {import('../types/panes-client.js').Operation} Operation */
/** @typedef {import('../types/panes-client.js').Selection} Selection */
/** @typedef {import('../types/panes-client.js').Participant} Participant */
/** @typedef {import('../types/panes-client.js').DocumentSummary} DocumentSummary */
/** @typedef {import('../types/panes-client.js').RemotePresence} RemotePresence */
/** @typedef {import('../types/panes-client.js').DocumentChange} DocumentChange */
/** @typedef {import('../types/panes-client.js').DocumentStatus} DocumentStatus */
/** @typedef {import('../types/panes-client.js').DocumentSessionOptions} DocumentSessionOptions */
/** @typedef {import('../types/panes-client.js').DocumentSessionEvents} DocumentSessionEvents */
/** @typedef {import('../types/panes-client.js').Author} Author */
/** @typedef {import('./panes-client.js').PanesClient} PanesClient */
/** @typedef {import('./errors.js').PanesError} PanesError */

/** Makes op-id prefixes unique per page load, so a reloaded page never reuses an op id. */
const loadNonce = Math.floor(Math.random() * 36 ** 6).toString(36);
let openCount = 0;

/**
 * One open document.
 * @extends {EventSource<DocumentSessionEvents>}
 */
export class DocumentSession extends EventSource {
  #client;
  #connection;
  /** @readonly */ id;
  name;
  color;
  text = '';
  /** @type {DocumentSummary | null} */
  summary = null;
  /** @type {DocumentStatus} */
  status = 'opening';
  readOnly = false;
  /** @type {OTClient | null} */
  #ot = null;
  #presence;
  #openEpoch = -1;
  #reopening = false;
  #reopenAgain = false;
  /** @type {Array<() => void>} */
  #offs = [];

  /**
   * @param {PanesClient} client
   * @param {string} documentId
   * @param {DocumentSessionOptions} [options]
   */
  constructor(client, documentId, options = {}) {
    super();
    this.#client = client;
    this.#connection = connectionOf(client);
    this.id = documentId;
    this.name = options.name ?? client.user?.name ?? '';
    this.color = options.color ?? '#3b82f6';
    this.#presence = new Presence({
      historyLimit: options.historyLimit ?? 500,
      timers: this.#connection.timers,
      send: (selection) => this.#sendPresence(selection),
    });
  }

  /** Other scenes' selections, by scene, in local coordinates. */
  get remote() {
    return this.#presence.remote;
  }

  /** This scene's selection, as last set. */
  get selection() {
    return this.#presence.selection;
  }

  /** True when every local edit is acknowledged by the server. */
  get synchronized() {
    return !this.#ot || this.#ot.state.name === 'synchronized';
  }

  /** Closed or deleted: nothing more happens. */
  get gone() {
    return this.status === 'closed' || this.status === 'deleted';
  }

  /** The server revision the local text is based on. */
  get revision() {
    return this.#ot?.revision ?? 0;
  }

  /**
   * Opens the document and starts following it. Rejects with the server's error
   * (`document_not_found`, `unknown_type` on a server without documents, …).
   * @returns {Promise<this>}
   */
  async open() {
    const client = this.#client;
    this.#offs.push(
      client.on('documentOperation', (event) => {
        if (event.document !== this.id || !this.#ot) return;
        try {
          this.#serverOperation(event.revision, event.operation, event.opId, event.author ?? null);
        } catch {
          this.#reload(); // an operation that does not fit the local text: start afresh
        }
      }),
      client.on('presence', (event) => {
        if (event.document === this.id && this.#presence.received(event, this.#local())) emit(this, 'presence', {});
      }),
      client.on('documentDeleted', (event) => {
        if (event.document === this.id) this.#markDeleted();
      }),
      client.on('documentsChanged', (event) => {
        if (event.document?.id === this.id && event.change !== 'deleted') {
          this.summary = { ...this.summary, ...event.document };
          if (event.change === 'presence') emit(this, 'presence', {});
        }
      }),
      client.on('disconnect', () => this.#ot?.disconnected()),
      client.onEveryConnection(() => {
        if (this.#ot && !this.gone && this.#openEpoch !== client.epoch) this.#reopen();
      }),
    );
    for (;;) {
      try {
        const result = await client.request('openDocument', { document: this.id });
        this.#openEpoch = client.epoch;
        this.#start(result);
        return this;
      } catch (error) {
        const e = /** @type {PanesError} */ (error);
        if (e.code !== 'disconnected' && e.code !== 'timeout') {
          this.#detach();
          this.status = 'closed';
          throw e;
        }
        // The connection dropped while opening: try again once it is back.
        await new Promise((resolve) => client.once('connect', resolve));
      }
    }
  }

  /**
   * A local edit, made on `this.text` (code points). Applies it and sends it.
   * @param {Operation} op
   */
  applyLocal(op) {
    if (!this.#ot || this.gone) return;
    this.text = apply(this.text, op);
    this.#presence.moveThrough(op, undefined);
    this.#ot.applyClient(op);
    emit(this, 'change', { op, remote: false, author: null });
  }

  /**
   * This scene's selection (code points, local text), shared with the others.
   * @param {Selection | null} selection
   */
  setSelection(selection) {
    this.#presence.setSelection(selection);
  }

  /**
   * Everyone here: the list's participants and anyone whose presence arrived, without this scene.
   * @returns {Participant[]}
   */
  participants() {
    /** @type {Map<string, Participant>} */
    const byScene = new Map();
    const own = this.#client.scene;
    for (const p of this.summary?.participants ?? []) {
      if (p.scene !== own) byScene.set(p.scene, p);
    }
    for (const p of this.remote.values()) {
      byScene.set(p.scene, { ...byScene.get(p.scene), scene: p.scene, user: p.user, name: p.name, color: p.color });
    }
    return [...byScene.values()];
  }

  /** Resolves once every local edit is acknowledged (at once if it is). */
  whenSaved() {
    if (this.synchronized) return Promise.resolve();
    return /** @type {Promise<void>} */ (
      new Promise((resolve) => {
        const off = this.on('saved', () => {
          if (!this.synchronized) return;
          off();
          resolve();
        });
      })
    );
  }

  /** Stops following the document (`closeDocument`). */
  close() {
    if (this.status === 'closed') return;
    const wasOpen = this.status !== 'deleted' && this.#ot !== null;
    this.#setStatus('closed');
    this.#detach();
    if (wasOpen && this.#client.connected) {
      this.#client.request('closeDocument', { document: this.id }, { queue: false }).catch(() => {});
    }
  }

  // MARK: Internals

  /** What presence needs to know about the local text. */
  #local() {
    const ot = this.#ot;
    return {
      scene: this.#client.scene,
      revision: this.revision,
      text: this.text,
      pastUnacknowledged: (/** @type {Selection} */ s) => (ot ? ot.transformSelection(s) : s),
    };
  }

  /** @param {any} result an `openDocument` result without catch-up */
  #start(result) {
    this.summary = result.document ?? this.summary;
    this.text = String(result.text ?? '');
    openCount += 1;
    const prefix = `${this.#client.session?.persistentIdentifier ?? 'anon'}.${loadNonce}${openCount.toString(36)}`;
    this.#ot = new OTClient({
      revision: Number(result.revision ?? 0),
      idPrefix: prefix,
      send: (revision, op, opId) => this.#sendEdit(revision, op, opId),
    });
    this.#presence.reset();
    for (const presence of result.presence ?? []) this.#presence.received(presence, this.#local());
    this.#setStatus('open');
  }

  /** @param {DocumentStatus} status */
  #setStatus(status) {
    this.status = status;
    emit(this, 'status', status);
  }

  /**
   * Re-opens at the local revision and catches up: after a reconnect, or when an operation
   * arrives out of order.
   */
  async #reopen() {
    if (!this.#ot || this.gone) return;
    if (this.#reopening) {
      this.#reopenAgain = true;
      return;
    }
    this.#reopening = true;
    this.#setStatus('catchingUp');
    const ot = this.#ot;
    ot.disconnected();
    try {
      const result = await this.#client.request('openDocument', { document: this.id, revision: ot.revision }, { queue: false });
      if (this.#ot !== ot || this.gone) return;
      this.#openEpoch = this.#client.epoch;
      this.summary = result.document ?? this.summary;
      if (result.catchUp === 'snapshot') {
        this.#reset(result);
      } else {
        for (const entry of result.operations ?? []) {
          this.#serverOperation(entry.revision, entry.operation, entry.opId, entry.author ?? null);
        }
        if (Array.isArray(result.presence)) {
          this.remote.clear();
          for (const presence of result.presence) this.#presence.received(presence, this.#local());
          emit(this, 'presence', {});
        }
        ot.resend();
      }
      this.#setStatus('open');
      this.#presence.resend();
    } catch (error) {
      switch (/** @type {PanesError} */ (error).code) {
        case 'document_not_found':
          this.#markDeleted();
          break;
        case 'disconnected':
        case 'closed':
          break; // the next connection re-opens
        case 'timeout':
          this.#reopenAgain = true;
          break;
        default:
          // revision_in_future, revision_unavailable, or operations that do not fit the local
          // text: start afresh from the server's text.
          await this.#reload();
      }
    } finally {
      this.#reopening = false;
      if (this.#reopenAgain) {
        this.#reopenAgain = false;
        this.#reopen();
      }
    }
  }

  /** Opens afresh, dropping unsent edits (when they cannot be applied). */
  async #reload() {
    try {
      const result = await this.#client.request('openDocument', { document: this.id }, { queue: false });
      this.#openEpoch = this.#client.epoch;
      this.#reset(result);
      this.#setStatus('open');
    } catch (error) {
      if (/** @type {PanesError} */ (error).code === 'document_not_found') this.#markDeleted();
    }
  }

  /**
   * Takes the server's whole text. Unsent local edits cannot be carried over a snapshot.
   * @param {any} result
   */
  #reset(result) {
    const lostLocalEdits = !this.synchronized;
    this.#start(result);
    this.#presence.clampLocal(codePointLength(this.text));
    emit(this, 'change', { op: null, remote: true, author: null });
    emit(this, 'reset', { lostLocalEdits });
  }

  /**
   * @param {number} revision
   * @param {Operation} op
   * @param {string} opId
   */
  #sendEdit(revision, op, opId) {
    const ot = this.#ot;
    this.#client
      .request('edit', { document: this.id, revision, operation: op, opId }, { queue: false })
      .then((result) => {
        if (this.#ot !== ot || !ot) return;
        if (ot.outstandingId !== opId) return; // acknowledged already, by the catch-up replay
        if (Number(result.revision) !== ot.revision + 1) {
          // Operations applied before this one have not arrived yet (a gap being filled, or
          // the reply to a resend): catching up from here replays this one too, and it is
          // recognised by its op id. Counting it now would skip one of them.
          this.#reopen();
          return;
        }
        const state = ot.state;
        const acknowledged = state.name === 'synchronized' ? null : state.outstanding;
        if (ot.serverAck(opId) && acknowledged) this.#presence.record(Number(result.revision ?? ot.revision), acknowledged);
        if (this.synchronized) {
          emit(this, 'saved', {});
          this.#presence.flush();
        }
      })
      .catch((/** @type {PanesError} */ error) => {
        if (this.#ot !== ot || !ot || this.status === 'closed') return;
        switch (error.code) {
          case 'disconnected':
          case 'closed':
            return; // the next connection re-opens and resends
          case 'timeout':
          case 'document_not_open':
          case 'revision_unavailable':
          case 'revision_in_future':
            this.#reopen();
            return;
          case 'rate_limited':
            this.#connection.timers.setTimeout(() => {
              if (this.#ot === ot && ot.outstandingId === opId && this.#client.connected) ot.resend();
            }, error.retryAfterMs ?? 250);
            return;
          case 'outcome_unknown':
            // It may have been applied: re-opening from our revision replays it (recognised by
            // its op id) if it was, and resends it with the same op id if not.
            this.#connection.timers.setTimeout(() => {
              if (this.#ot === ot && ot.outstandingId === opId && this.#client.connected) this.#reopen();
            }, error.retryAfterMs ?? 1000);
            return;
          case 'document_not_found':
            this.#markDeleted();
            return;
          default:
            // invalid_operation, too_large, forbidden: this edit can never be applied.
            if (error.code === 'forbidden') this.readOnly = true;
            emit(this, 'error', error);
            this.#reload();
        }
      });
  }

  /**
   * An operation the server applied, at `revision`.
   * @param {number} revision
   * @param {Operation} op
   * @param {string | undefined} opId
   * @param {Author | null} author
   */
  #serverOperation(revision, op, opId, author) {
    const ot = this.#ot;
    if (!ot) return;
    if (revision <= ot.revision) return; // seen already
    if (revision > ot.revision + 1) {
      this.#reopen(); // a gap: fetch what is missing
      return;
    }
    this.#presence.record(revision, op);
    const local = ot.applyServer(op, opId);
    if (local === null) {
      if (this.synchronized) emit(this, 'saved', {});
      return; // our own operation, replayed: now acknowledged
    }
    this.text = apply(this.text, local);
    this.#presence.moveThrough(local, author?.scene);
    emit(this, 'change', { op: local, remote: true, author });
  }

  /**
   * Sends this scene's selection when everything local is acknowledged (its coordinates are
   * then the server's); null when it cannot be placed now.
   * @param {Selection | null} selection
   */
  #sendPresence(selection) {
    const client = this.#client;
    if (!this.#ot || !this.synchronized || this.status !== 'open' || !client.connected || !client.supports('setPresence')) return null;
    return client.request(
      'setPresence',
      { document: this.id, revision: this.#ot.revision, selection, name: this.name, color: this.color },
      { queue: false },
    );
  }

  #markDeleted() {
    if (this.status === 'deleted') return;
    this.#setStatus('deleted');
    this.#detach();
    emit(this, 'deleted', {});
  }

  #detach() {
    for (const off of this.#offs.splice(0)) off();
    this.#presence.stop();
  }
}

/**
 * Opens a document on `client`.
 * @param {PanesClient} client
 * @param {string} documentId
 * @param {DocumentSessionOptions} [options]
 */
export function openDocument(client, documentId, options) {
  return new DocumentSession(client, documentId, options).open();
}
