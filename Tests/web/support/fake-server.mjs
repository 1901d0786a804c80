// A fake clock, fake sockets and an in-memory Panes server speaking the parts of PROTOCOL.md
// the client library uses, so the client's logic (replies, timeouts, reconnects, catch-up,
// OT) is tested without a browser, a network or the Swift server.
import { apply, baseLength, transform } from '../../web/lib/ot.js';

const flush = () => new Promise((resolve) => setImmediate(resolve));

/** Timers that run only when the test advances time. */
export class FakeClock {
  constructor() {
    this.time = 1_000_000;
    this.timers = new Map();
    this.nextId = 1;
    this.setTimeout = (fn, ms) => {
      const id = this.nextId++;
      this.timers.set(id, { at: this.time + Math.max(0, ms | 0), fn, id });
      return id;
    };
    this.clearTimeout = (id) => {
      this.timers.delete(id);
    };
    this.now = () => this.time;
  }

  /** Runs every timer due within `ms`, in order, letting promises settle in between. */
  async advance(ms = 0) {
    const end = this.time + ms;
    for (;;) {
      await flush();
      let next = null;
      for (const timer of this.timers.values()) {
        if (timer.at <= end && (!next || timer.at < next.at || (timer.at === next.at && timer.id < next.id))) next = timer;
      }
      if (!next) break;
      this.timers.delete(next.id);
      this.time = next.at;
      next.fn();
    }
    this.time = end;
    await flush();
  }
}

/** One side of a connection, as the client sees it (a WebSocket). */
class FakeSocket {
  constructor(network, url, protocol) {
    this.network = network;
    this.url = url;
    this.protocol = protocol;
    this.onopen = this.onmessage = this.onclose = this.onerror = null;
    this.closed = false;
    this.sent = [];
    this.connection = null;
  }

  send(data) {
    if (this.closed) throw new Error('send on a closed socket');
    const message = JSON.parse(data);
    this.sent.push(message);
    this.network.clock.setTimeout(() => {
      if (!this.closed && this.connection) this.network.server.receive(this.connection, message);
    }, 1);
  }

  close(code = 1000, reason = '') {
    if (this.closed) return;
    this.closed = true;
    this.closeCode = code;
    if (this.connection) this.network.server.disconnected(this.connection, false);
    this.network.clock.setTimeout(() => this.onclose?.({ code: 1005, reason }), 1);
  }

  /** Server side: deliver a message to the client. */
  deliver(message) {
    this.network.clock.setTimeout(() => {
      if (!this.closed) this.onmessage?.({ data: JSON.stringify(message) });
    }, 1);
  }

  /** Server or network side: the connection ends with `code`. */
  drop(code = 1006, reason = '') {
    if (this.closed) return;
    this.closed = true;
    if (this.connection) this.network.server.disconnected(this.connection, code === 1006);
    this.network.clock.setTimeout(() => this.onclose?.({ code, reason }), 1);
  }
}

/** The sockets clients make, and whether the server can be reached. */
export class FakeNetwork {
  constructor(clock = new FakeClock()) {
    this.clock = clock;
    this.server = new FakeServer(this);
    this.sockets = [];
    this.reachable = true;
    this.createSocket = (url, protocol) => {
      const socket = new FakeSocket(this, url, protocol);
      this.sockets.push(socket);
      this.clock.setTimeout(() => {
        if (socket.closed) return;
        if (!this.reachable) {
          socket.closed = true;
          socket.onclose?.({ code: 1006, reason: 'unreachable' });
          return;
        }
        socket.connection = this.server.opened(socket);
        socket.onopen?.({});
      }, 1);
      return socket;
    };
  }

  /** The last socket a client opened. */
  get last() {
    return this.sockets[this.sockets.length - 1];
  }

  /** Drops every live connection, as a network failure would. */
  cut() {
    for (const socket of this.sockets) socket.drop(1006, 'network');
  }
}

let counter = 0;
const token = (prefix) => `${prefix}${(++counter).toString(36).padStart(4, '0')}`;

function failure(code, number, message, extra = {}) {
  const action = number < 2000 ? 'fix' : number < 3000 ? 'refresh' : number < 4000 ? 'giveUp' : 'retry';
  return { code, number, action, message, ...extra };
}

