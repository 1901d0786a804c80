// Tests for web/lib/panes-client.js against the fake network and server: connecting and
// resuming, tickets and forks, requests as promises with timeouts and protocol errors,
// reconnection with backoff and jitter, catch-up of observations, and lifecycle reports.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { backoffDelay } from '../../web/lib/backoff.js';
import { PanesError, actionForNumber } from '../../web/lib/errors.js';
import { PanesClient } from '../../web/lib/panes-client.js';
import { FakeClock, FakeNetwork } from './fake-server.mjs';

class MemoryStorage {
  constructor(entries = {}) {
    this.map = new Map(Object.entries(entries));
  }
  getItem(key) {
    return this.map.has(key) ? this.map.get(key) : null;
  }
  setItem(key, value) {
    this.map.set(key, String(value));
  }
  removeItem(key) {
    this.map.delete(key);
  }
}

/** A client on a fake network; `random` fixed so backoff is exact. */
function setup(options = {}) {
  const clock = new FakeClock();
  const network = options.network ?? new FakeNetwork(clock);
  const storage = options.storage ?? new MemoryStorage();
  const client = new PanesClient({
    url: 'ws://test/ws',
    auth: { name: 'alice' },
    storage,
    createSocket: network.createSocket,
    timers: network.clock,
    random: () => 0.5,
    heartbeatMs: 0,
    ...options.client,
  });
  const statuses = [];
  client.on('status', (s) => statuses.push(s.status));
  return { clock: network.clock, network, server: network.server, storage, client, statuses };
}

const connectMessages = (network) => network.sockets.flatMap((s) => s.sent).filter((m) => m.type === 'connect');

describe('connecting', () => {
  test('the first connect names protocol, client, workspace, traits and state, and stores the new session', async () => {
    const { clock, network, client, storage } = setup({ client: { traits: { width: 'compact', pointer: 'coarse' }, lifecycle: { visible: true, focused: false } } });
    const ready = client.start();
    await clock.advance(10);
    const result = await ready;
    const [connect] = connectMessages(network);
    assert.equal(connect.protocol, 1);
    assert.equal(connect.client, 'panes-web/0.1');
    assert.equal(connect.workspace, 'default');
    assert.deepEqual(connect.auth, { name: 'alice' });
    assert.deepEqual(connect.traits, { width: 'compact', pointer: 'coarse' });
    assert.deepEqual(connect.state, { visible: true, focused: false });
    assert.equal(connect.session, undefined);
    assert.equal(client.status, 'connected');
    assert.deepEqual(JSON.parse(storage.getItem('panes.session.default')), {
      id: result.session.persistentIdentifier,
      secret: result.session.secret,
    });
  });

  test('a stored session is resumed', async () => {
    const first = setup();
    first.client.start();
    await first.clock.advance(10);
    first.client.close();
    await first.clock.advance(10);
    const again = setup({ network: first.network, storage: first.storage });
    again.client.start();
    await again.clock.advance(10);
    assert.equal(again.client.session.persistentIdentifier, first.client.session.persistentIdentifier);
    assert.deepEqual(connectMessages(first.network).at(-1).session, JSON.parse(first.storage.getItem('panes.session.default')));
  });

  test('a ticket wins over the stored session, is reported used, and is not sent again', async () => {
    const first = setup();
    first.client.start();
    await first.clock.advance(10);
    first.client.close();
    const target = first.server.newSession('alice');
    const ticket = first.server.issueTicket(target.id, [{ activityType: 'panes.document', targetContentIdentifier: 'doc_1' }]);
    const child = setup({ network: first.network, storage: first.storage, client: { ticket } });
    let used = 0;
    child.client.on('ticketUsed', () => used++);
    const ready = child.client.start();
    await child.clock.advance(10);
    const result = await ready;
    assert.equal(result.session.persistentIdentifier, target.id);
    assert.equal(result.connectionOptions.userActivities[0].targetContentIdentifier, 'doc_1');
    assert.equal(used, 1);
    assert.equal(connectMessages(first.network).at(-1).session, undefined);
    child.network.cut();
    await child.clock.advance(1000);
    const last = connectMessages(first.network).at(-1);
    assert.equal(last.ticket, undefined);
    assert.equal(last.session.id, target.id);
  });

  test('an invalid ticket falls back to the stored session', async () => {
    const first = setup();
    first.client.start();
    await first.clock.advance(10);
    const id = first.client.session.persistentIdentifier;
    first.client.close();
    const again = setup({ network: first.network, storage: first.storage, client: { ticket: 'tkt_gone' } });
    again.client.start();
    await again.clock.advance(20);
    assert.equal(again.client.status, 'connected');
    assert.equal(again.client.session.persistentIdentifier, id);
  });

  test('a duplicated tab (same stored session, original still live) keeps the fork it is given', async () => {
    const original = setup();
    original.client.start();
    await original.clock.advance(10);
    const copied = new MemoryStorage(Object.fromEntries(original.storage.map));
    const duplicate = setup({ network: original.network, storage: copied });
    const ready = duplicate.client.start();
    await duplicate.clock.advance(10);
    const result = await ready;
    assert.equal(result.forkedFrom, original.client.session.persistentIdentifier);
    assert.notEqual(result.session.persistentIdentifier, original.client.session.persistentIdentifier);
    assert.equal(JSON.parse(copied.getItem('panes.session.default')).id, result.session.persistentIdentifier);
    assert.equal(JSON.parse(original.storage.getItem('panes.session.default')).id, original.client.session.persistentIdentifier);
  });

  test('session_not_found forgets the stored session and starts a new one on the same socket', async () => {
    const storage = new MemoryStorage({ 'panes.session.default': JSON.stringify({ id: 'ses_gone', secret: 'x' }) });
    const { clock, network, client } = setup({ storage });
    client.start();
    await clock.advance(20);
    assert.equal(client.status, 'connected');
    assert.equal(network.sockets.length, 1);
    const connects = connectMessages(network);
    assert.equal(connects.length, 2);
    assert.equal(connects[1].session, undefined);
    assert.notEqual(JSON.parse(storage.getItem('panes.session.default')).id, 'ses_gone');
  });

  test('an error that cannot be retried fails for good', async () => {
    const { clock, network, server, client, statuses } = setup();
    server.rejectUser = 'alice';
    const errors = [];
    client.on('error', (e) => errors.push(e));
    const ready = client.start();
    await clock.advance(10);
    await assert.rejects(ready, (e) => e instanceof PanesError && e.code === 'unauthenticated' && e.action === 'giveUp');
    assert.equal(statuses.at(-1), 'failed');
    assert.equal(errors.length, 1);
    await clock.advance(60_000);
    assert.equal(network.sockets.length, 1);
  });
});

