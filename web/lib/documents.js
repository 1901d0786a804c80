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
 * kept and sent once back. When the server's log no longer reaches back that far, the unsent
 * edits are rebased over the difference between the text they were made on and the server's
 * text (`text-diff.js`), never dropped.
 *
 * What the window typed and the server has not acknowledged is kept in the client's
 * `pendingStore` (`pending-store.js`: IndexedDB in a browser) under the session's
 * `persistentIdentifier` and the document, with the revision and text it applies to and the
 * window's undo history, before `applyLocal` returns: a reloaded or reopened window sends it
 * once. Undo and redo (`undo-history.js`) take back this window's own edits only.
 *
 * Positions are Unicode code points, as on the wire; bindings convert from UTF-16.
 *
 * @module documents
 */
import { EventSource, emit } from './emitter.js';
import { PanesError } from './errors.js';
import { connectionOf, pendingStoreOf } from './internal.js';
import { OTClient } from './ot-client.js';
import { apply, codePointLength, compose, isNoop } from './ot.js';
import { Presence } from './presence.js';
import { diffOperation } from './text-diff.js';
import { UndoHistory } from './undo-history.js';

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
/** @typedef {import('../types/panes-client.js').DocumentRole} DocumentRole */
/** @typedef {import('../types/panes-client.js').PendingRecord} PendingRecord */
/** @typedef {import('../types/panes-client.js').PendingKey} PendingKey */
/** @typedef {import('./panes-client.js').PanesClient} PanesClient */

/** Makes op-id prefixes unique per page load, so a reloaded page never reuses an op id. */
const loadNonce = Math.floor(Math.random() * 36 ** 6).toString(36);
let openCount = 0;

/**
 * The base text is moved forward (the operations since composed into it) after this many
 * revisions, or once they insert this many code units: so a kept window writes the whole
 * text only now and then, and its operations since stay small.
 */