/** An in-memory Panes server: sessions, preferences, documents with OT. */
export class FakeServer {
  constructor(network) {
    this.network = network;
    this.sessions = new Map(); // id -> { id, secret, owner, userInfo, restoration, live }
    this.preferences = new Map(); // keyPath -> { value, version }
    this.prefVersion = 0;
    this.documents = new Map(); // id -> { id, title, text, log: [{revision, operation, opId, author}] , presence: Map }
    this.mute = false; // when true, requests get no reply
    this.unknown = new Set(); // request types answered with unknown_type
    this.requests = [];
    this.connections = new Set();
    this.logRetention = 1000;
  }

  opened(socket) {
    const connection = { socket, scene: null, session: null, user: null, observations: new Map(), nextObservation: 1, open: new Set(), watch: false, observeDocuments: false };
    this.connections.add(connection);
    return connection;
  }

  disconnected(connection) {
    this.connections.delete(connection);
    if (connection.session) {
      const session = this.sessions.get(connection.session);
      if (session && session.live === connection) session.live = null;
    }
    for (const id of connection.open) this.broadcastPresence(id, connection, { left: true, selection: null });
  }

  send(connection, message) {
    connection.socket.deliver(message);
  }

  reply(connection, message, result) {
    this.send(connection, { type: 'reply', re: message.id, ok: true, result });
  }

  fail(connection, message, error) {
    this.send(connection, { type: 'reply', re: message.id, ok: false, request: message.type, error });
  }

  receive(connection, message) {
    this.requests.push(message);
    if (this.mute) return;
    if (this.unknown.has(message.type)) {
      this.fail(connection, message, failure('unknown_type', 1002, `no request has type \`${message.type}\``, { field: 'type' }));
      return;
    }
    const handler = this[`on_${message.type}`];
    if (!handler) {
      this.fail(connection, message, failure('unknown_type', 1002, 'unknown'));
      return;
    }
    if (message.type !== 'connect' && !connection.scene) {
      this.fail(connection, message, failure('not_connected', 1006, 'send `connect` first'));
      return;
    }
    const result = handler.call(this, connection, message);
    if (result && result.error) this.fail(connection, message, result.error);
    else if (result !== undefined) this.reply(connection, message, result);
  }

  // Sessions

  on_connect(connection, message) {
    const user = message.auth?.name ?? 'anonymous';
    if (this.rejectUser === user) return { error: failure('unauthenticated', 3000, 'no') };
    let session = null;
    let forkedFrom = null;
    let handedOver = [];
    if (message.ticket) {
      const ticket = this.tickets?.get(message.ticket);
      if (!ticket) return { error: failure('ticket_invalid', 2002, 'the window ticket is unknown', { field: 'ticket' }) };
      this.tickets.delete(message.ticket);
      session = this.sessions.get(ticket.session);
      handedOver = ticket.activities;
    } else if (message.session) {
      session = this.sessions.get(message.session.id);
      if (!session || session.secret !== message.session.secret || session.owner !== user) {
        return { error: failure('session_not_found', 2000, 'no session of yours has that identifier and secret', { field: 'session' }) };
      }
      if (session.live) {
        const original = session;
        session = this.newSession(user);
        session.userInfo = { ...original.userInfo };
        session.restoration = original.restoration;
        forkedFrom = original.id;
      }
    }
    let created = false;
    if (!session) {
      session = this.newSession(user);
      created = true;
    }
    session.live = connection;
    connection.session = session.id;
    connection.scene = token('scn_');
    connection.user = user;
    return {
      scene: connection.scene,
      workspace: message.workspace,
      user: { id: user, name: user, role: 'owner' },
      session: {
        persistentIdentifier: session.id,
        secret: session.secret,
        role: 'window',
        configuration: 'workspace',
        title: '',
        userInfo: session.userInfo,
        stateRestorationActivity: handedOver.length ? null : session.restoration,
      },
      created: created || forkedFrom !== null,
      forkedFrom,
      connectionOptions: { userActivities: handedOver },
      restoration: { status: handedOver.length ? 'superseded' : session.restoration ? 'restored' : 'none' },
      traits: message.traits,
      server: { version: 'fake', protocol: 1 },
      limits: {},
    };
  }

  newSession(owner) {
    const session = { id: token('ses'), secret: token('sec'), owner, userInfo: {}, restoration: null, live: null };
    this.sessions.set(session.id, session);
    return session;
  }

  issueTicket(session, activities = []) {
    this.tickets ??= new Map();
    const ticket = token('tkt_');
    this.tickets.set(ticket, { session, activities });
    return ticket;
  }

  on_ping() {
    return { now: this.network.clock.now() };
  }

