// The public surface of `panes-client`: everything its one entry point exports, and nothing
// else. The JavaScript in `lib/` implements it; `scripts/test` checks with `tsc` that the
// implementation matches this file in both directions (Tests/web/types/conformance.mts).
//
// Protocol: PROTOCOL.md in the Panes repository, and PROTOCOL.schema.json for machines. Servers
// may add events and fields in compatible ways, so event payloads and results are open to extra
// fields. The names of requests, events and error codes here are checked against the schema
// (Tests/web/types/protocol-names.mts, made by scripts/protocol-names.mjs).

/// <reference lib="dom" />

export {};

// MARK: Wire data

/** An activity (`NSUserActivity`): what a window shows, handed between windows, kept for restoration. */
export interface Activity {
  activityType: string;
  title?: string;
  userInfo?: Record<string, any>;
  targetContentIdentifier?: string;
}

export interface Traits {
  width: 'compact' | 'regular';
  pointer: 'fine' | 'coarse';
}

/** `traitsChanged`: the scene's traits changed (`traitCollectionDidChange`); lay the window out again. */
export interface TraitsChange {
  traits: Traits;
  previous: Traits;
}

export interface LifecycleState {
  visible: boolean;
  focused: boolean;
}

/** A scene session as `connect` returns it. */
export interface Session {
  persistentIdentifier: string;
  secret: string;
  role: string;
  configuration: string;
  title: string;
  /** The switcher's second line (set by `updateActivity` and `requestRefresh`); "" for none. */
  subtitle: string;
  snapshot?: { text?: string; image?: string };
  userInfo: Record<string, any>;
  stateRestorationActivity?: Activity | null;
  restorationMetadata?: Record<string, any> | null;
  createdAt: number;
  lastActiveAt: number;
}

/** `document_gone`: the document the window showed was deleted; the activity was not handed back. */
export type RestorationStatus = 'none' | 'restored' | 'stale' | 'incompatible' | 'superseded' | 'cleanStart' | 'document_gone';

/** The result of `connect`: this scene, its user and its session. */
export interface ConnectResult {
  scene: string;
  workspace: string;
  user: { id: string; name: string; role: string };
  /** When the credential stops being accepted (ms), or null; `refreshToken` before then. */
  auth?: { expiresAt: number | null };
  session: Session;
  created: boolean;
  /** The session this one was forked from (a duplicated tab); absent or null otherwise. */
  forkedFrom?: string | null;
  connectionOptions: { userActivities: Activity[] };
  restoration: { status: RestorationStatus };
  traits: Traits;
  server: { version: string; protocol: number };
  limits: Record<string, number>;
}

export type SceneState = 'foregroundActive' | 'foregroundInactive' | 'background' | 'unattached' | 'disconnected';

/** One entry of the switcher (`listSessions`). */
export interface SessionSummary {
  persistentIdentifier: string;
  title: string;
  /** The session's subtitle (`updateActivity`, `requestRefresh`); "" for none. */
  subtitle: string;
  snapshot?: { text?: string; image?: string } | null;
  configuration: string;
  role: string;
  state: SceneState | string;
  scene?: string | null;
  /** The live scene's traits; absent without a live scene. */
  traits?: Traits | null;
  targetContentIdentifier?: string | null;
  createdAt: number;
  lastActiveAt: number;
}

export interface SessionList {
  sessions: SessionSummary[];
  appState: string;
}

export type PreferenceDomain = 'user' | 'workspace';

/** A `preferenceChanged` event, as an observer's callback gets it. */
export interface PreferenceChange {
  domain: string;
  /** The key that changed (at or below the observed key path). */
  keyPath: string;
  version?: number;
  /** The value now (absent when removed with no default). */
  new?: any;
  /** The value before, when the observation asked for `old`. */
  old?: any;
  /** Sent because the observation asked for `initial`. */
  initial?: boolean;
  /** The value is the registered default. */
  isDefault?: boolean;
  /** The operator's managed preferences lock the key: writes are refused with `preference_locked`. */
  locked?: boolean;
  /** False: the key has neither a value nor a default. */
  exists?: boolean;
  removed?: boolean;
  /** A change made while this client was disconnected, found when it reconnected. */
  catchUp?: boolean;
}

export interface ObserveOptions {
  /** Deliver the current values first (before `ready` resolves). */
  initial?: boolean;
  /** Include the value before each change. */
  old?: boolean;
  /** Include the new value (default true). */
  new?: boolean;
}

/** An observation: `stop()` ends it; `ready` resolves once the server has taken it. */
export interface ObservationHandle {
  stop(): void;
  readonly ready: Promise<void>;
}

export interface PreferenceWriteResult {
  version: number;
  changed: boolean;
}

export interface ActivationResult {
  action: 'activated' | 'open';
  session: string;
  scene?: string;
  ticket?: string;
  url?: string;
  expiresAt?: number;
  created?: boolean;
}

export interface RefreshUpdate {
  session: string;
  title?: string;
  subtitle?: string;
  snapshot?: { text?: string; image?: string };
  activity?: Activity;
}

export type DragOperation = 'copy' | 'move';

export interface DragItem {
  activity: Activity;
  operations?: DragOperation[];
}

