// Documents against the real server (lib/documents.js, lib/presence.js): edits and
// acknowledgements, concurrent editors converging (also outside the Basic Multilingual Plane),
// edits made offline sent once back without duplicates, catch-up by operations and by
// snapshot, a gap in the revisions, presence moved through edits, and the document list.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { DocumentList, DocumentSession } from '../../web/panes-client.js';
import { clientOf, closeAll, connected, converged, freshWorkspace, next, until } from './support/helpers.mjs';
import { seededRandom } from './support/seeded-random.mjs';
import { PanesServer } from './support/server.mjs';
import { Tap } from './support/tap.mjs';

/** @type {PanesServer} */
let server;
before(async () => {
  server = await new PanesServer().start();
});
after(() => server.dispose());
afterEach(() => closeAll());

/**
 * A document with `text`, open in one window per name (each a different user), each window
 * with a tap on its socket.
 */
async function world(text = 'hello', names = ['alice', 'bob'], on = server) {
  const workspace = freshWorkspace();
  const taps = names.map(() => new Tap());
  const clients = names.map((name, i) => clientOf(on, { workspace, auth: { name }, createSocket: taps[i].createSocket }));
  await Promise.all(clients.map((c) => c.start()));
  const summary = await clients[0].createDocument('Plan', { text });
  const sessions = await Promise.all(clients.map((c, i) => new DocumentSession(c, summary.id, { name: names[i], color: '#3b82f6' }).open()));
  return { workspace, taps, clients, sessions, id: summary.id, server: on };
}

/** Types `text` at code point `at`, as a binding would. */
function type(session, at, text) {
  const length = [...session.text].length;
  session.applyLocal([at, text, length - at].filter((c) => c !== 0));
}


/** The document as a newcomer opens it: what the server has. */
async function serverCopy(world) {
  const reader = clientOf(world.server, { workspace: world.workspace, auth: { name: 'reader' } });
  await reader.start();
  const session = await reader.openDocument(world.id);
  return { text: session.text, revision: session.revision };
}

describe('DocumentSession', { timeout: 30_000 }, () => {
  test('opens with the text and revision, sends edits with op ids, and is acknowledged', async () => {
    const w = await world('hello');
    const [a, b] = w.sessions;
    assert.equal(a.text, 'hello');
    assert.equal(a.revision, 0);
    type(a, 5, ' world');
    assert.equal(a.text, 'hello world');
    assert.equal(a.synchronized, false);
    await a.whenSaved();
    assert.equal(a.revision, 1);
    await until(b, 'change', () => b.text === 'hello world');
    assert.equal(b.revision, 1);
    const [edit] = w.taps[0].sent('edit');
    assert.deepEqual(edit.operation, [5, ' world']);
    assert.match(edit.opId, /:1$/);
    assert.deepEqual(await serverCopy(w), { text: 'hello world', revision: 1 });
  });

  test('concurrent edits from two windows converge, emoji included', async () => {
    const w = await world('a😀b');
    const [a, b] = w.sessions;
    type(a, 1, 'X'); // after "a"
    type(a, 4, '!'); // buffered while the first is in flight
    type(b, 2, '🎉'); // after the emoji
    type(b, 0, '>');
    await converged(w.sessions);
    assert.equal(a.text, '>aX😀🎉b!');
    assert.equal(b.text, a.text);
    assert.deepEqual(await serverCopy(w), { text: '>aX😀🎉b!', revision: 4 });
  });

  test('edits made offline are kept and sent once back, and the text converges', async () => {
    const w = await world('abc');
    const [a, b] = w.sessions;
    w.taps[0].unreachable = true;
    w.clients[0].dropConnection();
    type(a, 3, ' offline');
    type(b, 0, 'online? ');
    await b.whenSaved();
    assert.equal(a.text, 'abc offline');
    w.taps[0].unreachable = false;
    w.clients[0].reconnectNow();
    await converged(w.sessions);
    assert.equal(a.text, 'online? abc offline');
    assert.equal(b.text, a.text);
    assert.deepEqual(await serverCopy(w), { text: 'online? abc offline', revision: 2 });
  });

  test('an edit the server applied but whose reply was lost is recognised, not applied twice', async () => {
    const w = await world('abc');
    const [a, b] = w.sessions;
    const tap = w.taps[0];
    tap.drop((m) => m.type === 'reply' && tap.sent('edit').some((e) => e.id === m.re));
    type(a, 3, 'd');
    await until(b, 'change', () => b.text === 'abcd'); // the server applied it...
    w.clients[0].dropConnection(); // ...and the reply never reached a
    assert.equal(a.synchronized, false);
    type(a, 4, 'e');
    await converged(w.sessions);
    assert.equal(a.text, 'abcde');
    assert.equal(b.text, 'abcde');
    assert.deepEqual(await serverCopy(w), { text: 'abcde', revision: 2 }, 'each operation applied once');
  });

  test('a client far behind catches up from a snapshot', async () => {
    const own = await new PanesServer({ settings: { operationLogRetention: 1, operationLogRetentionMs: 0, snapshotEvery: 1 } }).start();
    try {
      const w = await world('x', ['alice', 'bob'], own);
      const [a, b] = w.sessions;
      w.taps[0].unreachable = true;
      w.clients[0].dropConnection();
      for (let i = 0; i < 5; i++) {
        type(b, [...b.text].length, String(i));
        await b.whenSaved();
      }
      w.taps[0].unreachable = false;
      w.clients[0].reconnectNow();
      await converged(w.sessions);
      assert.equal(a.text, 'x01234');
      const reopen = w.taps[0].received.filter((m) => m.type === 'reply' && m.result?.catchUp);
      assert.equal(reopen.at(-1)?.result.catchUp, 'snapshot');
    } finally {
      await own.dispose();
    }
  });

  test('a gap in the revisions re-opens and fills it', async () => {
    const w = await world('ab');
    const [a, b] = w.sessions;
    const stop = w.taps[0].drop((m) => m.type === 'documentOperation' && m.revision === 1);
    type(b, 2, 'c');
    await b.whenSaved();
    // b's acknowledgement and a's copy of the operation go out on different sockets, in no set
    // order: let frames through again only once a's copy has arrived (and been dropped).
    const droppedForA = () =>
      w.taps[0].sockets.some((s) => s.dropped.some((m) => m.type === 'documentOperation' && m.revision === 1));
    while (!droppedForA()) await new Promise((resolve) => setTimeout(resolve, 5));
    stop();
    type(b, 3, 'd');
    await converged(w.sessions);
    assert.equal(a.text, 'abcd');
    assert.equal(a.revision, 2);
    assert.ok(w.taps[0].sent('openDocument').some((m) => m.revision === 0), 're-opened at the revision it had');
  });
});

