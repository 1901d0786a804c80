// @ts-check
/**
 * `PanesClient`: one scene's connection to a Panes server, with everything a window needs
 * around it, behind one object. The work is done by one module per concern:
 *
 * - `connection.js`: the socket, the `connect` handshake, request and reply, reconnecting;
 * - `scenes.js`: lifecycle, restoration activity, `userInfo`, the switcher, window requests;
 * - `preferences.js`: observations with catch-up after a reconnect;
 * - `documents.js` and `presence.js`: the document list and open documents; `pending-store.js`
 *   keeps what a window typed until the server has it (the `pendingStore` option);
 * - `dragdrop.js`: drags between scenes; `applied-drops.js` hands each drag's `itemsDropped` to
 *   the listeners once, also when the server delivers it again (the `storage` option keeps it).
 *
 * Types and documentation of the public surface: `types/panes-client.d.ts`.
 *
 * @module panes-client
 */
import { Connection } from './connection.js';
import { DragAndDrop } from './dragdrop.js';
import { EventSource, emit } from './emitter.js';
import { DocumentSession } from './documents.js';
import { registerConnection, registerPendingStore } from './internal.js';
import { MemoryPendingStore } from './pending-store.js';
import { Preferences } from './preferences.js';
import { Scenes } from './scenes.js';

export { PROTOCOL_VERSION, SUBPROTOCOL, CLIENT_VERSION } from './connection.js';

// The types the workspace (web/app) imports from this module.
/** @typedef {import('../types/panes-client.js').Activity} Activity */
/** @typedef {import('../types/panes-client.js').Traits} Traits */
/** @typedef {import('../types/panes-client.js').LifecycleState} LifecycleState */
/** @typedef {import('../types/panes-client.js').Session} Session */
/** @typedef {import('../types/panes-client.js').ConnectResult} ConnectResult */
/** @typedef {import('../types/panes-client.js').ConnectEvent} ConnectEvent */
/** @typedef {import('../types/panes-client.js').SessionSummary} SessionSummary */
/** @typedef {import('../types/panes-client.js').SessionList} SessionList */
/** @typedef {import('../types/panes-client.js').PreferenceChange} PreferenceChange */
/** @typedef {import('../types/panes-client.js').ObserveOptions} ObserveOptions */
/** @typedef {import('../types/panes-client.js').ObservationHandle} ObservationHandle */
/** @typedef {import('../types/panes-client.js').Status} Status */
/** @typedef {import('../types/panes-client.js').StatusChange} StatusChange */
/** @typedef {import('../types/panes-client.js').ClientOptions} ClientOptions */
/** @typedef {import('../types/panes-client.js').RequestOptions} RequestOptions */
/** @typedef {import('../types/panes-client.js').Requests} Requests */
/** @typedef {import('../types/panes-client.js').PanesClientEvents} PanesClientEvents */
/** @typedef {import('../types/panes-client.js').DragItem} DragItem */
/** @typedef {import('../types/panes-client.js').DragOperation} DragOperation */
/** @typedef {import('../types/panes-client.js').DismissalAnimation} DismissalAnimation */
/** @typedef {import('../types/panes-client.js').PreferenceDomain} PreferenceDomain */
/** @typedef {import('../types/panes-client.js').RefreshUpdate} RefreshUpdate */
/** @typedef {import('../types/panes-client.js').DocumentSummary} DocumentSummary */
/** @typedef {import('../types/panes-client.js').DocumentSessionOptions} DocumentSessionOptions */
/** @typedef {import('../types/panes-client.js').Version} Version */

/**
 * @extends {EventSource<PanesClientEvents>}
 */
export class PanesClient extends EventSource {
  #connection;
  #scenes;
  #preferences;
  #drags;