export interface DropResult {
  /** Dropped on this scene: the items. */
  items?: Activity[];
  /** Dropped on another scene: that scene. */
  delivered?: string;
  /** Dropped on the new-window zone: one window ticket per item. */
  windows?: Array<{ session: string; ticket: string; url: string }>;
  operation?: DragOperation;
}

export type DismissalAnimation = 'standard' | 'commit' | 'decline';

/** The MIME type under which a page carries a drag's identifier in the native drag data. */
export declare const DRAG_MIME_TYPE: string;

// MARK: Events

export interface ActivateEvent {
  activity: Activity;
  requestedBy?: { scene: string; session: string };
}

export interface ItemsDroppedEvent {
  drag: string;
  items: Activity[];
  operation: DragOperation;
  source?: { scene: string; session: string };
}

export interface DragEndedEvent {
  drag: string;
  outcome: 'dropped' | 'cancelled';
  operation?: DragOperation;
  target?: { kind: 'scene' | 'newWindow'; scene?: string; sessions?: string[] };
  reason?: string;
}

export interface DocumentsChangedEvent {
  /** `shared`: now visible to this user (a grant); `unshared`: no longer (it leaves the list). */
  change: 'created' | 'renamed' | 'deleted' | 'modified' | 'presence' | 'shared' | 'unshared';
  document: DocumentSummary;
  /** Who deleted it, for `deleted` (null when another server node did). */
  by?: Actor | null;
}

/** Who did something: the user, their display name, and the scene they did it from. */
export interface Actor {
  user: string;
  name: string;
  scene: string;
}

/** `sessionRefreshed`: another scene refreshed this scene's session (`requestRefresh`); take it in. */
export interface SessionRefreshedEvent {
  session: string;
  title: string;
  subtitle: string;
  snapshot?: { text?: string; image?: string };
  /** The new restoration activity, when the refresh replaced it. */
  activity?: Activity;
  /** Null when not known: a refresh another node stored while this window was resuming. */
  requestedBy: { scene: string; session: string } | null;
}

export interface DocumentOperationEvent {
  document: string;
  revision: number;
  operation: Operation;
  opId?: string;
  author?: Author;
}

export interface PresenceEvent {
  document: string;
  revision: number;
  scene: string;
  user: string;
  name?: string;
  color?: string;
  selection: Selection | null;
  left?: boolean;
  /** The scene's own payload (`setPresence`'s `data`), or null. */
  data?: unknown;
}

export type Status = 'idle' | 'connecting' | 'connected' | 'reconnecting' | 'closed' | 'destroyed' | 'failed';

export interface StatusChange {
  status: Status;
  /** Connection attempts since the last success. */
  attempt?: number;
  /** When the next attempt starts (the timers' clock), while waiting. */
  retryAt?: number;
  /** Why connecting failed, for `failed`. */
  error?: PanesError;
}

export interface ConnectEvent {
  result: ConnectResult;
  /** The first connection of this client. */
  first: boolean;
  /** The session differs from the previous connection's (a fork, or a replacement): push your state again. */
  sessionChanged: boolean;
}

/** The server's events, by their `type` (PROTOCOL.md, "Events"). */
export interface ServerEvents {
  preferenceChanged: PreferenceChange & { observations: number[] };
  sessionsChanged: SessionList;
  sessionDestroyed: { session: string; animation: DismissalAnimation | string };
  sessionRefreshed: SessionRefreshedEvent;
  goingAway: { reconnectAfterMs: number; reason?: string };
  activate: ActivateEvent;
  /** Emitted once per `drag`: a redelivery of the same drag (the protocol allows one) is not emitted. */
  itemsDropped: ItemsDroppedEvent;
  dragEnded: DragEndedEvent;
  documentsChanged: DocumentsChangedEvent;
  documentOperation: DocumentOperationEvent;
  presence: PresenceEvent;
  /** The document was deleted (by `by`); it is closed for this scene. */
  documentDeleted: { document: string; by?: Actor | null };
  /** This scene's role for an open document changed; `none`: it is closed for this scene. */
  documentAccessChanged: { document: string; role: DocumentRole };
}

/** Events of a `PanesClient`: the server's events by their `type`, and the client's own. */
export interface PanesClientEvents extends ServerEvents {
  status: StatusChange;
  connect: ConnectEvent;
  disconnect: { code: number; reason: string };
  /** This scene's session was destroyed: the client has stopped. */
  destroyed: { session: string; animation: DismissalAnimation | string };
  /** Connecting failed for good (`unauthenticated`, `not_a_member`, …). */
  error: PanesError;
  /** A `connect` request failed (perhaps to be retried). */
  connectError: PanesError;
  /** The window ticket was used (or was invalid): a browser removes it from the URL. */
  ticketUsed: { invalid?: boolean };
  /** The scene's traits changed, as the server answered (or, while disconnected, as set). */
  traitsChanged: TraitsChange;
  /** Events a newer server sends that this version does not know. */
  [event: string]: unknown;
}

/** Subscriptions: `on` returns the function that unsubscribes. */
declare abstract class EventSource<Events> {
  on<K extends keyof Events & string>(type: K, listener: (payload: Events[K]) => void): () => void;
  once<K extends keyof Events & string>(type: K, listener: (payload: Events[K]) => void): () => void;
}

// MARK: Client

