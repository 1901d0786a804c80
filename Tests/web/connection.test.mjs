// The client's connection against the real server (lib/connection.js, lib/requests.js,
// lib/session-store.js): connecting and resuming, tickets and forks, requests as promises with
// protocol errors, reconnecting after drops, drains, crashes and taken sessions, and a
// destroyed session. Timer-driven details (exact backoff delays, heartbeat, timeouts with late
// replies, garbled frames) are in timing.test.mjs, on the fake transport.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { readFileSync } from 'node:fs';
import { PanesError, CLIENT_VERSION } from '../../web/panes-client.js';
import { KEYED_REQUESTS } from '../../web/lib/requests.js';
import { MemoryStorage, clientOf, closeAll, connected, freshWorkspace, next } from './support/helpers.mjs';
import { PanesServer } from './support/server.mjs';
import { Tap } from './support/tap.mjs';

/** @type {PanesServer} */
let server;
before(async () => {
  server = await new PanesServer({ settings: { livenessProbeTimeoutMs: 300 } }).start();
});
after(() => server.dispose());
afterEach(() => closeAll());

describe('connecting', { timeout: 20_000 }, () => {
  test('the first connect names protocol, client, workspace, traits and state, and stores the new session', async () => {
    const tap = new Tap();
    const workspace = freshWorkspace();
    const storage = new MemoryStorage();
    const client = clientOf(server, {
      workspace,
      storage,
      createSocket: tap.createSocket,
      traits: { width: 'compact', pointer: 'coarse' },
      lifecycle: { visible: true, focused: false },
    });
    const result = await client.start();
    const [connect] = tap.sent('connect');
    assert.equal(connect.protocol, 1);
    assert.equal(connect.client, CLIENT_VERSION);
    assert.equal(connect.workspace, workspace);
    assert.deepEqual(connect.auth, { name: 'alice' });
    assert.deepEqual(connect.traits, { width: 'compact', pointer: 'coarse' });
    assert.deepEqual(connect.state, { visible: true, focused: false });
    assert.equal(connect.session, undefined);
    assert.equal(result.created, true);
    assert.equal(result.workspace, workspace);
    assert.deepEqual(result.traits, { width: 'compact', pointer: 'coarse' });
    assert.equal(client.status, 'connected');
    assert.equal(client.scene, result.scene);
    assert.equal(client.user?.name, 'alice');
    assert.deepEqual(JSON.parse(storage.getItem(`panes.session.${workspace}`)), {
      id: result.session.persistentIdentifier,
      secret: result.session.secret,
    });
  });

  test('keeps the session in storage and resumes it', async () => {
    const workspace = freshWorkspace();
    const storage = new MemoryStorage();
    const first = clientOf(server, { workspace, storage });
    const { session } = await first.start();
    assert.deepEqual(JSON.parse(storage.getItem(`panes.session.${workspace}`)), { id: session.persistentIdentifier, secret: session.secret });
    await first.setUserInfo({ sidebar: false });
    first.close();
    const tap = new Tap();
    const again = clientOf(server, { workspace, storage, createSocket: tap.createSocket });
    const result = await again.start();
    assert.equal(result.session.persistentIdentifier, session.persistentIdentifier);
    assert.equal(result.created, false);
    assert.deepEqual(result.session.userInfo, { sidebar: false });
    assert.deepEqual(tap.sent('connect')[0].session, { id: session.persistentIdentifier, secret: session.secret });
  });

  test('a window ticket wins over the stored session, is reported used, and is not sent again', async () => {
    const workspace = freshWorkspace();
    const opener = clientOf(server, { workspace });
    await opener.start();
    const activity = { activityType: 'panes.document', title: 'Plan', targetContentIdentifier: 'doc_ticket' };
    const opened = await opener.requestActivation(activity);
    assert.equal(opened.action, 'open');
    assert.equal(typeof opened.ticket, 'string');
    // A window.open child inherits a copy of its opener's sessionStorage.
    const tap = new Tap();
    const child = clientOf(server, { workspace, storage: new MemoryStorage(), ticket: opened.ticket, createSocket: tap.createSocket });
    let used = 0;
    child.on('ticketUsed', () => used++);
    const result = await child.start();
    assert.equal(result.session.persistentIdentifier, opened.session);
    assert.equal(result.connectionOptions.userActivities[0].targetContentIdentifier, 'doc_ticket');
    assert.equal(used, 1);
    child.dropConnection();
    await connected(child);
    const last = tap.sent('connect').at(-1);
    assert.equal(last.ticket, undefined);
    assert.equal(last.session.id, opened.session);
    assert.equal(child.session?.persistentIdentifier, opened.session);
  });

  test('an invalid ticket falls back to the stored session', async () => {
    const workspace = freshWorkspace();
    const storage = new MemoryStorage();
    const first = clientOf(server, { workspace, storage });
    const { session } = await first.start();
    first.close();
    const again = clientOf(server, { workspace, storage, ticket: 'tkt_never_issued' });
    const used = next(again, 'ticketUsed');
    const result = await again.start();
    assert.equal(result.session.persistentIdentifier, session.persistentIdentifier);
    assert.deepEqual(await used, { invalid: true });
  });

  test('a duplicated tab (same stored session, original still live) keeps the fork it is given', async () => {
    const workspace = freshWorkspace();
    const storage = new MemoryStorage();
    const original = clientOf(server, { workspace, storage });
    const { session } = await original.start();
    const copied = storage.copy();
    const duplicate = clientOf(server, { workspace, storage: copied });
    const result = await duplicate.start();
    assert.equal(result.forkedFrom, session.persistentIdentifier);
    assert.notEqual(result.session.persistentIdentifier, session.persistentIdentifier);
    assert.equal(JSON.parse(copied.getItem(`panes.session.${workspace}`)).id, result.session.persistentIdentifier);
    assert.equal(JSON.parse(storage.getItem(`panes.session.${workspace}`)).id, session.persistentIdentifier);
  });

  test('session_not_found forgets the stored session and starts a new one on the same socket', async () => {
    const workspace = freshWorkspace();
    const storage = new MemoryStorage({ [`panes.session.${workspace}`]: JSON.stringify({ id: 'ses_gone', secret: 'x' }) });
    const tap = new Tap();
    const client = clientOf(server, { workspace, storage, createSocket: tap.createSocket });
    const errors = [];
    client.on('connectError', (e) => errors.push(e.code));
    await client.start();
    assert.equal(tap.sockets.length, 1);
    const connects = tap.sent('connect');
    assert.equal(connects.length, 2);
    assert.equal(connects[1].session, undefined);
    assert.deepEqual(errors, ['session_not_found']);
    assert.notEqual(JSON.parse(storage.getItem(`panes.session.${workspace}`)).id, 'ses_gone');
  });

  test('an error that cannot be retried fails for good', async () => {
    const tap = new Tap();
    const client = clientOf(server, { workspace: 'not a valid name!', createSocket: tap.createSocket });
    const statuses = [];
    const errors = [];
    client.on('status', (s) => statuses.push(s.status));
    client.on('error', (e) => errors.push(e));
    await assert.rejects(client.start(), (e) => e instanceof PanesError && e.action === 'fix' && e.field === 'workspace');
    assert.equal(statuses.at(-1), 'failed');
    assert.equal(errors.length, 1);
    assert.equal(tap.sockets.length, 1);
    await assert.rejects(client.ping(), (e) => e.code === 'closed');
  });
});

