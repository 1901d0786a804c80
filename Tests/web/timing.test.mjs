// What only a fake can show (lib/connection.js, lib/backoff.js): time that moves only when the
// test says so, replies that never come, a server unreachable for exactly as long as needed,
// garbled frames. contract.test.mjs keeps the fake's replies equal to the real server's.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DocumentList, PanesClient } from '../../web/panes-client.js';
import { backoffDelay } from '../../web/lib/backoff.js';
import { actionForNumber } from '../../web/lib/errors.js';
import { FakeClock, FakeNetwork } from './support/fake-server.mjs';
import { MemoryStorage } from './support/helpers.mjs';

/** A client on a fake network; `random` fixed so backoff is exact. */
function setup(options = {}) {
  const clock = new FakeClock();
  const network = options.network ?? new FakeNetwork(clock);
  const client = new PanesClient({
    url: 'ws://fake/ws',
    auth: { name: 'alice' },
    storage: new MemoryStorage(),
    createSocket: (url, protocol) => network.createSocket(url, protocol),
    timers: network.clock,
    random: () => 0.5,
    heartbeatMs: 0,
    ...options.client,
  });
  const statuses = [];
  /** The wait before each reconnection attempt, as scheduled. */
  const delays = [];
  client.on('status', (s) => {
    statuses.push(s);
    if (s.retryAt !== undefined) delays.push(s.retryAt - network.clock.now());
  });
  return { clock: network.clock, network, server: network.server, client, statuses, delays };
}

describe('requests without replies', () => {
  test('time out when no reply comes, and a late reply is ignored', async () => {
    const { clock, network, server, client } = setup({ client: { requestTimeoutMs: 500 } });
    client.start();
    await clock.advance(10);
    server.mute = true;
    const outcome = client.ping().then(() => 'resolved', (e) => e.code);
    await clock.advance(499);
    const pending = await Promise.race([outcome, Promise.resolve('pending')]);
    assert.equal(pending, 'pending');
    await clock.advance(1);
    assert.equal(await outcome, 'timeout');
    const [ping] = network.last.sent.filter((m) => m.type === 'ping');
    network.last.deliver({ type: 'reply', re: ping.id, ok: true, result: { now: 1 } });
    await clock.advance(5);
    assert.equal(client.status, 'connected');
  });

  test('a silent connection is noticed by the heartbeat and replaced', async () => {
    const { clock, network, server, client } = setup({ client: { heartbeatMs: 1000, backoff: { baseMs: 1 } } });
    client.start();
    await clock.advance(10);
    server.mute = true;
    const sockets = network.sockets.length;
    await clock.advance(1000); // idle: a ping is sent
    assert.equal(network.last.sent.at(-1).type, 'ping');
    server.mute = false; // the ping itself was swallowed: it times out
    await clock.advance(1500);
    assert.ok(network.sockets.length > sockets);
    assert.equal(client.status, 'connected');
  });

  test('garbled frames and replies to nothing are ignored; the connection carries on', async () => {
    const { clock, network, client } = setup();
    const events = [];
    client.on('status', (s) => events.push(s.status));
    client.start();
    await clock.advance(10);
    for (const frame of ['not json', '[1,2]', '{"no":"type"}', 'null', '{"type":"reply","re":999,"ok":true}', '{"type":"reply"}']) {
      network.last.deliver(frame);
    }
    const pong = client.ping();
    await clock.advance(10);
    assert.equal(typeof (await pong).now, 'number');
    assert.deepEqual(events.slice(-1), ['connected']);
  });
});