/** The part of a WebSocket the client uses (the browser's, Node's global one, or `ws`'s). */
export interface SocketLike {
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((event?: any) => void) | null;
  onmessage: ((event: { data: any }) => void) | null;
  onclose: ((event: { code: number; reason?: string }) => void) | null;
  onerror: ((event?: any) => void) | null;
}

/** A WebSocket constructor: the global `WebSocket`, or `ws`'s default export. */
export type WebSocketConstructor = new (url: string, protocols?: string | string[]) => any;

export interface Timers {
  setTimeout(callback: () => void, ms: number): any;
  clearTimeout(handle: any): void;
  now(): number;
}

/** The part of `Storage` (`sessionStorage`) the client uses. */
export interface StorageLike {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

export interface BackoffOptions {
  /** The first delay, before jitter (default 250 ms). */
  baseMs?: number;
  /** The largest delay after failures at the server (it answered, then refused or failed), before jitter (default 15 000 ms). */
  maxMs?: number;
  /**
   * The largest delay while the server cannot be reached at all (the socket never opened),
   * before jitter (default 2 000 ms): a server that comes back is found within this.
   */
  unreachableMaxMs?: number;
  /** Growth per attempt (default 2). */
  factor?: number;
  /** The random fraction of each delay, 0…1 (default 0.5). */
  jitter?: number;
}

export interface ClientOptions {
  /** The WebSocket URL, e.g. `ws://127.0.0.1:8080/ws`. */
  url: string;
  /** Default `default`. */
  workspace?: string;
  /**
   * `{ name: 'Alice' }` with `--auth open`, `{ token: '…' }` with `--auth tokens` or `--auth jwt`;
   * or a function that returns them (or a promise of them), called before every `connect`, so
   * a reconnect (after close 4010, an expired token) gets a fresh token from the application.
   */
  auth?: Record<string, any> | (() => Record<string, any> | Promise<Record<string, any>>);
  /** Client name and version, kept in restoration metadata. */
  client?: string;
  traits?: Traits | (() => Traits);
  /** The initial lifecycle report (default visible and focused). */
  lifecycle?: LifecycleState;
  /**
   * Where the session's identifier and secret are kept between connections (a browser: `sessionStorage`),
   * and, under `<storageKey>.drops`, the last 64 drags whose `itemsDropped` this window got (one
   * delivered again is not emitted twice).
   */
  storage?: StorageLike | null;
  /** Default `panes.session.<workspace>`. */
  storageKey?: string;
  /** A window ticket; wins over the stored session. */
  ticket?: string | null;
  /** The WebSocket constructor; default the global `WebSocket` (Node 20 has none: pass `ws`'s). */
  WebSocket?: WebSocketConstructor;
  /** Makes a socket; wins over `WebSocket`. */
  createSocket?: (url: string, protocol: string) => SocketLike;
  timers?: Partial<Timers>;
  /** For backoff jitter; default `Math.random`. */
  random?: () => number;
  /** Default 15 000. */
  requestTimeoutMs?: number;
  /** Default 15 000. */
  connectTimeoutMs?: number;
  /** Ping after this long without traffic and drop the connection if unanswered; 0 disables; default 25 000. */
  heartbeatMs?: number;
  backoff?: BackoffOptions;
  /**
   * Where each window keeps its unsent edits and undo history per document, so a reload or
   * a reopened window sends them once (default: in memory, `MemoryPendingStore`;
   * `connectInBrowser`: IndexedDB, `IndexedDBPendingStore`).
   */
  pendingStore?: PendingStore;
}

/** Whose kept edits: a session (`persistentIdentifier`) and a document. */
export interface PendingKey {
  session: string;
  document: string;
}

/** What a window keeps of one document until the server has it. */
export interface PendingRecord {
  version: 1;
  session: string;
  document: string;
  /** The server revision the unsent edits apply to. */
  revision: number;
  /** The server's text at `base.revision`… */
  base: { revision: number; text: string };
  /** …and the server's operations since (composed), which take it to `revision`. */
  since: Operation | null;
  /** Unacknowledged edits, oldest first, each on the text the ones before it leave. */
  pending: Array<{ op: Operation; opId: string }>;
  /** Undo and redo steps, on the text with the pending edits applied. */
  history: { undo: any[]; redo: any[] };
  /** Milliseconds since the epoch. */
  savedAt: number;
}

/** Storage for `PendingRecord`s. `save` must start the write before it returns. */
export interface PendingStore {
  load(key: PendingKey): Promise<PendingRecord | null>;
  save(key: PendingKey, record: PendingRecord): void;
  remove(key: PendingKey): void;
  /** The documents with something kept for a session. */
  documents?(session: string): Promise<string[]>;
}

/** Keeps pending records in memory, for the life of the process (the default). */
export declare class MemoryPendingStore implements PendingStore {
  load(key: PendingKey): Promise<PendingRecord | null>;
  save(key: PendingKey, record: PendingRecord): void;
  remove(key: PendingKey): void;
  documents(session: string): Promise<string[]>;
}

/** Keeps pending records in the browser's IndexedDB (database `panes-pending`). */
export declare class IndexedDBPendingStore implements PendingStore {
  /** `maxAgeMs`: records not written for this long are deleted when it opens (default 30 days). */
  constructor(options?: { name?: string; indexedDB?: IDBFactory; maxAgeMs?: number });
  load(key: PendingKey): Promise<PendingRecord | null>;
  save(key: PendingKey, record: PendingRecord): void;
  remove(key: PendingKey): void;
  documents(session: string): Promise<string[]>;
}

/**
 * The operation turning `from` into `to`: Myers' diff over lines, then over code points inside
 * changed lines; exact whatever the budget (`apply(from, diffOperation(from, to)) === to`).
 */
export declare function diffOperation(from: string, to: string, options?: { budget?: number }): Operation;

export interface RequestOptions {
  timeoutMs?: number;
  /**
   * While disconnected, wait for the connection (default) rather than fail with `disconnected`.
   * A request that waits and has an `idempotencyKey` is also sent again, with its key, when its
   * connection drops before the reply or the server answers `outcome_unknown`.
   */
  queue?: boolean;
  /**
   * The request's `idempotencyKey` (1 to 128 bytes; PROTOCOL.md, "What a client may retry"). By
   * default a request that changes stored state gets a new one; `null` sends none.
   */
  idempotencyKey?: string | null;
}

/** Every request type of the protocol: those of `Requests`, and `connect`, which the client sends itself. */
export type RequestType = keyof Requests | 'connect';

/** Requests with typed fields and results; `request` takes any other type too. */
export interface Requests {
  ping: [{}, { now: number }];
  refreshToken: [{ token: string }, { user: { id: string; name: string; role: string }; auth: { expiresAt: number | null } }];
  lifecycle: [LifecycleState, { state: string }];
  updateTraits: [{ traits: Partial<Traits> }, { traits: Traits; previous: Traits; changed: boolean }];
  updateActivity: [{ activity: Activity | null; subtitle?: string }, { savedAt: number; metadata?: Record<string, any> }];
  setUserInfo: [{ userInfo: Record<string, any>; mode?: 'replace' | 'merge' }, { userInfo: Record<string, any> }];
  listSessions: [{ watch?: boolean }, SessionList];
  requestDestruction: [{ session: string; animation?: DismissalAnimation }, { session: string; animation: string }];
  observe: [{ domain?: PreferenceDomain; keyPath: string; options?: Array<'initial' | 'new' | 'old'> }, { observation: number }];
  unobserve: [{ observation: number }, {}];
  setPreference: [{ domain?: PreferenceDomain; keyPath: string; value: any; ifVersion?: number }, PreferenceWriteResult];
  removePreference: [{ domain?: PreferenceDomain; keyPath: string; ifVersion?: number }, PreferenceWriteResult];
  requestActivation: [{ activity: Activity; session?: string }, ActivationResult];
  requestRefresh: [RefreshUpdate, { session: SessionSummary }];
  beginDrag: [{ items: DragItem[] }, { drag: string; expiresAt: number }];
  drop: [{ drag: string; target: 'scene' | 'newWindow'; scene?: string; operation?: DragOperation }, DropResult];
  cancelDrag: [{ drag: string }, {}];
  observeDocuments: [{}, { documents: DocumentSummary[] }];
  unobserveDocuments: [{}, {}];
  createDocument: [{ title: string; text?: string }, { document: DocumentSummary }];
  renameDocument: [{ document: string; title: string }, { document: DocumentSummary }];
  deleteDocument: [{ document: string }, { document: string }];
  openDocument: [{ document: string; revision?: number; pending?: string[]; link?: string }, OpenDocumentResult];
  closeDocument: [{ document: string }, {}];
  edit: [{ document: string; revision: number; operation: Operation; opId: string }, { revision: number; opId: string; duplicate?: boolean }];
  setPresence: [
    { document: string; revision?: number; selection?: Selection | null; name?: string; color?: string; data?: unknown },
    { revision: number; selection: Selection | null },
  ];
  saveVersion: [{ document: string; name: string }, { version: Version }];
  listVersions: [{ document: string }, { document: string; versions: Version[] }];
  readVersion: [{ document: string; version: string }, { version: Version; text: string }];
  compareVersions: [{ document: string; from: string; to: string }, { from: Version; to: Version; operation: Operation }];
  restoreVersion: [{ document: string; version: string }, RestoreVersionResult];
  shareDocument: [{ document: string; user: string; role: DocumentRole }, DocumentShares];
  unshareDocument: [{ document: string; user: string }, DocumentShares];
  createDocumentLink: [{ document: string; role: 'viewer' | 'editor'; expiresInMs?: number }, { document: string; link: DocumentLink; token: string }];
  revokeDocumentLink: [{ document: string; link: string }, DocumentShares];
  listDocumentShares: [{ document: string }, DocumentShares];
}

/** A role for one document (PROTOCOL.md, "Rights per document"); `none`: the user may not see it. */
export type DocumentRole = 'none' | 'viewer' | 'editor' | 'owner';

/** A document's grants and links, as its owners see them (never a link's token). */
export interface DocumentShares {
  document: string;
  grants: Array<{ user: string; role: DocumentRole; grantedBy: string; grantedAt: number }>;
  links: DocumentLink[];
}

export interface DocumentLink {
  /** Names the link (for `revokeDocumentLink`); it opens nothing. */
  id: string;
  role: 'viewer' | 'editor';
  createdBy: string;
  createdAt: number;
  expiresAt: number;
  revokedAt?: number;
}

/** A kept version of a document (PROTOCOL.md, "Versions"): its text at `revision`. */
export interface Version {
  id: string;
  document: string;
  /** Saved by a person (`named`), or taken by the server (`checkpoint`). */
  kind: 'named' | 'checkpoint';
  revision: number;
  /** Named versions only. */
  name?: string;
  createdAt: number;
  /** The saver; for a checkpoint, who made its last operation. */
  createdBy: string;
  /** Unicode scalars. */
  length: number;
}

/** `restoreVersion`'s result: the restore as applied at `revision`, or `unchanged`. */
export interface RestoreVersionResult {
  revision: number;
  version: Version;
  opId?: string;
  operation?: Operation;
  author?: Author;
  /** The text was the version's already: nothing was applied. */
  unchanged?: true;
}

export interface OpenDocumentResult {
  document: DocumentSummary;
  revision: number;
  /** This scene's role for the document: a viewer's window is read-only. */
  role: 'viewer' | 'editor' | 'owner';
  text?: string;
  catchUp?: 'operations' | 'none' | 'snapshot';
  operations?: Array<{ revision: number; operation: Operation; opId?: string; author?: Author }>;
  presence?: PresenceEvent[];
  /** With `catchUp: 'snapshot'` and `pending`: those of the pending op ids the server applied. */
  applied?: string[];
}

/**
 * One scene's connection to a Panes server. Connects and resumes its session (kept in
 * `storage`), reconnects with backoff, re-makes observations and watches after a reconnect,
 * and turns requests into promises that reject with a `PanesError`.
 */
export declare class PanesClient extends EventSource<PanesClientEvents> {
  constructor(options: ClientOptions);