describe('requests', { timeout: 20_000 }, () => {
  test('resolve with the result, and reject with the protocol error', async () => {
    const client = clientOf(server, { workspace: freshWorkspace() });
    await client.start();
    assert.equal(typeof (await client.ping()).now, 'number');
    const error = await client.request('noSuchRequest', { x: 1 }).then(() => assert.fail('resolved'), (e) => e);
    assert.ok(error instanceof PanesError);
    assert.equal(error.code, 'unknown_type');
    assert.equal(error.number, 1002);
    assert.equal(error.action, 'fix');
    assert.equal(error.request, 'noSuchRequest');
    assert.ok(error.isUnsupported);
    assert.equal(client.supports('noSuchRequest'), false);
    assert.equal(client.supports('ping'), true);
    const invalid = await client.setUserInfo(/** @type {any} */ ('not an object')).then(() => assert.fail('resolved'), (e) => e);
    assert.equal(invalid.code, 'invalid_field');
    assert.equal(invalid.field, 'userInfo');
  });

  test('wait for the connection while disconnected, unless asked not to', async () => {
    const tap = new Tap();
    const client = clientOf(server, { workspace: freshWorkspace(), createSocket: tap.createSocket });
    const early = client.setUserInfo({ sidebar: false });
    await assert.rejects(client.request('ping', {}, { queue: false }), (e) => e.code === 'disconnected');
    await client.start();
    assert.deepEqual((await early).userInfo, { sidebar: false });
    assert.deepEqual(tap.last.sent.map((m) => m.type), ['connect', 'setUserInfo']);
  });

  test('in flight without a key when the connection drops, reject with `disconnected`', async () => {
    const tap = new Tap();
    const client = clientOf(server, { workspace: freshWorkspace(), createSocket: tap.createSocket });
    await client.start();
    tap.drop((m) => m.type === 'reply' && m.re === tap.sent('updateActivity')[0]?.id);
    const request = client.request('updateActivity', { activity: { activityType: 'panes.workspace' } }, { idempotencyKey: null });
    client.dropConnection();
    await assert.rejects(request, (e) => e.code === 'disconnected' && e.action === 'retry');
    assert.equal(tap.sent('updateActivity')[0].idempotencyKey, undefined);
    await connected(client);
  });

  test('time out when no reply comes', async () => {
    const tap = new Tap();
    const client = clientOf(server, { workspace: freshWorkspace(), createSocket: tap.createSocket, requestTimeoutMs: 300 });
    await client.start();
    tap.drop((m) => m.type === 'reply' && tap.sent('ping').some((p) => p.id === m.re));
    await assert.rejects(client.ping(), (e) => e.code === 'timeout' && e.request === 'ping');
    assert.equal(client.status, 'connected');
  });
});