describe('reconnecting', () => {
  test('backoff grows exponentially to a cap, with jitter inside the upper half', () => {
    const options = { baseMs: 100, maxMs: 1000, factor: 2, jitter: 0.5 };
    assert.equal(backoffDelay(0, options, () => 0), 50);
    assert.equal(backoffDelay(0, options, () => 0.999999), 100);
    assert.equal(backoffDelay(3, options, () => 0), 400);
    assert.equal(backoffDelay(3, options, () => 0.5), 600);
    assert.equal(backoffDelay(10, options, () => 0), 500);
    assert.equal(backoffDelay(10, options, () => 0.999999), 1000);
    assert.equal(backoffDelay(10, { ...options, unreachableMaxMs: 300 }, () => 0.999999, { unreachable: true }), 300);
    const spread = new Set(Array.from({ length: 50 }, () => backoffDelay(4, options)));
    assert.ok(spread.size > 10, 'jitter spreads delays');
  });

  test('an unreachable server is retried at most `unreachableMaxMs` apart, so its return is found at once', async () => {
    const backoff = { baseMs: 100, maxMs: 10_000, unreachableMaxMs: 400, jitter: 0.5 };
    const { clock, network, client, delays } = setup({ client: { backoff } });
    client.start();
    await clock.advance(10);
    network.reachable = false;
    network.cut();
    await clock.advance(5000);
    // With random 0.5, three quarters of each ceiling: 100, 200, 400, then the 400 cap.
    assert.deepEqual(delays.slice(0, 6), [75, 150, 300, 300, 300, 300]);
    network.reachable = true;
    await clock.advance(400);
    assert.equal(client.status, 'connected');
  });

  test('a server that answers and then fails is backed off up to `maxMs`', async () => {
    const backoff = { baseMs: 100, maxMs: 10_000, unreachableMaxMs: 400, jitter: 0.5 };
    const { clock, network, client, delays } = setup({ client: { backoff } });
    client.start();
    await clock.advance(10);
    // Every new connection is accepted, then closed by the server (1011: a fault).
    const create = network.createSocket;
    network.createSocket = (...args) => {
      const socket = create(...args);
      clock.setTimeout(() => socket.drop(1011, 'fault'), 2);
      return socket;
    };
    network.last.drop(1011, 'fault');
    await clock.advance(10_000);
    assert.deepEqual(delays.slice(0, 6), [75, 150, 300, 600, 1200, 2400]);
  });

  test('reconnectNow skips the wait', async () => {
    const { clock, network, client } = setup({ client: { backoff: { baseMs: 10_000, unreachableMaxMs: 10_000 } } });
    client.start();
    await clock.advance(10);
    network.cut();
    await clock.advance(5);
    assert.equal(client.status, 'reconnecting');
    client.reconnectNow();
    await clock.advance(10);
    assert.equal(client.status, 'connected');
  });

  test('goingAway sets the delay before reconnecting', async () => {
    const { clock, network, client } = setup({ client: { backoff: { baseMs: 1 } } });
    client.start();
    await clock.advance(10);
    const sockets = network.sockets.length;
    network.last.deliver({ type: 'goingAway', reconnectAfterMs: 2000, reason: 'restart' });
    await clock.advance(2);
    network.last.drop(1001, 'going away');
    await clock.advance(1900);
    assert.equal(network.sockets.length, sockets);
    await clock.advance(500);
    assert.equal(network.sockets.length, sockets + 1);
    assert.equal(client.status, 'connected');
  });

  test('a connect that gets no reply in time is abandoned and retried', async () => {
    const { clock, network, server, client } = setup({ client: { connectTimeoutMs: 1000, backoff: { baseMs: 10 } } });
    server.mute = true;
    client.start();
    await clock.advance(1005);
    assert.equal(client.status, 'reconnecting');
    server.mute = false;
    await clock.advance(100);
    assert.equal(client.status, 'connected');
    assert.equal(network.sockets.length, 2);
  });
});