  readonly url: string;
  readonly workspace: string;
  readonly status: Status;
  readonly connected: boolean;
  /** The latest `connect` result, once connected. */
  readonly connectResult: ConnectResult | null;
  readonly session: Session | null;
  /** This scene's identifier on the current connection. */
  readonly scene: string | null;
  readonly user: { id: string; name: string; role: string } | null;
  /** Connections made so far; state tied to one connection can remember it. */
  readonly epoch: number;
  /** Settles with the first connection, or the error that made connecting hopeless. */
  readonly ready: Promise<ConnectResult>;

  /** Connects (once); resolves with the first `connect` result. Lost connections are re-made on their own. */
  start(): Promise<ConnectResult>;
  /** Closes for good (close code 1000); pending requests fail with `closed`. */
  close(): void;
  /** Skips the wait before the next reconnection attempt (the network is back, the page is visible). */
  reconnectNow(): void;
  /** Drops the connection as a network failure would; it is re-made with backoff. */
  dropConnection(): void;
  /** False once the server answered a request of this type with `unknown_type`. */
  supports(type: string): boolean;

  /** Any request: resolves with its result, rejects with a `PanesError`. */
  request<T extends keyof Requests>(type: T, fields?: Requests[T][0], options?: RequestOptions): Promise<Requests[T][1]>;
  request(type: string, fields?: Record<string, any>, options?: RequestOptions): Promise<any>;
  /**
   * Replaces the scene's token before it expires (`auth.expiresAt`), without reconnecting; later
   * connections use it too (unless `auth` is a function, which is asked again).
   */
  refreshToken(token: string): Promise<{ user: { id: string; name: string; role: string }; auth: { expiresAt: number | null } }>;
  /** Runs `hook` on every connection from now on (and now, if connected), before queued requests; returns its remover. */
  onEveryConnection(hook: (event: ConnectEvent) => void): () => void;