describe('presence', { timeout: 30_000 }, () => {
  test("other people's selections move with the edits, and this scene's presence waits for the ack", async () => {
    const w = await world('hello world');
    const [a, b] = w.sessions;
    const bScene = w.clients[1].scene ?? '';
    const aScene = w.clients[0].scene ?? '';
    b.setSelection({ anchor: 6, head: 11 }); // "world"
    await until(a, 'presence', () => a.remote.get(bScene)?.selection?.head === 11);
    assert.deepEqual(a.remote.get(bScene)?.selection, { anchor: 6, head: 11 });
    assert.equal(a.remote.get(bScene)?.name, 'bob');
    assert.ok(a.participants().some((p) => p.scene === bScene));
    type(a, 0, '>> '); // a's own edit moves b's selection
    assert.deepEqual(a.remote.get(bScene)?.selection, { anchor: 9, head: 14 });
    a.setSelection({ anchor: 3, head: 3 });
    await until(b, 'presence', () => b.remote.get(aScene)?.selection?.head === 3);
    const presences = w.taps[0].sent('setPresence');
    assert.equal(presences.at(-1).revision, 1, 'sent at the acknowledged revision');
    assert.equal(b.text, '>> hello world');
  });

  test("a scene's presence payload reaches the others, is kept through later presence, and the summary merges windows per person", async () => {
    const w = await world('hello', ['alice', 'bob', 'bob']);
    const [a, b, b2] = w.sessions;
    const bScene = w.clients[1].scene ?? '';
    await b.setPresenceData({ typing: true });
    await until(a, 'presence', () => a.remote.get(bScene)?.data !== null && a.remote.get(bScene)?.data !== undefined);
    assert.deepEqual(a.remote.get(bScene)?.data, { typing: true });
    b.setSelection({ anchor: 1, head: 2 });
    await until(a, 'presence', () => a.remote.get(bScene)?.selection?.head === 2);
    assert.deepEqual(a.remote.get(bScene)?.data, { typing: true }, 'still there');
    await assert.rejects(b.setPresenceData('x'.repeat(5000)), { code: 'too_large' });
    // Bob has it open in two windows: one person in `people`.
    const summary = (await w.clients[0].request('openDocument', { document: a.id })).document;
    // (In the order each person first opened it: the windows here opened at once, so sorted.)
    const people = (summary.people ?? []).map((p) => [p.user, p.windows]).sort();
    assert.deepEqual(people, [['alice', 1], ['bob', 2]]);
    assert.ok(b2);
  });

  test('a presence made at an older revision is moved through the operations since', async () => {
    const w = await world('abcdef');
    const [a] = w.sessions;
    type(a, 0, '123');
    await a.whenSaved(); // revision 1
    // The server sends presence at its current revision; an older one is handed in by hand.
    w.taps[0].last.inject({ type: 'presence', document: a.id, revision: 0, scene: 'scn_elsewhere', user: 'bob', name: 'bob', color: '#f00', selection: { anchor: 2, head: 4 } });
    assert.deepEqual(a.remote.get('scn_elsewhere')?.selection, { anchor: 5, head: 7 });
  });

  test('closing the document makes the presence leave for the others', async () => {
    const w = await world('abc');
    const [a, b] = w.sessions;
    const bScene = w.clients[1].scene ?? '';
    b.setSelection({ anchor: 1, head: 1 });
    await until(a, 'presence', () => a.remote.has(bScene));
    b.close();
    await until(a, 'presence', () => !a.remote.has(bScene));
  });
});