describe('requests', () => {
  test('resolve with the result, and reject with the protocol error', async () => {
    const { clock, server, client } = setup();
    client.start();
    await clock.advance(10);
    const pong = client.ping();
    await clock.advance(10);
    assert.equal(typeof (await pong).now, 'number');
    server.unknown.add('observeDocuments');
    const failed = client.request('observeDocuments').then(() => assert.fail('resolved'), (e) => e);
    await clock.advance(10);
    const error = await failed;
    ((e) => {
      assert.ok(e instanceof PanesError);
      assert.equal(e.code, 'unknown_type');
      assert.equal(e.number, 1002);
      assert.equal(e.action, 'fix');
      assert.equal(e.field, 'type');
      assert.equal(e.request, 'observeDocuments');
      assert.ok(e.isUnsupported);
    })(error);
    assert.equal(client.supports('observeDocuments'), false);
    assert.equal(client.supports('ping'), true);
  });

  test('time out when no reply comes, and a late reply is ignored', async () => {
    const { clock, server, client } = setup({ client: { requestTimeoutMs: 500 } });
    client.start();
    await clock.advance(10);
    server.mute = true;
    const request = client.ping();
    const outcome = request.then(() => 'resolved', (e) => e.code);
    await clock.advance(499);
    assert.equal(client.pending.size, 1);
    await clock.advance(1);
    assert.equal(await outcome, 'timeout');
    assert.equal(client.pending.size, 0);
  });

  test('wait for the connection while disconnected, unless asked not to', async () => {
    const { clock, network, client } = setup();
    const early = client.setUserInfo({ sidebar: false });
    const refused = client.request('ping', {}, { queue: false });
    await assert.rejects(refused, (e) => e.code === 'disconnected');
    client.start();
    await clock.advance(10);
    assert.deepEqual((await early).userInfo, { sidebar: false });
    const types = network.last.sent.map((m) => m.type);
    assert.deepEqual(types, ['connect', 'setUserInfo']);
  });

  test('in flight when the connection drops, reject with `disconnected`', async () => {
    const { clock, network, server, client } = setup();
    client.start();
    await clock.advance(10);
    server.mute = true;
    const request = client.updateActivity({ activityType: 'panes.workspace' });
    const outcome = request.then(() => 'resolved', (e) => e.code);
    await clock.advance(1);
    network.cut();
    await clock.advance(2);
    assert.equal(await outcome, 'disconnected');
  });

  test('every error number range maps to its action', () => {
    assert.equal(actionForNumber(1004), 'fix');
    assert.equal(actionForNumber(2000), 'refresh');
    assert.equal(actionForNumber(3002), 'giveUp');
    assert.equal(actionForNumber(4000), 'retry');
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
    const spread = new Set(Array.from({ length: 50 }, () => backoffDelay(4, options)));
    assert.ok(spread.size > 10, 'jitter spreads delays');
  });

  test('waits longer after each failed attempt, resumes the same session, and resets the count', async () => {
    const clock = new FakeClock();
    const network = new FakeNetwork(clock);
    const opened = [];
    const create = network.createSocket;
    network.createSocket = (url, protocol) => {
      opened.push(clock.now());
      return create(url, protocol);
    };
    const { client, statuses } = setup({ network, client: { backoff: { baseMs: 100, maxMs: 10_000, jitter: 0.5 } } });
    client.start();
    await clock.advance(10);
    const session = client.session.persistentIdentifier;
    network.reachable = false;
    const cutAt = clock.now();
    network.cut();
    await clock.advance(2000);
    assert.equal(client.status, 'reconnecting');
    // With random 0.5 the delays are 75, 150, 300, 600 ms; each close takes 1 ms to arrive.
    const attempts = opened.slice(1);
    assert.equal(attempts[0] - cutAt, 1 + 75);
    assert.deepEqual(attempts.slice(1, 4).map((t, i) => t - attempts[i]), [1 + 150, 1 + 300, 1 + 600]);
    network.reachable = true;
    client.reconnectNow();
    await clock.advance(10);
    assert.equal(client.status, 'connected');
    assert.equal(client.session.persistentIdentifier, session);
    assert.equal(client.attempt, 0);
    assert.ok(statuses.includes('reconnecting'));
  });

  test('reconnectNow skips the wait', async () => {
    const { clock, network, client } = setup({ client: { backoff: { baseMs: 10_000 } } });
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

  test('a destroyed session ends the client: no reconnect, the stored session forgotten', async () => {
    const { clock, network, server, client, storage } = setup();
    const destroyed = [];
    client.on('destroyed', (e) => destroyed.push(e));
    client.start();
    await clock.advance(10);
    server.destroy(client.session.persistentIdentifier, 'commit');
    await clock.advance(10);
    assert.deepEqual(destroyed.map((e) => e.animation), ['commit']);
    assert.equal(client.status, 'destroyed');
    assert.equal(storage.getItem('panes.session.default'), null);
    const sockets = network.sockets.length;
    await clock.advance(60_000);
    assert.equal(network.sockets.length, sockets);
    await assert.rejects(client.ping(), (e) => e.code === 'closed');
  });

  test('close code 4002 (another connection took the session) starts a new session', async () => {
    const { clock, network, client } = setup({ client: { backoff: { baseMs: 1 } } });
    client.start();
    await clock.advance(10);
    const before = client.session.persistentIdentifier;
    let changed = null;
    client.on('connect', (e) => {
      changed = e.sessionChanged;
    });
    network.last.drop(4002, 'taken');
    await clock.advance(50);
    assert.equal(client.status, 'connected');
    assert.notEqual(client.session.persistentIdentifier, before);
    assert.equal(connectMessages(network).at(-1).session, undefined);
    assert.equal(changed, true);
  });

  test('a silent connection is noticed by the heartbeat and replaced', async () => {
    const { clock, network, server, client } = setup({ client: { heartbeatMs: 1000 } });
    client.start();
    await clock.advance(10);
    server.mute = true;
    const sockets = network.sockets.length;
    await clock.advance(1000); // idle: ping sent
    assert.equal(network.last.sent.at(-1).type, 'ping');
    server.mute = false;
    // The fake server now answers, but the ping itself was swallowed: it times out.
    await clock.advance(1500);
    assert.ok(network.sockets.length > sockets);
    assert.equal(client.status, 'connected');
  });
});

describe('observing preferences', () => {
  test('initial values arrive before `ready`, then every change', async () => {
    const { clock, server, client } = setup();
    server.setPreference('editor.fontSize', 15);
    client.start();
    await clock.advance(10);
    const changes = [];
    const handle = client.observe('editor', { initial: true, old: true }, (c) => changes.push(c));
    await clock.advance(10);
    await handle.ready;
    assert.deepEqual(changes.map((c) => [c.keyPath, c.new, Boolean(c.initial)]), [['editor.fontSize', 15, true]]);
    server.setPreference('editor.showWordCount', true);
    await clock.advance(10);
    assert.deepEqual(changes.at(-1).keyPath, 'editor.showWordCount');
    assert.equal(changes.at(-1).new, true);
    handle.stop();
    await clock.advance(10);
    assert.equal(server.requests.at(-1).type, 'unobserve');
    server.setPreference('editor.fontSize', 16);
    await clock.advance(10);
    assert.equal(changes.length, 2);
  });

  test('without `initial`, current values are not delivered', async () => {
    const { clock, server, client } = setup();
    server.setPreference('appearance.theme', 'dark');
    client.start();
    await clock.advance(10);
    const changes = [];
    client.observe('appearance.theme', {}, (c) => changes.push(c));
    await clock.advance(10);
    assert.equal(changes.length, 0);
  });

  test('after a reconnect, only what changed meanwhile is delivered, as a catch-up', async () => {
    const { clock, network, server, client } = setup({ client: { backoff: { baseMs: 1 } } });
    server.setPreference('editor.fontSize', 15);
    server.setPreference('editor.showWordCount', false);
    server.setPreference('editor.spell', true);
    client.start();
    await clock.advance(10);
    const changes = [];
    client.observe('editor', { initial: true }, (c) => changes.push(c));
    await clock.advance(10);
    changes.length = 0;
    network.reachable = false;
    network.cut();
    await clock.advance(5);
    server.setPreference('editor.showWordCount', true);
    server.setPreference('editor.spell', undefined);
    network.reachable = true;
    await clock.advance(100);
    assert.equal(client.status, 'connected');
    const byKey = Object.fromEntries(changes.map((c) => [c.keyPath, c]));
    assert.deepEqual(Object.keys(byKey).sort(), ['editor.showWordCount', 'editor.spell']);
    assert.equal(byKey['editor.showWordCount'].new, true);
    assert.equal(byKey['editor.showWordCount'].catchUp, true);
    assert.equal(byKey['editor.spell'].removed, true);
    server.setPreference('editor.fontSize', 18);
    await clock.advance(10);
    assert.equal(changes.at(-1).new, 18);
  });

  test('an observation made while disconnected starts once connected', async () => {
    const { clock, server, client } = setup();
    server.setPreference('appearance.theme', 'dark');
    const changes = [];
    const handle = client.observe('appearance.theme', { initial: true }, (c) => changes.push(c));
    client.start();
    await clock.advance(20);
    await handle.ready;
    assert.deepEqual(changes.map((c) => c.new), ['dark']);
  });
});

describe('watching and lifecycle', () => {
  test('the session list is re-read after a reconnect', async () => {
    const { clock, network, client } = setup({ client: { backoff: { baseMs: 1 } } });
    client.start();
    await clock.advance(10);
    const lists = [];
    client.watchSessions((list) => lists.push(list));
    await clock.advance(10);
    assert.equal(lists.length, 1);
    network.cut();
    await clock.advance(50);
    assert.equal(lists.length, 2);
  });

  test('lifecycle reports send only the latest state, one at a time', async () => {
    const { clock, network, client } = setup();
    client.start();
    await clock.advance(10);
    client.setLifecycle({ visible: true, focused: false });
    client.setLifecycle({ visible: false, focused: false });
    client.setLifecycle({ visible: true, focused: true });
    client.setLifecycle({ visible: true, focused: true });
    await clock.advance(20);
    const reports = network.last.sent.filter((m) => m.type === 'lifecycle').map((m) => [m.visible, m.focused]);
    assert.deepEqual(reports, [[true, false], [true, true]]);
  });

  test('the connect message carries the lifecycle state reported while disconnected', async () => {
    const { clock, network, client } = setup({ client: { backoff: { baseMs: 1 } } });
    client.start();
    await clock.advance(10);
    network.reachable = false;
    network.cut();
    await clock.advance(2);
    client.setLifecycle({ visible: false, focused: false });
    network.reachable = true;
    await clock.advance(50);
    assert.deepEqual(connectMessages(network).at(-1).state, { visible: false, focused: false });
  });
});