  // Scenes and sessions
  /** Reports visibility and focus; only the latest state is sent, one report at a time. */
  setLifecycle(state: LifecycleState): void;
  /**
   * This scene's traits: the server's answer (to `connect`, then `updateTraits`) while
   * connected; while disconnected, the ones set meanwhile, which the next `connect` carries.
   */
  readonly traits: Traits;
  /**
   * Reports a change of the window's traits (fields left out keep their value) with
   * `updateTraits`: nothing is sent when they equal what was last reported, only the latest
   * are sent, one report at a time. `traitsChanged` follows once the server has answered.
   */
  setTraits(traits: Partial<Traits>): void;
  updateActivity(activity: Activity | null): Promise<{ savedAt: number; metadata: Record<string, any> }>;
  setUserInfo(userInfo: Record<string, any>, options?: { merge?: boolean }): Promise<{ userInfo: Record<string, any> }>;
  listSessions(): Promise<SessionList>;
  /** Calls `callback` with the session list now and whenever it changes, across reconnects. */
  watchSessions(callback: (list: SessionList) => void): { stop(): void };
  /** Destroys one of the user's sessions (this scene's own closes this window). */
  requestDestruction(session: string, animation?: DismissalAnimation): Promise<{ session: string; animation: string }>;
  ping(): Promise<{ now: number }>;

  // Windows
  /** "Open in New Window": brings the window showing the content forward, or returns a ticket for a new one. */
  requestActivation(activity: Activity, options?: { session?: string }): Promise<ActivationResult>;
  requestRefresh(update: RefreshUpdate): Promise<{ session: SessionSummary }>;