describe('retrying with a key (PROTOCOL.md, "What a client may retry")', { timeout: 20_000 }, () => {
  test('the client keys exactly the requests the protocol keeps an outcome for', () => {
    const schema = JSON.parse(readFileSync(new URL('../../PROTOCOL.schema.json', import.meta.url), 'utf8'));
    const keyed = Object.entries(schema.$defs.requests.$defs)
      .filter(([, request]) => request.properties.idempotencyKey?.$ref === '#/$defs/idempotencyKey')
      .map(([type]) => type);
    assert.deepEqual([...KEYED_REQUESTS, 'connect'].sort(), keyed.sort());
  });

  test('every request that changes stored state carries a key of its own; the others carry none', async () => {
    const tap = new Tap();
    const client = clientOf(server, { workspace: freshWorkspace(), createSocket: tap.createSocket });
    await client.start();
    await client.setUserInfo({ a: 1 });
    await client.setUserInfo({ a: 2 });
    await client.setPreference('editor.fontSize', 14);
    const document = await client.createDocument('Keyed');
    await client.renameDocument(document.id, 'Keyed 2');
    await client.ping();
    await client.listSessions();
    const keyed = tap.sent().filter((m) => ['setUserInfo', 'setPreference', 'createDocument', 'renameDocument'].includes(m.type));
    const keys = keyed.map((m) => m.idempotencyKey);
    assert.ok(keys.every((key) => typeof key === 'string' && key.length > 0 && key.length <= 128), keys.join());
    assert.equal(new Set(keys).size, keys.length, 'a new key for each request');
    assert.ok(tap.sent('connect')[0].idempotencyKey, 'connect carries one too');
    for (const type of ['ping', 'listSessions']) assert.equal(tap.sent(type)[0].idempotencyKey, undefined, type);
  });

  test('a request whose reply was lost with its connection is sent again with its key, and applied once', async () => {
    const tap = new Tap();
    const workspace = freshWorkspace();
    const client = clientOf(server, { workspace, createSocket: tap.createSocket });
    await client.start();
    const stopDropping = tap.drop((m) => m.type === 'reply' && m.re === tap.sent('createDocument')[0]?.id);
    const created = client.createDocument('Only once');
    // The reply was written by the server and dropped on its way: the client cannot know.
    await new Promise((resolve) => {
      const check = () => (tap.last.dropped.length ? resolve(undefined) : setTimeout(check, 5));
      check();
    });
    const lost = tap.last.dropped[0];
    stopDropping();
    client.dropConnection();
    const document = await created;
    assert.deepEqual(document, lost.result.document, 'answered as the first attempt was');
    const sent = tap.sent('createDocument');
    assert.equal(sent.length, 2);
    assert.equal(sent[1].idempotencyKey, sent[0].idempotencyKey, 'the same key, on the next connection');
    const listed = await client.request('observeDocuments');
    assert.equal(listed.documents.filter((d) => d.title === 'Only once').length, 1, 'one document, not two');
  });

  test('`outcome_unknown` sends the request again with its key until it is answered', async () => {
    const tap = new Tap();
    const client = clientOf(server, { workspace: freshWorkspace(), createSocket: tap.createSocket });
    await client.start();
    // The first reply is replaced by what a server that lost its database around the commit says.
    const stop = tap.drop((m) => m.type === 'reply' && m.re === tap.sent('setPreference')[0]?.id);
    const written = client.setPreference('editor.fontSize', 17, { ifVersion: 0 });
    await new Promise((resolve) => {
      const check = () => (tap.last.dropped.length ? resolve(undefined) : setTimeout(check, 5));
      check();
    });
    stop();
    const first = tap.sent('setPreference')[0];
    tap.last.inject({ type: 'reply', re: first.id, ok: false, request: 'setPreference',
      error: { code: 'outcome_unknown', number: 4004, action: 'retry', message: 'unknown', retryAfterMs: 20 } });
    const result = await written;
    assert.deepEqual(result, { version: 1, changed: true }, 'not `version_conflict` against its own first attempt');
    const sent = tap.sent('setPreference');
    assert.equal(sent.length, 2);
    assert.equal(sent[1].idempotencyKey, first.idempotencyKey);
  });

  test('a connect whose reply was lost is sent again with its key and gets the session it made', async () => {
    const tap = new Tap();
    const workspace = freshWorkspace();
    const storage = new MemoryStorage();
    const client = clientOf(server, { workspace, storage, createSocket: tap.createSocket });
    const stop = tap.drop((m) => m.type === 'reply' && m.re === tap.sent('connect')[0]?.id);
    const started = client.start();
    await new Promise((resolve) => {
      const check = () => (tap.sockets[0]?.dropped.length ? resolve(undefined) : setTimeout(check, 5));
      check();
    });
    const lost = tap.sockets[0].dropped[0];
    stop();
    client.dropConnection();
    const result = await started;
    const connects = tap.sent('connect');
    assert.equal(connects[1].idempotencyKey, connects[0].idempotencyKey);
    assert.equal(result.session.persistentIdentifier, lost.result.session.persistentIdentifier, 'the session it made');
    assert.equal(result.created, true);
    const { sessions } = await client.listSessions();
    assert.equal(sessions.length, 1, 'not a second session');
  });
});