  on_lifecycle(connection, message) {
    return { state: message.visible ? (message.focused ? 'foregroundActive' : 'foregroundInactive') : 'background' };
  }

  on_updateActivity(connection, message) {
    this.sessions.get(connection.session).restoration = message.activity;
    return { savedAt: this.network.clock.now(), metadata: {} };
  }

  on_setUserInfo(connection, message) {
    const session = this.sessions.get(connection.session);
    session.userInfo = message.mode === 'merge' ? { ...session.userInfo, ...message.userInfo } : message.userInfo;
    return { userInfo: session.userInfo };
  }

  sessionList(owner) {
    return {
      sessions: [...this.sessions.values()]
        .filter((s) => s.owner === owner)
        .map((s) => ({ persistentIdentifier: s.id, title: s.restoration?.title ?? '', state: s.live ? 'foregroundActive' : 'disconnected' })),
      appState: 'foregroundActive',
    };
  }

  on_listSessions(connection, message) {
    connection.watch = Boolean(message.watch);
    return this.sessionList(connection.user);
  }

  on_requestDestruction(connection, message) {
    const session = this.sessions.get(message.session);
    if (!session) return { error: failure('session_not_found', 2000, 'no') };
    this.destroy(session.id, message.animation ?? 'standard', connection, message);
    return undefined;
  }

  /** Destroys a session: its scene hears `sessionDestroyed` and is closed with 4001. */
  destroy(id, animation = 'standard', requester = null, request = null) {
    const session = this.sessions.get(id);
    this.sessions.delete(id);
    if (requester) this.reply(requester, request, { session: id, animation });
    if (session?.live) {
      const live = session.live;
      this.send(live, { type: 'sessionDestroyed', session: id, animation });
      this.network.clock.setTimeout(() => live.socket.drop(4001, 'session destroyed'), 2);
    }
  }

  // Preferences

  on_observe(connection, message) {
    const id = connection.nextObservation++;
    const keyPath = message.keyPath;
    const options = message.options ?? ['new'];
    connection.observations.set(id, { keyPath, options });
    if (options.includes('initial')) {
      const matching = [...this.preferences.entries()].filter(([key]) => key === keyPath || key.startsWith(`${keyPath}.`));
      if (matching.length === 0) {
        this.send(connection, { type: 'preferenceChanged', domain: 'user', keyPath, version: 0, observations: [id], initial: true, exists: false });
      }
      for (const [key, entry] of matching) {
        this.send(connection, { type: 'preferenceChanged', domain: 'user', keyPath: key, version: entry.version, observations: [id], initial: true, new: entry.value });
      }
    }
    return { observation: id };
  }

  on_unobserve(connection, message) {
    if (!connection.observations.delete(message.observation)) return { error: failure('observation_not_found', 2010, 'no') };
    return {};
  }

  on_setPreference(connection, message) {
    this.setPreference(message.keyPath, message.value);
    return { version: this.prefVersion, changed: true };
  }

  on_removePreference(connection, message) {
    this.setPreference(message.keyPath, undefined);
    return { version: this.prefVersion, changed: true };
  }

  /** Sets (or with `undefined`, removes) a preference and tells every observer. */
  setPreference(keyPath, value) {
    const old = this.preferences.get(keyPath)?.value;
    this.prefVersion += 1;
    if (value === undefined) this.preferences.delete(keyPath);
    else this.preferences.set(keyPath, { value, version: this.prefVersion });
    for (const connection of this.connections) {
      const ids = [...connection.observations.entries()]
        .filter(([, o]) => keyPath === o.keyPath || keyPath.startsWith(`${o.keyPath}.`))
        .map(([id]) => id);
      if (ids.length === 0) continue;
      const event = { type: 'preferenceChanged', domain: 'user', keyPath, version: this.prefVersion, observations: ids };
      if (value === undefined) event.removed = true;
      else event.new = value;
      if ([...connection.observations.values()].some((o) => o.options.includes('old'))) event.old = old;
      this.send(connection, event);
    }
  }

  // Windows

  on_requestActivation(connection, message) {
    const target = message.activity?.targetContentIdentifier;
    const shown = [...this.sessions.values()].find((s) => s.live && s.restoration?.targetContentIdentifier === target);
    if (shown) {
      this.send(shown.live, { type: 'activate', activity: message.activity, requestedBy: { scene: connection.scene, session: connection.session } });
      return { action: 'activated', session: shown.id, scene: shown.live.scene };
    }
    const session = this.newSession(connection.user);
    const ticket = this.issueTicket(session.id, [message.activity]);
    return { action: 'open', session: session.id, ticket, url: `/?ticket=${ticket}`, created: true };
  }