  /** @param {ClientOptions} options */
  constructor(options) {
    super();
    this.#connection = new Connection(options, (type, payload) => emit(this, type, payload));
    registerConnection(this, this.#connection);
    registerPendingStore(this, options.pendingStore ?? new MemoryPendingStore());
    const on = (/** @type {string} */ type, /** @type {(payload: any) => void} */ listener) => this.on(type, listener);
    // Preferences first: observations are re-made before anyone else's connection hooks run.
    this.#preferences = new Preferences(this.#connection, on);
    this.#scenes = new Scenes(this.#connection, on, (type, payload) => emit(this, type, payload));
    this.#drags = new DragAndDrop(this.#connection);
  }

  // MARK: State

  get url() {
    return this.#connection.url;
  }

  get workspace() {
    return this.#connection.workspace;
  }

  get status() {
    return this.#connection.status;
  }

  get connected() {
    return this.#connection.connected;
  }

  get connectResult() {
    return this.#connection.connectResult;
  }

  /** The session this scene is attached to, once connected. */
  get session() {
    return this.#connection.connectResult?.session ?? null;
  }

  /** This scene's identifier on the current connection. */
  get scene() {
    return this.#connection.connectResult?.scene ?? null;
  }

  get user() {
    return this.#connection.connectResult?.user ?? null;
  }

  /** Connections made so far. */
  get epoch() {
    return this.#connection.epoch;
  }

  get ready() {
    return this.#connection.ready;
  }

  /**
   * False once the server answered a request of this type with `unknown_type`.
   * @param {string} type
   */
  supports(type) {
    return !this.#connection.requests.unsupported.has(type);
  }

  // MARK: Connection

  start() {
    return this.#connection.start();
  }

  close() {
    this.#connection.close();
  }

  reconnectNow() {
    this.#connection.reconnectNow();
  }

  dropConnection() {
    this.#connection.dropConnection();
  }

  /**
   * @param {string} type
   * @param {Record<string, any>} [fields]
   * @param {RequestOptions} [options]
   * @returns {Promise<any>}
   */
  request(type, fields, options) {
    return this.#connection.request(type, fields, options);
  }

  /**
   * @param {(event: ConnectEvent) => void} hook
   * @returns {() => void}
   */
  onEveryConnection(hook) {
    return this.#connection.onEveryConnection(hook);
  }

  /**
   * @param {string} token
   * @returns {Promise<{ user: { id: string, name: string, role: string }, auth: { expiresAt: number | null } }>}
   */
  async refreshToken(token) {
    const result = await this.request('refreshToken', { token });
    this.#connection.tokenRefreshed(token);
    return result;
  }

  // MARK: Scenes and sessions

  /** @param {LifecycleState} state */
  setLifecycle(state) {
    this.#scenes.setLifecycle(state);
  }

  /** This scene's traits, as the server last answered (see `setTraits`). */
  get traits() {
    return this.#scenes.traits;
  }

  /** @param {Partial<Traits>} traits */
  setTraits(traits) {
    this.#scenes.setTraits(traits);
  }

  /** @param {Activity | null} activity */
  updateActivity(activity) {
    return this.#scenes.updateActivity(activity);
  }

  /**
   * @param {Record<string, any>} userInfo
   * @param {{ merge?: boolean }} [options]
   */
  setUserInfo(userInfo, options = {}) {
    return this.#scenes.setUserInfo(userInfo, options);
  }

  listSessions() {
    return this.#scenes.listSessions();
  }

  /** @param {(list: SessionList) => void} callback */
  watchSessions(callback) {
    return this.#scenes.watchSessions(callback);
  }

  /**
   * @param {string} session
   * @param {DismissalAnimation} [animation]
   */
  requestDestruction(session, animation = 'standard') {
    return this.#scenes.requestDestruction(session, animation);
  }

  ping() {
    return this.request('ping');
  }

  // MARK: Windows

  /**
   * @param {Activity} activity
   * @param {{ session?: string }} [options]
   */
  requestActivation(activity, options = {}) {
    return this.#scenes.requestActivation(activity, options);
  }

  /** @param {RefreshUpdate} update */
  requestRefresh(update) {
    return this.#scenes.requestRefresh(update);
  }

  // MARK: Preferences

  /**
   * @param {string} keyPath
   * @param {ObserveOptions} options
   * @param {(change: PreferenceChange) => void} callback
   * @param {{ domain?: PreferenceDomain }} [scope]
   * @returns {ObservationHandle}
   */
  observe(keyPath, options, callback, scope = {}) {
    return this.#preferences.observe(keyPath, options, callback, scope.domain ?? 'user');
  }

  /**
   * @param {string} keyPath
   * @param {any} value
   * @param {{ domain?: PreferenceDomain, ifVersion?: number }} [options]
   */
  setPreference(keyPath, value, options = {}) {
    return this.#preferences.set(keyPath, value, options);
  }

  /**
   * @param {string} keyPath
   * @param {{ domain?: PreferenceDomain, ifVersion?: number }} [options]
   */
  removePreference(keyPath, options = {}) {
    return this.#preferences.remove(keyPath, options);
  }

  // MARK: Documents

  /**
   * @param {string} title
   * @param {{ text?: string }} [options]
   * @returns {Promise<DocumentSummary>}
   */
  async createDocument(title, options = {}) {
    /** @type {Record<string, any>} */
    const fields = { title };
    if (options.text !== undefined) fields.text = options.text;
    return (await this.request('createDocument', fields)).document;
  }

  /**
   * @param {string} document
   * @param {string} title
   * @returns {Promise<DocumentSummary>}
   */
  async renameDocument(document, title) {
    return (await this.request('renameDocument', { document, title })).document;
  }

  /**
   * @param {string} document
   * @returns {Promise<void>}
   */
  async deleteDocument(document) {
    await this.request('deleteDocument', { document });
  }

  // Versions (PROTOCOL.md, "Versions"). Saving and restoring need the document open:
  // `DocumentSession.saveVersion`, `DocumentSession.restoreVersion`.

  /**
   * The document's named versions and checkpoints, newest first.
   * @param {string} document
   * @returns {Promise<Version[]>}
   */
  async listVersions(document) {
    return (await this.request('listVersions', { document })).versions;
  }

  /**
   * One version and its text.
   * @param {string} document
   * @param {string} version
   * @returns {Promise<{ version: Version, text: string }>}
   */
  readVersion(document, version) {
    return this.request('readVersion', { document, version });
  }

  /**
   * The operation that turns version `from`'s text into version `to`'s.
   * @param {string} document
   * @param {string} from
   * @param {string} to
   * @returns {Promise<{ from: Version, to: Version, operation: import('../types/panes-client.js').Operation }>}
   */
  compareVersions(document, from, to) {
    return this.request('compareVersions', { document, from, to });
  }

  /**
   * @param {string} document
   * @param {string} user
   * @param {import('../types/panes-client.js').DocumentRole} role
   */
  shareDocument(document, user, role) {
    return this.request('shareDocument', { document, user, role });
  }

  /**
   * @param {string} document
   * @param {string} user
   */
  unshareDocument(document, user) {
    return this.request('unshareDocument', { document, user });
  }

  /**
   * @param {string} document
   * @param {'viewer' | 'editor'} role
   * @param {{ expiresInMs?: number }} [options]
   */
  async createDocumentLink(document, role, options = {}) {
    /** @type {{ document: string, role: 'viewer' | 'editor', expiresInMs?: number }} */
    const fields = { document, role };
    if (options.expiresInMs !== undefined) fields.expiresInMs = options.expiresInMs;
    const result = await this.request('createDocumentLink', fields);
    return { link: result.link, token: result.token };
  }

  /**
   * @param {string} document
   * @param {string} link
   */
  revokeDocumentLink(document, link) {
    return this.request('revokeDocumentLink', { document, link });
  }

  /** @param {string} document */
  listDocumentShares(document) {
    return this.request('listDocumentShares', { document });
  }

  /**
   * @param {string} document
   * @param {DocumentSessionOptions} [options]
   */
  openDocument(document, options) {
    return new DocumentSession(this, document, options).open();
  }

  // MARK: Drag and drop

  /** @param {DragItem[]} items */
  beginDrag(items) {
    return this.#drags.beginDrag(items);
  }

  /**
   * @param {string} drag
   * @param {'scene' | 'newWindow'} target
   * @param {{ scene?: string, operation?: DragOperation }} [options]
   */
  drop(drag, target, options = {}) {
    return this.#drags.drop(drag, target, options);
  }

  /** @param {string} drag */
  cancelDrag(drag) {
    return this.#drags.cancelDrag(drag);
  }
}