describe('reconnecting', { timeout: 30_000 }, () => {
  test('a server that drains and comes back on the same port gets the same session back', async () => {
    const own = await new PanesServer().start();
    try {
      const client = clientOf(own, { workspace: freshWorkspace() });
      const { session } = await client.start();
      const goingAway = next(client, 'goingAway');
      const disconnected = next(client, 'disconnect');
      await own.stop('SIGTERM');
      assert.equal(typeof (await goingAway).reconnectAfterMs, 'number');
      assert.equal((await disconnected).code, 1001);
      const back = next(client, 'connect');
      await own.start();
      const event = await back;
      assert.equal(event.first, false);
      assert.equal(event.sessionChanged, false);
      assert.equal(client.session?.persistentIdentifier, session.persistentIdentifier);
      assert.equal(client.epoch, 2);
    } finally {
      await own.dispose();
    }
  });

  test('a crashed server (SIGKILL) that restarts gets the same session back', async () => {
    const own = await new PanesServer().start();
    try {
      const client = clientOf(own, { workspace: freshWorkspace() });
      const { session } = await client.start();
      const lost = next(client, 'disconnect');
      await own.stop('SIGKILL');
      assert.notEqual((await lost).code, 1000);
      const back = next(client, 'connect');
      await own.start();
      await back;
      assert.equal(client.session?.persistentIdentifier, session.persistentIdentifier);
      assert.equal(await client.ping().then(() => 'answered'), 'answered');
    } finally {
      await own.dispose();
    }
  });

  test('a connection that stopped answering loses its session to the one that resumed it (4002), and starts a new one', async () => {
    const workspace = freshWorkspace();
    const storage = new MemoryStorage();
    const tap = new Tap();
    const stale = clientOf(server, { workspace, storage, createSocket: tap.createSocket });
    const { session } = await stale.start();
    tap.last.pause(); // a laptop lid closed: the server's liveness ping goes unanswered
    const resumer = clientOf(server, { workspace, storage: storage.copy() });
    const resumed = await resumer.start();
    assert.equal(resumed.session.persistentIdentifier, session.persistentIdentifier);
    assert.equal(resumed.forkedFrom ?? null, null);
    const lost = next(stale, 'disconnect');
    const again = next(stale, 'connect');
    tap.sockets[0].resume();
    assert.equal((await lost).code, 4002);
    const event = await again;
    assert.equal(event.sessionChanged, true);
    assert.notEqual(stale.session?.persistentIdentifier, session.persistentIdentifier);
    assert.equal(tap.sent('connect').at(-1).session, undefined, 'the taken session is not resumed');
  });
});