  // Documents

  createDocumentNow(title, text = '') {
    const id = token('doc_');
    const document = { id, title, text, revision: 0, log: [], presence: new Map(), opIds: new Map(), createdAt: 0, modifiedAt: 0 };
    this.documents.set(id, document);
    return document;
  }

  summary(document) {
    return { id: document.id, title: document.title, kind: 'text', length: [...document.text].length, revision: document.revision, createdAt: 0, modifiedAt: 0, participants: [] };
  }

  on_observeDocuments(connection) {
    connection.observeDocuments = true;
    return { documents: [...this.documents.values()].map((d) => this.summary(d)) };
  }

  on_createDocument(connection, message) {
    const document = this.createDocumentNow(message.title, message.text ?? '');
    for (const other of this.connections) {
      if (other.observeDocuments) this.send(other, { type: 'documentsChanged', change: 'created', document: this.summary(document) });
    }
    return { document: this.summary(document) };
  }

  on_openDocument(connection, message) {
    const document = this.documents.get(message.document);
    if (!document) return { error: failure('document_not_found', 2006, 'no such document') };
    connection.open.add(document.id);
    const presence = [...document.presence.values()].filter((p) => p.scene !== connection.scene);
    if (message.revision === undefined) {
      return { document: this.summary(document), revision: document.revision, text: document.text, presence };
    }
    if (message.revision > document.revision) return { error: failure('revision_in_future', 2009, 'future') };
    if (message.revision === document.revision) return { document: this.summary(document), revision: document.revision, catchUp: 'none', presence };
    const first = document.revision - document.log.length;
    if (message.revision < first) {
      return { document: this.summary(document), revision: document.revision, catchUp: 'snapshot', text: document.text, presence };
    }
    return {
      document: this.summary(document),
      revision: document.revision,
      catchUp: 'operations',
      operations: document.log.filter((entry) => entry.revision > message.revision),
      presence,
    };
  }

  on_closeDocument(connection, message) {
    connection.open.delete(message.document);
    return {};
  }

  on_edit(connection, message) {
    const document = this.documents.get(message.document);
    if (!document) return { error: failure('document_not_found', 2006, 'no such document') };
    if (!connection.open.has(document.id)) return { error: failure('document_not_open', 2007, 'open it first') };
    if (document.opIds.has(message.opId)) return { revision: document.opIds.get(message.opId), opId: message.opId, duplicate: true };
    if (message.revision > document.revision) return { error: failure('revision_in_future', 2009, 'future') };
    let op = message.operation;
    for (const entry of document.log) {
      if (entry.revision > message.revision) [op] = transform(op, entry.operation);
    }
    if (baseLength(op) !== [...document.text].length) return { error: failure('invalid_operation', 1013, 'length') };
    document.text = apply(document.text, op);
    document.revision += 1;
    const entry = { revision: document.revision, operation: op, opId: message.opId, author: { scene: connection.scene, user: connection.user, name: connection.user } };
    document.log.push(entry);
    if (document.log.length > this.logRetention) document.log.shift();
    document.opIds.set(message.opId, document.revision);
    for (const presence of document.presence.values()) presence.revision = document.revision; // (the fake does not move them)
    this.reply(connection, message, { revision: document.revision, opId: message.opId });
    for (const other of this.connections) {
      if (other !== connection && other.open.has(document.id)) {
        this.send(other, { type: 'documentOperation', document: document.id, ...entry });
      }
    }
    return undefined;
  }

  on_setPresence(connection, message) {
    const document = this.documents.get(message.document);
    if (!document || !connection.open.has(document.id)) return { error: failure('document_not_open', 2007, 'open it first') };
    const presence = { scene: connection.scene, user: connection.user, name: message.name, color: message.color, selection: message.selection, revision: message.revision };
    document.presence.set(connection.scene, presence);
    this.broadcastPresence(document.id, connection, presence);
    return {};
  }

  broadcastPresence(documentId, from, fields) {
    const document = this.documents.get(documentId);
    if (!document) return;
    if (fields.left) document.presence.delete(from.scene);
    for (const other of this.connections) {
      if (other !== from && other.open.has(documentId)) {
        this.send(other, { type: 'presence', document: documentId, revision: document.revision, scene: from.scene, user: from.user, ...fields });
      }
    }
  }
}