const BASE_EVERY_REVISIONS = 500;
const BASE_EVERY_INSERTED = 65536;
/** How long saving the kept state may wait after an acknowledgement or someone else's edit. */
const SAVE_DELAY_MS = 100;

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
  /** @type {DocumentRole | null} this scene's role for the document, from the server */
  role = null;
  readOnly = false;
  /** @type {string | undefined} the link token this window opens the document through */
  #link;
  /** @type {any} this scene's presence payload (`setPresenceData`); undefined until set */
  #data = undefined;
  /** @type {OTClient | null} */
  #ot = null;
  #presence;
  #openEpoch = -1;
  #reopening = false;
  #reopenAgain = false;
  /** @type {Array<() => void>} */
  #offs = [];
  #history;
  /** @type {import('../types/panes-client.js').PendingStore} */
  #store;
  /** @type {PendingKey | null} where this window's unsent edits are kept */
  #key = null;
  /** Something is kept under `#key`. */
  #kept = false;
  /** @type {any} */
  #saveTimer = null;
  /**
   * The text at `#base.revision`, and the server's operations since (composed), which take it
   * to `revision`: the text the unsent edits apply to. Null while nothing is kept (no unsent
   * edit and no undo history): then that text is `text`.
   * @type {{ revision: number, text: string } | null}
   */
  #base = null;
  /** @type {Operation | null} */
  #since = null;
  #sinceCount = 0;
  #sinceInserted = 0;

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
    this.#history = new UndoHistory({ limit: options.undoLimit, groupMs: options.undoGroupMs });
    this.#store = pendingStoreOf(client);
    this.#link = options.link;
  }

  /** This window has an edit of its own to undo. */
  get canUndo() {
    return this.#history.canUndo;
  }

  /** This window has an undone edit to redo. */
  get canRedo() {
    return this.#history.canRedo;
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
        if (event.document === this.id && this.#presence.received(event, this.#presenceView())) emit(this, 'presence', {});
      }),
      client.on('documentDeleted', (event) => {
        if (event.document === this.id) this.#markDeleted();
      }),
      client.on('documentAccessChanged', (event) => {
        if (event.document === this.id) this.#accessChanged(event.role);
      }),
      client.on('documentsChanged', (event) => {
        if (event.document?.id === this.id && event.change !== 'deleted') {
          this.summary = { ...this.summary, ...event.document };
          if (event.change === 'presence') emit(this, 'presence', {});
        }
      }),
      client.on('disconnect', () => this.#ot?.disconnected()),
      client.on('status', (/** @type {{ status: string }} */ event) => {
        // The client ended (closed, destroyed, failed): what is kept stays as it is now, for
        // the window's next page; this object writes no more.
        if (event.status === 'closed' || event.status === 'destroyed' || event.status === 'failed') {
          this.#flushSave();
          this.#key = null;
        }
      }),
      client.onEveryConnection(() => {
        // Another session now (a fork: the tab it was duplicated from holds the old one, and
        // the kept record under it): what this window keeps goes under its own session.
        const session = client.session?.persistentIdentifier;
        if (this.#key && session && session !== this.#key.session && !this.gone) {
          this.#key = { session, document: this.id };
          this.#kept = false;
          this.#save();
        }
        if (this.#ot && !this.gone && this.#openEpoch !== client.epoch) this.#reopen();
      }),
    );
    /** @type {PendingRecord | null} */
    let kept = null;
    for (;;) {
      try {
        if (!this.#key) {
          if (!client.connected) await new Promise((resolve) => client.once('connect', resolve));
          const session = client.session?.persistentIdentifier;
          if (session) {
            this.#key = { session, document: this.id };
            kept = await this.#store.load(this.#key).catch(() => null);
            this.#kept = kept !== null;
          }
        }
        if (kept) {
          await this.#resume(kept);
          return this;
        }
        const result = await client.request('openDocument', this.#openFields());
        this.#openEpoch = client.epoch;
        this.#start(result);
        return this;
      } catch (error) {
        const e = /** @type {PanesError} */ (error);
        if (e.code !== 'disconnected' && e.code !== 'timeout') {
          // Kept edits of a document that is gone have nowhere to go.
          if (e.code === 'document_not_found' && this.#key && this.#kept) this.#store.remove(this.#key);
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
    const before = this.text;
    this.text = apply(before, op);
    this.#track(before);
    const could = [this.canUndo, this.canRedo];
    this.#history.recordEdit(op, before, this.#connection.timers.now());
    this.#local(op, null);
    this.#historyChanged(could);
  }

  /**
   * Takes back this window's latest edit (or group of edits: a burst of typing, a paste),
   * moved past everything others did since, so their edits stay. Returns the operation
   * applied, or null when there is nothing to undo.
   * @returns {Operation | null}
   */
  undo() {
    return this.#step('undo');
  }

  /**
   * Makes again what `undo` took back, moved past what others did since.
   * @returns {Operation | null}
   */
  redo() {
    return this.#step('redo');
  }

  /** Ends the current undo step: the next edit starts a new one (the caret moved away, say). */
  breakUndoGroup() {
    this.#history.close();
  }

  /** @param {'undo' | 'redo'} which */
  #step(which) {
    if (!this.#ot || this.gone || this.readOnly) return null;
    const could = [this.canUndo, this.canRedo];
    const op = this.#history.take(which);
    if (!op) return null;
    const before = this.text;
    this.text = apply(before, op);
    this.#track(before);
    this.#history.recordApplied(which, op, before, this.#connection.timers.now());
    this.#local(op, which);
    this.#historyChanged(could);
    return op;
  }

  /**
   * A local edit already applied to `text`: moves presence, sends it (or buffers it), keeps
   * it, and tells the listeners.
   * @param {Operation} op
   * @param {'undo' | 'redo' | null} history
   */
  #local(op, history) {
    const ot = /** @type {OTClient} */ (this.#ot);
    this.#presence.moveThrough(op, undefined);
    ot.applyClient(op);
    this.#save();
    emit(this, 'change', history ? { op, remote: false, author: null, history } : { op, remote: false, author: null });
  }

  /** @param {boolean[]} could `[canUndo, canRedo]` before */
  #historyChanged(could) {
    if (could[0] !== this.canUndo || could[1] !== this.canRedo) {
      emit(this, 'undoChange', { canUndo: this.canUndo, canRedo: this.canRedo });
    }
  }

  /**
   * This scene's selection (code points, local text), shared with the others.
   * @param {Selection | null} selection
   */
  setSelection(selection) {
    this.#presence.setSelection(selection);
  }

  /**
   * Shares a payload of this scene's own with the others (any JSON, at most the server's
   * `maxPresenceBytes`; null removes it): what it is doing ("typing", a cursor colour, a
   * viewport). Kept and sent again with every later presence, and after a reconnect.
   * @param {any} data
   * @returns {Promise<void>}
   */
  async setPresenceData(data) {
    this.#data = data;
    if (!this.#ot || this.gone || !this.#client.connected) return;
    await this.#client.request('setPresence', { document: this.id, data }, { queue: false });
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
    // Unsent edits stay kept (and are sent when this window opens the document again); an
    // undo history of a document the window no longer shows goes.
    if (this.#key && this.synchronized && this.#kept) {
      this.#store.remove(this.#key);
      this.#kept = false;
    } else {
      this.#flushSave();
    }
    this.#setStatus('closed');
    this.#detach();
    if (wasOpen && this.#client.connected) {
      this.#client.request('closeDocument', { document: this.id }, { queue: false }).catch(() => {});
    }
  }

  // MARK: Internals

  /** What presence needs to know about the local text. */
  #presenceView() {
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
    this.#setRole(result.role);
    this.text = String(result.text ?? '');
    this.#makeOT(Number(result.revision ?? 0));
    this.#receivePresence(result);
    this.#setStatus('open');
  }

  /** @param {number} revision */
  #makeOT(revision) {
    openCount += 1;
    const prefix = `${this.#client.session?.persistentIdentifier ?? 'anon'}.${loadNonce}${openCount.toString(36)}`;
    this.#ot = new OTClient({
      revision,
      idPrefix: prefix,
      send: (revision, op, opId) => this.#sendEdit(revision, op, opId),
    });
  }

  /** @param {any} result an `openDocument` result */
  #receivePresence(result) {
    this.#presence.reset();
    for (const presence of result.presence ?? []) this.#presence.received(presence, this.#presenceView());
  }

  /**
   * Opens with what an earlier page of this window kept: its unsent edits at their revision,
   * and its undo history. They are caught up like edits made offline, by operations or by
   * difference, and sent.
   * @param {PendingRecord} kept
   */
  async #resume(kept) {
    const client = this.#client;
    let baseText = kept.base.text;
    if (kept.since) baseText = apply(baseText, kept.since);
    let text = baseText;
    for (const p of kept.pending) text = apply(text, p.op);
    this.text = text;
    this.#base = { revision: kept.base.revision, text: kept.base.text };
    this.#since = kept.since;
    this.#makeOT(kept.revision);
    const ot = /** @type {OTClient} */ (this.#ot);
    ot.restore(kept.revision, kept.pending);
    this.#history.restore(kept.history);
    this.#setStatus('catchingUp');
    /** @type {any} */
    let result;
    try {
      result = await client.request('openDocument', this.#reopenFields(kept.revision));
    } catch (error) {
      const code = /** @type {PanesError} */ (error).code;
      if (code !== 'revision_in_future' && code !== 'revision_unavailable') throw error;
      // The server's document is not the one these edits were made on (its data was
      // restored from a backup, say): rebase them over the difference all the same.
      result = { ...(await client.request('openDocument', this.#openFields())), catchUp: 'snapshot' };
    }
    this.#openEpoch = client.epoch;
    this.summary = result.document ?? this.summary;
    this.#setRole(result.role);
    try {
      this.#catchUp(result);
    } catch {
      // Operations that do not fit what was kept: by difference from the server's text.
      const fresh = await client.request('openDocument', this.#openFields());
      this.#catchUp({ ...fresh, catchUp: 'snapshot' });
    }
    this.#setStatus('open');
    if (this.canUndo || this.canRedo) emit(this, 'undoChange', { canUndo: this.canUndo, canRedo: this.canRedo });
    if (this.synchronized) emit(this, 'saved', {});
  }

  /**
   * The fields of a re-opening `openDocument`: the revision, and the ids of the unsent edits,
   * so the server can say which of them it applied should its log no longer reach back.
   * @param {number} revision
   */
  #reopenFields(revision) {
    const pending = this.#ot?.pending().map((p) => p.opId) ?? [];
    return pending.length ? { ...this.#openFields(), revision, pending } : { ...this.#openFields(), revision };
  }

  /** The fields of an `openDocument` without a revision: the document, and the link if any. */
  #openFields() {
    return this.#link ? { document: this.id, link: this.#link } : { document: this.id };
  }

  /**
   * The scene's role for the document changed (`documentAccessChanged`): a viewer's window is
   * read-only; with `none` the document is closed for it, and unsent edits have nowhere to go.
   * @param {DocumentRole} role
   */
  #accessChanged(role) {
    if (role === 'none') {
      if (this.#key && this.#kept) this.#store.remove(this.#key);
      this.#kept = false;
      this.role = null;
      this.readOnly = true;
      this.#setStatus('closed');
      this.#detach();
      emit(this, 'accessChanged', { role });
      return;
    }
    this.#setRole(role);
    emit(this, 'accessChanged', { role });
  }

  /** @param {DocumentRole | undefined} role */
  #setRole(role) {
    if (!role) return;
    this.role = role;
    this.readOnly = role === 'viewer';
  }

  /**
   * Applies a re-opening `openDocument` result: the missed operations, or the difference to
   * the server's text; then resends what is unsent.
   * @param {any} result
   */
  #catchUp(result) {
    const ot = /** @type {OTClient} */ (this.#ot);
    if (result.catchUp === 'snapshot') {
      this.#rebaseOntoText(result);
    } else {
      this.#catchUpOperations(result.operations ?? []);
      if (Array.isArray(result.presence)) {
        this.remote.clear();
        for (const presence of result.presence) this.#presence.received(presence, this.#presenceView());
        emit(this, 'presence', {});
      }
    }
    ot.resend();
    this.#save();
  }

  /**
   * The operations missed, in one go: each goes through the OT client (which recognises this
   * window's own by op id), and what they do to the local text is composed and applied once,
   * so a thousand operations on a large text cost one pass over it, one transform of the undo
   * history and one `change`, not a thousand.
   * @param {Array<{ revision: number, operation: Operation, opId?: string, author?: Author }>} entries
   */
  #catchUpOperations(entries) {
    const ot = /** @type {OTClient} */ (this.#ot);
    /** @type {Operation | null} */
    let combined = null;
    /** @type {Author | null} */
    let author = null;
    for (const entry of entries) {
      if (entry.revision <= ot.revision) continue; // seen already
      if (entry.revision > ot.revision + 1) throw new Error(`operation ${entry.revision} after ${ot.revision}: a gap`);
      this.#presence.record(entry.revision, entry.operation);
      const own = ot.state.name !== 'synchronized' && entry.opId !== undefined && entry.opId === ot.state.opId ? ot.state.outstanding : null;
      const local = ot.applyServer(entry.operation, entry.opId);
      this.#advanceBase(own ?? entry.operation);
      if (local === null || isNoop(local)) continue;
      combined = combined ? compose(combined, local) : local;
      author = entry.author ?? null;
    }
    this.#scheduleSave();
    if (combined) {
      this.text = apply(this.text, combined);
      this.#presence.moveThrough(combined, undefined);
      const could = [this.canUndo, this.canRedo];
      this.#history.transform(combined);
      this.#historyChanged(could);
      emit(this, 'change', { op: combined, remote: true, author });
    }
    if (this.synchronized) emit(this, 'saved', {});
  }

  /**
   * The server's log no longer reaches back to this window's revision (or its text is not
   * what this window's edits were made on): the unsent edits are rebased over the difference
   * between the text they were made on and the server's text, as over one operation of the
   * server's. Where the two histories did not touch the same characters this is what an
   * exact catch-up gives. Edits the server says it applied (`applied`) are not sent again.
   * @param {any} result an `openDocument` result with the whole `text`
   */
  #rebaseOntoText(result) {
    const ot = /** @type {OTClient} */ (this.#ot);
    const serverText = String(result.text ?? '');
    const revision = Number(result.revision ?? 0);
    const applied = new Set(Array.isArray(result.applied) ? result.applied : []);
    let base = this.#baseText();
    if (this.#base) {
      // The local text from what it is made of, so a catch-up that failed half-way (operations
      // that did not fit) leaves nothing inconsistent behind.
      let text = base;
      for (const p of ot.pending()) text = apply(text, p.op);
      this.text = text;
    }
    while (ot.outstandingId !== null && applied.has(ot.outstandingId)) {
      base = apply(base, /** @type {Operation} */ (ot.dropOutstanding()));
    }
    const could = [this.canUndo, this.canRedo];
    const local = ot.rebase(revision, diffOperation(base, serverText));
    this.text = apply(this.text, local);
    this.#history.transform(local);
    this.#presence.reset();
    for (const presence of result.presence ?? []) this.#presence.received(presence, this.#presenceView());
    this.#presence.clampLocal(codePointLength(this.text));
    if (this.#base) {
      this.#base = { revision, text: serverText };
      this.#since = null;
      this.#sinceCount = this.#sinceInserted = 0;
    }
    emit(this, 'change', { op: local, remote: true, author: null });
    emit(this, 'reset', {});
    this.#historyChanged(could);
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
      const result = await this.#client.request('openDocument', this.#reopenFields(ot.revision), { queue: false });
      if (this.#ot !== ot || this.gone) return;
      this.#openEpoch = this.#client.epoch;
      this.summary = result.document ?? this.summary;
      this.#setRole(result.role);
      this.#catchUp(result);
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

  /**
   * Opens afresh and rebases the unsent edits over the difference to the server's text: when
   * operations arrived that do not fit the local text, or the server refused the revision.
   * With `dropUnsent` (an edit the server can never apply: invalid, too large, forbidden) the
   * unsent edits go instead, and the text becomes the server's.
   * @param {{ dropUnsent?: boolean }} [options]
   */
  async #reload(options = {}) {
    try {
      const result = await this.#client.request('openDocument', this.#openFields(), { queue: false });
      if (this.gone) return;
      this.#openEpoch = this.#client.epoch;
      this.summary = result.document ?? this.summary;
      this.#setRole(result.role);
      if (options.dropUnsent || !this.#ot) {
        this.#start(result);
        this.#history.restore(null);
        this.#base = this.#since = null;
        this.#save();
        emit(this, 'change', { op: null, remote: true, author: null });
        emit(this, 'reset', {});
        emit(this, 'undoChange', { canUndo: false, canRedo: false });
      } else {
        this.#ot.disconnected();
        this.#catchUp({ ...result, catchUp: 'snapshot' });
        this.#setStatus('open');
        this.#presence.resend();
        return;
      }
      this.#setStatus('open');
    } catch (error) {
      if (/** @type {PanesError} */ (error).code === 'document_not_found') this.#markDeleted();
    }
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
        if (ot.serverAck(opId) && acknowledged) {
          this.#presence.record(Number(result.revision ?? ot.revision), acknowledged);
          this.#advanceBase(acknowledged);
        }
        // All saved: the kept state says so at once (nothing is left to send); else soon.
        if (this.synchronized) this.#save();
        else this.#scheduleSave();
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
            this.#reload({ dropUnsent: true });
        }
      });
  }

  /**
   * Keeps the document's text now as a named version (`saveVersion`); resolves with it.
   * @param {string} name
   * @returns {Promise<import('../types/panes-client.js').Version>}
   */
  async saveVersion(name) {
    return (await this.#client.request('saveVersion', { document: this.id, name })).version;
  }

  /**
   * Brings a version's text back (`restoreVersion`): the server makes the change from today's
   * text to the version's as this window's edit, which every other window receives as an
   * operation; this window applies it from the reply (past its own unsent edits, as anyone's),
   * and it is one undo step of this window's: `undo()` takes it back.
   * @param {string} version
   * @returns {Promise<import('../types/panes-client.js').RestoreVersionResult>}
   */
  async restoreVersion(version) {
    if (!this.#ot || this.gone || this.readOnly) throw new PanesError({ code: 'document_not_open', message: 'the document is not open for editing' }, 'restoreVersion');
    const result = await this.#client.request('restoreVersion', { document: this.id, version });
    if (!result.unchanged && result.operation && this.#ot) {
      try {
        this.#serverOperation(result.revision, result.operation, result.opId, result.author ?? null, true);
      } catch {
        this.#reload(); // an operation that does not fit the local text: start afresh
      }
    }
    return result;
  }

  /**
   * An operation the server applied, at `revision`.
   * @param {number} revision
   * @param {Operation} op
   * @param {string | undefined} opId
   * @param {Author | null} author
   * @param {boolean} [ownStep] this window's own change made by the server (a restore): one
   *   undo step of its own, not someone else's edit
   */
  #serverOperation(revision, op, opId, author, ownStep = false) {
    const ot = this.#ot;
    if (!ot) return;
    if (revision <= ot.revision) return; // seen already
    if (revision > ot.revision + 1) {
      this.#reopen(); // a gap: fetch what is missing
      return;
    }
    this.#presence.record(revision, op);
    const own = ot.state.name !== 'synchronized' && opId !== undefined && opId === ot.state.opId ? ot.state.outstanding : null;
    const local = ot.applyServer(op, opId);
    this.#advanceBase(own ?? op);
    if (own && this.synchronized) this.#save();
    else this.#scheduleSave();
    if (local === null) {
      if (this.synchronized) emit(this, 'saved', {});
      return; // our own operation, replayed: now acknowledged
    }
    const before = this.text;
    this.text = apply(before, local);
    this.#presence.moveThrough(local, author?.scene);
    const could = [this.canUndo, this.canRedo];
    if (ownStep) {
      this.#history.close();
      this.#history.recordEdit(local, before, this.#connection.timers.now());
      this.#history.close();
      this.#save();
    } else {
      this.#history.transform(local);
    }
    this.#historyChanged(could);
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
    /** @type {import('../types/panes-client.js').Requests['setPresence'][0]} */
    const fields = { document: this.id, revision: this.#ot.revision, selection, name: this.name, color: this.color };
    if (this.#data !== undefined) fields.data = this.#data;
    return client.request('setPresence', fields, { queue: false });
  }

  #markDeleted() {
    if (this.status === 'deleted') return;
    if (this.#key && this.#kept) this.#store.remove(this.#key);
    this.#kept = false;
    this.#setStatus('deleted');
    this.#detach();
    emit(this, 'deleted', {});
  }

  #detach() {
    for (const off of this.#offs.splice(0)) off();
    this.#presence.stop();
    this.#connection.timers.clearTimeout(this.#saveTimer);
    this.#saveTimer = null;
  }

  // MARK: Keeping unsent edits

  /**
   * Starts keeping the base text, if it is not kept yet: before the first local edit (or
   * undo) with nothing unsent and no history, the text it is made on is the server's.
   * @param {string} before the text before the edit
   */
  #track(before) {
    if (this.#base || !this.#ot) return;
    this.#base = { revision: this.#ot.revision, text: before };
    this.#since = null;
    this.#sinceCount = this.#sinceInserted = 0;
  }

  /** The text the unsent edits apply to: the server's text at `revision`. */
  #baseText() {
    if (!this.#base) return this.text; // nothing unsent
    return this.#since ? apply(this.#base.text, this.#since) : this.#base.text;
  }

  /**
   * The server's text moved on by `op` (someone's edit, or this window's, acknowledged).
   * @param {Operation} op
   */
  #advanceBase(op) {
    if (!this.#base) return;
    if (this.synchronized && !this.canUndo && !this.canRedo) {
      this.#base = this.#since = null; // nothing left to keep
      return;
    }
    this.#since = this.#since ? compose(this.#since, op) : op;
    this.#sinceCount += 1;
    for (const c of op) if (typeof c === 'string') this.#sinceInserted += c.length;
    if (this.#sinceCount >= BASE_EVERY_REVISIONS || this.#sinceInserted >= BASE_EVERY_INSERTED) {
      this.#base = { revision: this.revision, text: this.#baseText() };
      this.#since = null;
      this.#sinceCount = this.#sinceInserted = 0;
    }
  }

  /** Keeps what is unsent and the undo history now (the write is under way when this returns). */
  #save() {
    this.#connection.timers.clearTimeout(this.#saveTimer);
    this.#saveTimer = null;
    const key = this.#key;
    const ot = this.#ot;
    if (!key || !ot) return;
    if (ot.state.name === 'synchronized' && !this.canUndo && !this.canRedo) {
      this.#base = this.#since = null;
      if (this.#kept) this.#store.remove(key);
      this.#kept = false;
      return;
    }
    if (!this.#base) this.#base = { revision: ot.revision, text: this.#baseText() };
    this.#store.save(key, {
      version: 1,
      session: key.session,
      document: key.document,
      revision: ot.revision,
      base: this.#base,
      since: this.#since && !isNoop(this.#since) ? this.#since : null,
      pending: ot.pending(),
      history: this.#history.toJSON(),
      savedAt: this.#connection.timers.now(),
    });
    this.#kept = true;
  }

  /** Saves soon: after an acknowledgement or someone else's edit, which lose nothing if missed. */
  #scheduleSave() {
    if (!this.#key || this.#saveTimer !== null) return;
    if (!this.#kept && this.#base === null) return;
    this.#saveTimer = this.#connection.timers.setTimeout(() => {
      this.#saveTimer = null;
      if (!this.gone) this.#save();
    }, SAVE_DELAY_MS);
  }

  #flushSave() {
    if (this.#saveTimer !== null) this.#save();
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
