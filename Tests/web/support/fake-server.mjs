// A fake clock, fake sockets and a fake server, for what the real server cannot produce on
// demand: a reply that never comes, a server that cannot be reached for exactly as long as a
// test needs, a garbled frame, and time that moves only when the test says so (exact backoff
// delays, heartbeats, `goingAway` waits). Everything else is tested against the real server.
//
// The fake answers only `connect`, `ping` and `lifecycle`, plus the errors of requests it does
// not know; contract.test.mjs checks those replies against the real server's.

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

/** One side of a connection, as the client sees it (a WebSocket). Every hop takes 1 ms. */
class FakeSocket {
  constructor(network) {
    this.network = network;
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

  close(_code = 1000, reason = '') {
    if (this.closed) return;
    this.closed = true;
    this.network.clock.setTimeout(() => this.onclose?.({ code: 1005, reason }), 1);
  }

  /** Server side: delivers a frame (an object as JSON, a string as it is). */
  deliver(message) {
    this.network.clock.setTimeout(() => {
      if (!this.closed) this.onmessage?.({ data: typeof message === 'string' ? message : JSON.stringify(message) });
    }, 1);
  }

  /** Server or network side: the connection ends with `code`. */
  drop(code = 1006, reason = '') {
    if (this.closed) return;
    this.closed = true;
    this.network.clock.setTimeout(() => this.onclose?.({ code, reason }), 1);
  }
}

/** The sockets clients make, and whether the server can be reached. */
export class FakeNetwork {
  constructor(clock = new FakeClock()) {
    this.clock = clock;
    this.server = new FakeServer(clock);
    this.sockets = [];
    this.reachable = true;
    this.createSocket = () => {
      const socket = new FakeSocket(this);
      this.sockets.push(socket);
      this.clock.setTimeout(() => {
        if (socket.closed) return;
        if (!this.reachable) {
          socket.closed = true;
          socket.onclose?.({ code: 1006, reason: '' });
          return;
        }
        socket.connection = { socket, scene: null };
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

/** Errors exactly as the real server words their codes, numbers and actions. */
const errors = {
  unknownType: (type) => ({ code: 'unknown_type', number: 1002, action: 'fix', field: 'type', message: `no request has type \`${type}\`` }),
  notConnected: () => ({ code: 'not_connected', number: 1006, action: 'fix', message: 'send `connect` first' }),
};

let counter = 0;
const hex = (n) => Array.from({ length: n }, () => ((++counter * 7919) % 16).toString(16)).join('');

/** Answers `connect`, `ping` and `lifecycle` as the real server does; `mute` stops all replies. */
export class FakeServer {
  constructor(clock) {
    this.clock = clock;
    this.mute = false;
    this.requests = [];
  }

  receive(connection, message) {
    this.requests.push(message);
    if (this.mute) return;
    const reply = this.handle(connection, message);
    connection.socket.deliver(
      reply.error
        ? { type: 'reply', re: message.id, ok: false, request: message.type, error: reply.error }
        : { type: 'reply', re: message.id, ok: true, result: reply.result },
    );
  }

  handle(connection, message) {
    if (message.type !== 'connect' && !connection.scene) return { error: errors.notConnected() };
    switch (message.type) {
      case 'connect':
        return { result: this.connect(connection, message) };
      case 'ping':
        return { result: { now: this.clock.now() } };
      case 'lifecycle':
        return { result: { state: message.visible ? (message.focused ? 'foregroundActive' : 'foregroundInactive') : 'background' } };
      default:
        return { error: errors.unknownType(message.type) };
    }
  }

  /** A new session every time (the fake keeps none). */
  connect(connection, message) {
    connection.scene = `scn_${hex(24)}`;
    const name = message.auth?.name ?? 'anonymous';
    const now = this.clock.now();
    return {
      scene: connection.scene,
      workspace: message.workspace ?? 'default',
      user: { id: name, name, role: 'owner' },
      session: {
        persistentIdentifier: hex(32),
        secret: hex(32),
        role: 'window',
        configuration: 'workspace',
        title: '',
        userInfo: {},
        stateRestorationActivity: null,
        createdAt: now,
        lastActiveAt: now,
      },
      created: true,
      connectionOptions: { userActivities: [] },
      restoration: { status: 'none' },
      traits: message.traits ?? { width: 'regular', pointer: 'fine' },
      server: { version: '0.1.0', protocol: 1 },
      limits: { maxMessageBytes: 1048576, maxUserInfoBytes: 65536, maxActivityBytes: 65536, rateLimitPerSecond: 200 },
    };
  }
}