describe('errors and capabilities', () => {
  test('every error number range maps to its action', () => {
    assert.equal(actionForNumber(1004), 'fix');
    assert.equal(actionForNumber(2000), 'refresh');
    assert.equal(actionForNumber(3002), 'giveUp');
    assert.equal(actionForNumber(4000), 'retry');
    assert.equal(actionForNumber(undefined), 'retry');
  });

  test('a document list on a server without documents reports it unsupported', async () => {
    const { clock, client } = setup();
    client.start();
    const list = new DocumentList(client).start();
    let unsupported = null;
    list.on('unsupported', (e) => {
      unsupported = e.code;
    });
    await clock.advance(10);
    assert.equal(list.supported, false);
    assert.equal(unsupported, 'unknown_type');
    assert.equal(client.supports('observeDocuments'), false);
  });

  test('a client made without a WebSocket where there is none says what to pass', () => {
    const global = /** @type {any} */ (globalThis);
    const saved = global.WebSocket;
    delete global.WebSocket;
    try {
      assert.throws(() => new PanesClient({ url: 'ws://x/ws' }), /pass one: new PanesClient\(\{ url, WebSocket \}\)/);
    } finally {
      if (saved) global.WebSocket = saved;
    }
  });
});

describe('drops delivered again', () => {
  const dropped = (drag) => ({ type: 'itemsDropped', drag, operation: 'copy', items: [{ activityType: 'panes.document', targetContentIdentifier: 'doc_1' }] });

  test('a drag whose `itemsDropped` came already is not emitted again, also after a reload, and only the last 64 are kept', async () => {
    const storage = new MemoryStorage();
    const first = setup({ client: { storage } });
    const seen = [];
    first.client.on('itemsDropped', (e) => seen.push(e.drag));
    first.client.start();
    await first.clock.advance(10);
    for (const drag of ['drg_a', 'drg_a', 'drg_b', 'drg_a']) first.network.last.deliver(dropped(drag));
    await first.clock.advance(5);
    assert.deepEqual(seen, ['drg_a', 'drg_b']);
    first.client.close();

    // A reload: a new page on the same storage remembers what the old one got.
    const again = setup({ client: { storage } });
    const seenAgain = [];
    again.client.on('itemsDropped', (e) => seenAgain.push(e.drag));
    again.client.start();
    await again.clock.advance(10);
    for (const drag of ['drg_b', 'drg_c']) again.network.last.deliver(dropped(drag));
    for (let i = 0; i < 63; i++) again.network.last.deliver(dropped(`drg_n${i}`));
    // Kept: drg_c and the 63 newer drags. drg_a and drg_b were pushed out by them.
    for (const drag of ['drg_c', 'drg_n0', 'drg_a']) again.network.last.deliver(dropped(drag));
    await again.clock.advance(5);
    assert.deepEqual(seenAgain, ['drg_c', ...Array.from({ length: 63 }, (_, i) => `drg_n${i}`), 'drg_a']);
  });

  test('a storage that stops taking writes but still reads: the page still emits each drag once', async () => {
    const storage = new MemoryStorage();
    let dropWrites = 0;
    const full = {
      getItem: (key) => storage.getItem(key),
      setItem(key, value) {
        if (key.endsWith('.drops') && ++dropWrites > 1) throw new Error('quota exceeded');
        storage.setItem(key, value);
      },
      removeItem: (key) => storage.removeItem(key),
    };
    const { clock, network, client } = setup({ client: { storage: full } });
    const seen = [];
    client.on('itemsDropped', (e) => seen.push(e.drag));
    client.start();
    await clock.advance(10);
    for (const drag of ['drg_a', 'drg_b', 'drg_b', 'drg_c', 'drg_a', 'drg_c']) network.last.deliver(dropped(drag));
    await clock.advance(5);
    assert.ok(dropWrites > 1, 'the later writes failed');
    assert.deepEqual(seen, ['drg_a', 'drg_b', 'drg_c']);
  });

  test('without a usable storage the page itself still emits each drag once', async () => {
    const broken = { getItem() { throw new Error('blocked'); }, setItem() { throw new Error('blocked'); }, removeItem() {} };
    const { clock, network, client } = setup({ client: { storage: broken } });
    const seen = [];
    client.on('itemsDropped', (e) => seen.push(e.drag));
    client.start();
    await clock.advance(10);
    for (const drag of ['drg_a', 'drg_b', 'drg_a']) network.last.deliver(dropped(drag));
    await clock.advance(5);
    assert.deepEqual(seen, ['drg_a', 'drg_b']);
  });
});