  // Preferences
  /** Observes a key or a subtree, like key-value observing, across reconnects (missed changes come with `catchUp`). */
  observe(
    keyPath: string,
    options: ObserveOptions,
    callback: (change: PreferenceChange) => void,
    scope?: { domain?: PreferenceDomain },
  ): ObservationHandle;
  setPreference(keyPath: string, value: any, options?: { domain?: PreferenceDomain; ifVersion?: number }): Promise<PreferenceWriteResult>;
  removePreference(keyPath: string, options?: { domain?: PreferenceDomain; ifVersion?: number }): Promise<PreferenceWriteResult>;

  // Documents
  createDocument(title: string, options?: { text?: string }): Promise<DocumentSummary>;
  renameDocument(document: string, title: string): Promise<DocumentSummary>;
  deleteDocument(document: string): Promise<void>;
  /** Gives `user` a role for the document (`none` takes it away). Owners only. */
  shareDocument(document: string, user: string, role: DocumentRole): Promise<DocumentShares>;
  /** Removes the user's grant: the workspace role holds again. Owners only. */
  unshareDocument(document: string, user: string): Promise<DocumentShares>;
  /** A link opening the document with `role`; `token` is in this answer only. Owners only. */
  createDocumentLink(document: string, role: 'viewer' | 'editor', options?: { expiresInMs?: number }): Promise<{ link: DocumentLink; token: string }>;
  revokeDocumentLink(document: string, link: string): Promise<DocumentShares>;
  listDocumentShares(document: string): Promise<DocumentShares>;
  /** Opens a document for editing (`DocumentSession.open`). */
  openDocument(document: string, options?: DocumentSessionOptions): Promise<DocumentSession>;

  // Versions (saving and restoring are `DocumentSession`'s: they need the document open)
  /** The document's named versions and checkpoints, newest first. */
  listVersions(document: string): Promise<Version[]>;
  /** One version and its whole text. */
  readVersion(document: string, version: string): Promise<{ version: Version; text: string }>;
  /** The operation that turns version `from`'s text into version `to`'s. */
  compareVersions(document: string, from: string, to: string): Promise<{ from: Version; to: Version; operation: Operation }>;