describe('a destroyed session', { timeout: 20_000 }, () => {
  test('destroyed from another window, ends the client: no reconnect, the stored session forgotten', async () => {
    const workspace = freshWorkspace();
    const storage = new MemoryStorage();
    const victim = clientOf(server, { workspace, storage });
    const { session } = await victim.start();
    const other = clientOf(server, { workspace });
    await other.start();
    const destroyed = next(victim, 'destroyed');
    const result = await other.requestDestruction(session.persistentIdentifier, 'commit');
    assert.deepEqual(result, { session: session.persistentIdentifier, animation: 'commit' });
    assert.deepEqual(await destroyed, { session: session.persistentIdentifier, animation: 'commit' });
    assert.equal(victim.status, 'destroyed');
    assert.equal(storage.getItem(`panes.session.${workspace}`), null);
    await assert.rejects(victim.ping(), (e) => e.code === 'closed' && /destroyed/.test(e.message));
    const list = await other.listSessions();
    assert.ok(!list.sessions.some((s) => s.persistentIdentifier === session.persistentIdentifier));
  });

  // Issue 13, item 8: the server sends the reply to destroying one's own session before the
  // close frame (it closed first, with no reply, before main's 2d71275). The client is ready
  // for either order: the next test shows it failing clearly instead of waiting for ever.
  for (const round of [1, 2, 3]) {
    test(`destroying its own session resolves with the reply, then the client ends (round ${round})`, async () => {
      const client = clientOf(server, { workspace: freshWorkspace() });
      const { session } = await client.start();
      const destroyed = next(client, 'destroyed');
      const result = await client.requestDestruction(session.persistentIdentifier, 'decline');
      assert.deepEqual(result, { session: session.persistentIdentifier, animation: 'decline' });
      assert.equal((await destroyed).animation, 'decline');
      assert.equal(client.status, 'destroyed');
    });
  }

  test('when the close comes before the reply, the request fails clearly instead of waiting', async () => {
    const tap = new Tap();
    const client = clientOf(server, { workspace: freshWorkspace(), createSocket: tap.createSocket });
    const { session } = await client.start();
    tap.drop((m) => m.type === 'reply' && tap.sent('requestDestruction').some((r) => r.id === m.re));
    const request = client.requestDestruction(session.persistentIdentifier);
    await assert.rejects(request, (e) => e instanceof PanesError && e.code === 'closed' && e.action === 'giveUp' && /destroyed \(close 4001\)/.test(e.message));
    assert.equal(client.status, 'destroyed');
  });
});