describe('DocumentList', { timeout: 20_000 }, () => {
  test('lists, follows creations, renames and deletions', async () => {
    const workspace = freshWorkspace();
    const client = clientOf(server, { workspace });
    await client.start();
    await client.createDocument('One');
    const list = new DocumentList(client).start();
    const changes = [];
    list.on('change', (c) => changes.push(c.change));
    await next(list, 'change');
    assert.equal(list.supported, true);
    assert.deepEqual(list.sorted().map((d) => d.title), ['One']);
    const other = clientOf(server, { workspace, auth: { name: 'bob' } });
    await other.start();
    const two = await other.createDocument('two');
    await until(list, 'change', () => list.documents.has(two.id));
    await other.renameDocument(two.id, 'Two (final)');
    await until(list, 'change', () => list.documents.get(two.id)?.title === 'Two (final)');
    assert.deepEqual(list.sorted().map((d) => d.title), ['One', 'Two (final)']);
    await other.deleteDocument(two.id);
    await until(list, 'change', () => !list.documents.has(two.id));
    assert.deepEqual(changes, ['reset', 'created', 'renamed', 'deleted']);
    list.stop();
  });

  test('an open document that is deleted says so', async () => {
    const w = await world('abc');
    const [a] = w.sessions;
    const deleted = next(a, 'deleted');
    await w.clients[1].deleteDocument(w.id);
    await deleted;
    assert.equal(a.status, 'deleted');
    assert.equal(a.gone, true);
    await assert.rejects(w.clients[0].openDocument(w.id), (e) => e.code === 'document_not_found');
  });
});

describe('DocumentSession under random edits, emoji and dropped connections', { timeout: 60_000 }, () => {
  for (const seed of [1, 2, 3, 4]) {
    test(`three windows converge (seed ${seed})`, async () => {
      const { next: random } = seededRandom(seed);
      const w = await world('start 😀 here', ['alice', 'bob', 'carol']);
      const pieces = ['a', 'bc', '😀', 'é', '🎉x', ' '];
      for (let step = 0; step < 80; step++) {
        const i = Math.floor(random() * w.sessions.length);
        const session = w.sessions[i];
        const length = [...session.text].length;
        const at = Math.floor(random() * (length + 1));
        if (random() < 0.3 && length > 0) {
          const from = Math.min(at, length - 1);
          const count = Math.min(1 + Math.floor(random() * 3), length - from);
          session.applyLocal([from, -count, length - from - count].filter((c) => c !== 0));
        } else {
          type(session, at, pieces[Math.floor(random() * pieces.length)]);
        }
        if (random() < 0.05) w.clients[Math.floor(random() * 3)].dropConnection();
        if (random() < 0.3) await w.clients[i].ping().catch(() => {}); // let the server's frames in
      }
      await Promise.all(w.clients.map((c) => connected(c)));
      await converged(w.sessions);
      const copy = await serverCopy(w);
      for (const session of w.sessions) {
        assert.equal(session.text, copy.text);
        assert.equal(session.revision, copy.revision);
      }
    });
  }
});