  // Drag and drop
  /** Starts a drag; carry the returned `drag` in the native drag data (`application/x-panes-drag`). */
  beginDrag(items: DragItem[]): Promise<{ drag: string; expiresAt: number }>;
  /** Drops a drag on this scene, another of the user's scenes (`options.scene`), or the new-window zone. */
  drop(drag: string, target: 'scene' | 'newWindow', options?: { scene?: string; operation?: DragOperation }): Promise<DropResult>;
  cancelDrag(drag: string): Promise<{}>;
}

export declare const PROTOCOL_VERSION: number;
/** The WebSocket subprotocol: `panes.v1`. */
export declare const SUBPROTOCOL: string;
/** What this library reports as `client` when connecting. */
export declare const CLIENT_VERSION: string;

// MARK: Errors

/** What to do about an error: fix the request, re-read state, stop, or retry. */
export type ErrorAction = 'fix' | 'refresh' | 'giveUp' | 'retry';

/** The protocol's error codes (PROTOCOL.md, "Errors"); the number's range gives the action. */
export type ErrorCode =
  | 'malformed_json' | 'invalid_message' | 'unknown_type' | 'missing_field' | 'invalid_field' | 'too_large'
  | 'not_connected' | 'already_connected' | 'unsupported_protocol' | 'too_many' | 'type_mismatch'
  | 'key_path_conflict' | 'operation_not_allowed' | 'invalid_operation' | 'unsupported_activity'
  | 'invalid_key_path' | 'unknown_domain' | 'nesting_too_deep' | 'number_out_of_range' | 'idempotency_key_reused'
  | 'session_not_found' | 'version_conflict' | 'ticket_invalid' | 'drag_not_found' | 'drag_already_dropped'
  | 'scene_not_found' | 'document_not_found' | 'document_not_open' | 'revision_unavailable'
  | 'revision_in_future' | 'observation_not_found' | 'version_not_found'
  | 'unauthenticated' | 'not_a_member' | 'forbidden' | 'preference_locked' | 'token_expired'
  | 'rate_limited' | 'server_draining' | 'storage_failed' | 'internal_error' | 'outcome_unknown';

/** The `error` object of a failed reply. */
export interface WireError {
  /** One of `ErrorCode` from a server (a newer one may send others). */
  code: string;
  number?: number;
  action?: ErrorAction;
  message?: string;
  field?: string;
  retryAfterMs?: number;
  reconnectAfterMs?: number;
}

/** A failed request, or a connection that could not be made. */
export declare class PanesError extends Error {
  constructor(error: WireError, request?: string);
  /** The protocol's code (`session_not_found`, …), or the client's own: `timeout`, `disconnected`, `closed`. */
  code: string;
  /** The protocol's error number; 0 for the client's own codes. */
  number: number;
  action: ErrorAction;
  /** The request field that was wrong. */
  field: string | undefined;
  /** How long to wait before retrying (`rate_limited`, `server_draining`, `outcome_unknown`, …). */
  retryAfterMs: number | undefined;
  /** The request type that failed. */
  request: string | undefined;
  /** The server does not know the request type: the feature is not on this server. */
  readonly isUnsupported: boolean;
}

/** The action an error number's range implies (1000s fix, 2000s refresh, 3000s give up, 4000s retry). */
export declare function actionForNumber(number: number | undefined): ErrorAction;

// MARK: Documents

/** A text operation on the wire: retain `n`, insert a string, delete `-n` (code points). */
export type Operation = Array<number | string>;
export interface Selection {
  anchor: number;
  head: number;
}

export interface Author {
  scene?: string;
  user?: string;
  name?: string;
}

export interface Participant {
  scene: string;
  user: string;
  name: string;
  color?: string;
}

export interface DocumentSummary {
  id: string;
  title: string;
  kind?: string;
  /** Code points. */
  length: number;
  revision: number;
  createdAt: number;
  modifiedAt: number;
  createdBy?: string;
  /** The first `maxListedParticipants` scenes to have opened it (on the node that sent this). */
  participants?: Participant[];
  /** How many scenes have it open, listed or not, on every node. */
  participantCount?: number;
  /**
   * The participants merged per person, in the order each first opened it (those on other
   * nodes after): "Alice has this open in two windows, active in one" is
   * `{ user: 'alice', name: 'Alice', windows: 2, active: 1 }`; windows on every node count.
   */
  people?: Array<{ user: string; name: string; windows: number; active: number }>;
}

/** Someone else's place in an open document, in local coordinates. */
export interface RemotePresence {
  scene: string;
  user: string;
  name: string;
  color: string;
  selection: Selection | null;
  /** The scene's own payload (`DocumentSession.setPresenceData`), or null. */
  data: unknown;
  /** When it last arrived (ms since the epoch). */
  updatedAt: number;
}

export interface DocumentChange {
  /** The operation applied to the local text, or null for a reset. */
  op: Operation | null;
  /** Made by someone else (or a reset). */
  remote: boolean;
  author?: Author | null;
  /** A local change made by `undo()` or `redo()`. */
  history?: 'undo' | 'redo';
}

export interface DocumentListEvents {
  change: { change: 'reset' | DocumentsChangedEvent['change']; document?: DocumentSummary };
  unsupported: PanesError;
}

/** The workspace's documents, kept current across reconnects. */
export declare class DocumentList extends EventSource<DocumentListEvents> {
  constructor(client: PanesClient);
  /** By id. */
  readonly documents: Map<string, DocumentSummary>;
  /** False when the server has no documents; null until known. */
  readonly supported: boolean | null;
  readonly loaded: boolean;
  start(): this;
  stop(): void;
  /** By title (case-insensitive), then id. */
  sorted(): DocumentSummary[];
}

export type DocumentStatus = 'opening' | 'open' | 'catchingUp' | 'closed' | 'deleted';

export interface DocumentSessionEvents {
  change: DocumentChange;
  presence: {};
  status: DocumentStatus;
  deleted: {};
  error: PanesError;
  /** The text was caught up by difference (the log did not reach back) or reloaded; unsent edits were rebased, not lost. */
  reset: {};
  /** Everything local is on the server. */
  saved: {};
  /** `canUndo` or `canRedo` changed. */
  undoChange: { canUndo: boolean; canRedo: boolean };
  /** This scene's role for the document changed (`role`, `readOnly`); `none` closed it. */
  accessChanged: { role: DocumentRole };
}

export interface DocumentSessionOptions {
  /** The name shown at this scene's caret (default the user's name). */
  name?: string;
  color?: string;
  /** Server operations kept to move late presence (default 500). */
  historyLimit?: number;
  /** Undo steps kept (default 200). */
  undoLimit?: number;
  /** A pause this long ends a burst of typing as one undo step (default 1000 ms). */
  undoGroupMs?: number;
  /** A link's token (`createDocumentLink`): the document is opened (and re-opened) through it. */
  link?: string;
}

/**
 * One open, collaboratively edited document: its text and revision, edits sent one at a
 * time and transformed past others', others' selections, and catch-up after reconnects
 * (edits made offline are kept and sent once back).
 */
export declare class DocumentSession extends EventSource<DocumentSessionEvents> {
  constructor(client: PanesClient, documentId: string, options?: DocumentSessionOptions);
  readonly id: string;
  /** How this scene's caret is shown to others. */
  name: string;
  color: string;
  readonly text: string;
  /** The document's summary, as last heard. */
  summary: DocumentSummary | null;
  readonly status: DocumentStatus;
  /** Other scenes' selections, by scene. */
  readonly remote: Map<string, RemotePresence>;
  /** This scene's selection, as last set. */
  readonly selection: Selection | null;
  /** This scene's role for the document, from the server (null until open, and once access is gone). */
  readonly role: DocumentRole | null;
  /** The scene is a viewer of the document (or an edit was refused as `forbidden`): edits would be refused. */
  readonly readOnly: boolean;
  /** Every local edit is acknowledged. */
  readonly synchronized: boolean;
  /** Closed or deleted. */
  readonly gone: boolean;
  /** The server revision the local text is based on. */
  readonly revision: number;
  /** Opens and follows the document; rejects with the server's error (`document_not_found`, …). */
  open(): Promise<this>;
  /** A local edit made on `text` (code points): applied, kept (`pendingStore`) and sent. */
  applyLocal(op: Operation): void;
  /** This window has an edit of its own to undo. */
  readonly canUndo: boolean;
  readonly canRedo: boolean;
  /** Takes back this window's latest step, moved past others' edits; the operation applied, or null if none. */
  undo(): Operation | null;
  /** Makes again what `undo` took back; the operation applied, or null if none. */
  redo(): Operation | null;
  /** Keeps the document's text now as a named version. */
  saveVersion(name: string): Promise<Version>;
  /**
   * Brings a version's text back as this window's edit: every other window receives it, and it
   * is one undo step here (`undo()` takes it back).
   */
  restoreVersion(version: string): Promise<RestoreVersionResult>;
  /** The next edit starts a new undo step. */
  breakUndoGroup(): void;
  /** Shares this scene's selection (code points). */
  setSelection(selection: Selection | null): void;
  /** Shares a payload of this scene's own (any JSON, at most `maxPresenceBytes`; null removes it); kept and resent. */
  setPresenceData(data: unknown): Promise<void>;
  /** Everyone else here. */
  participants(): Participant[];
  /** Every local edit is acknowledged: resolves at once, or with the next `saved`. */
  whenSaved(): Promise<void>;
  close(): void;
}

/** Opens a document on `client`. */
export declare function openDocument(client: PanesClient, documentId: string, options?: DocumentSessionOptions): Promise<DocumentSession>;

/** Operational transform on plain text, as the server does it (positions count code points). */
export declare namespace ot {
  type Component = number | string;
  type Operation = Component[];
  type Selection = { anchor: number; head: number };
  const MAX_COMPONENT_LENGTH: number;
  class OTError extends Error {
    constructor(message: string);
    code: string;
  }
  function codePointLength(text: string): number;
  function utf16ToScalar(text: string, offset: number): number;
  function scalarToUtf16(text: string, index: number): number;
  function baseLength(op: Operation): number;
  function targetLength(op: Operation): number;
  function isNoop(op: Operation): boolean;
  function normalize(op: Operation): Operation;
  function fromJSON(value: unknown, field?: string): Operation;
  function apply(text: string, op: Operation): string;
  function compose(a: Operation, b: Operation): Operation;
  function transform(a: Operation, b: Operation): [Operation, Operation];
  function transformPosition(op: Operation, position: number, isOwnEdit?: boolean): number;
  function transformSelection(op: Operation, selection: Selection, isOwnEdit?: boolean): Selection;
  function diffToOperation(oldText: string, newText: string): Operation;
}

// MARK: Browser

export interface BindingOptions {
  /** Draw other people's selections (default true). */
  showRemote?: boolean;
  onSelectionChange?: (selection: Selection) => void;
  onChange?: (change: DocumentChange) => void;
}

/** Binds a `DocumentSession` to a `<textarea>` or a plain-text `contenteditable`, with others' carets drawn over it. */
export declare class TextBinding {
  constructor(session: DocumentSession, element: HTMLTextAreaElement | HTMLElement, options?: BindingOptions);
  readonly session: DocumentSession;
  readonly element: HTMLTextAreaElement | HTMLElement;
  /** The local selection in code points, or null. */
  selection(): Selection | null;
  select(selection: Selection): void;
  /** Redraws remote selections (after a font or layout change). */
  refresh(): void;
  destroy(): void;
}

/** `#rrggbb` with an alpha, as `rgba()`; other colours unchanged. */
export declare function withAlpha(color: string, alpha: number): string;

export interface BrowserClientOptions extends Partial<ClientOptions> {
  /** Play the dismissal animation and close the window when the session is destroyed (default true). */
  closeOnDestroy?: boolean;
  /** What the dismissal animation moves (default `document.body`). */
  animate?: HTMLElement;
  /** The window could not be closed (not opened by a script): show a "closed" screen. */
  onClosed?: () => void;
}

/** Width at or below which a window is `compact`. */
export declare const COMPACT_MAX_WIDTH: number;
/**
 * A started client for this browser tab: the page's origin, `sessionStorage`, the URL's
 * ticket, traits and lifecycle from the page, a retry as soon as the network is back or the
 * page becomes visible, and the window closed when its session is destroyed.
 */
export declare function connectInBrowser(options?: BrowserClientOptions): PanesClient;
/** Reports visibility and focus, and retries at once on `online` and when the page becomes visible; returns its remover. */
export declare function bindLifecycle(client: PanesClient, win?: Window): () => void;
/**
 * Reports the window's traits whenever they change (width across `COMPACT_MAX_WIDTH`, primary
 * pointer, display pixel ratio), once they have settled for `settleMs` (default 150); returns
 * its remover. `connectInBrowser` sets it up unless given `traits`.
 */
export declare function bindTraits(client: PanesClient, win?: Window, options?: { settleMs?: number }): () => void;
export declare function currentTraits(win?: Window): Traits;
export declare function currentLifecycle(win?: Window): LifecycleState;
/** The `ws:`/`wss:` URL of the server that served the page. */
export declare function socketURL(location?: Location): string;
export declare function ticketFromURL(location?: Location): string | null;
export declare function removeTicketFromURL(win?: Window): void;
export declare function openTicketWindow(url: string, options?: { workspace?: string; win?: Window }): Window | null;
export declare function playDismissal(element: HTMLElement, animation: DismissalAnimation | string): Promise<void>;
export declare function closeWindow(win?: Window): Promise<boolean>;
