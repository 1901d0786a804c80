// Tests for web/lib/documents.js: a DocumentSession against the fake server (which transforms
// operations as the real one does): edits and acknowledgements, concurrent editors converging
// (also outside the Basic Multilingual Plane), edits made offline sent once back without
// duplicates, catch-up by operations and by snapshot, and presence moved through edits.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DocumentList, DocumentSession } from '../../web/lib/documents.js';
import { PanesClient } from '../../web/lib/panes-client.js';
import { FakeClock, FakeNetwork } from './fake-server.mjs';

function makeClient(network, name) {
  const client = new PanesClient({
    url: 'ws://test/ws',
    auth: { name },
    createSocket: network.createSocket,
    timers: network.clock,
    random: () => 0.5,
    heartbeatMs: 0,
    backoff: { baseMs: 10 },
  });
  client.start();
  return client;
}

async function world(text = 'hello', names = ['alice', 'bob']) {
  const clock = new FakeClock();
  const network = new FakeNetwork(clock);
  const doc = network.server.createDocumentNow('Plan', text);
  const clients = names.map((name) => makeClient(network, name));
  await clock.advance(10);
  const sessions = clients.map((client, i) => new DocumentSession(client, doc.id, { name: names[i], color: '#3b82f6' }));
  const opened = sessions.map((s) => s.open());
  await clock.advance(10);
  await Promise.all(opened);
  return { clock, network, server: network.server, doc, clients, sessions };
}

/** Types `text` at code-point `at`, as a binding would. */
function type(session, at, text) {
  const length = [...session.text].length;
  session.applyLocal([at, text, length - at].filter((c) => c !== 0));
}

describe('DocumentSession', () => {
  test('opens with the text and revision, sends edits with op ids, and is acknowledged', async () => {
    const { clock, server, doc, sessions } = await world('hello');
    const [a] = sessions;
    assert.equal(a.text, 'hello');
    assert.equal(a.revision, 0);
    type(a, 5, ' world');
    assert.equal(a.text, 'hello world');
    assert.equal(a.synchronized, false);
    await clock.advance(10);
    assert.equal(a.synchronized, true);
    assert.equal(a.revision, 1);
    assert.equal(doc.text, 'hello world');
    const edit = server.requests.find((m) => m.type === 'edit');
    assert.deepEqual(edit.operation, [5, ' world']);
    assert.match(edit.opId, /:1$/);
  });

  test('concurrent edits from two windows converge, emoji included', async () => {
    const { clock, doc, sessions } = await world('a😀b');
    const [a, b] = sessions;
    type(a, 1, 'X'); // after "a"
    type(a, 4, '!'); // buffered while the first is in flight
    type(b, 2, '🎉'); // after the emoji
    type(b, 0, '>');
    await clock.advance(50);
    assert.equal(a.text, b.text);
    assert.equal(a.text, doc.text);
    assert.equal(doc.text, '>aX😀🎉b!');
    assert.equal(a.revision, b.revision);
  });

  test('edits made offline are kept and sent once back, and the text converges', async () => {
    const { clock, network, doc, sessions } = await world('abc');
    const [a, b] = sessions;
    network.reachable = false;
    network.cut();
    await clock.advance(2);
    type(a, 3, ' offline');
    type(b, 0, 'online? ');
    assert.equal(a.text, 'abc offline');
    network.reachable = true;
    await clock.advance(500);
    assert.equal(doc.text, 'online? abc offline');
    assert.equal(a.text, doc.text);
    assert.equal(b.text, doc.text);
    assert.equal(a.synchronized && b.synchronized, true);
  });

  test('an edit the server applied but whose reply was lost is recognised, not applied twice', async () => {
    const { clock, network, server, doc, sessions } = await world('abc');
    const [a, b] = sessions;
    type(a, 3, 'd');
    await clock.advance(1); // the edit reaches the server...
    await clock.advance(1);
    assert.equal(doc.text, 'abcd');
    network.sockets[0].drop(1006); // ...but the connection drops before the reply arrives
    await clock.advance(2);
    type(a, 4, 'e');
    await clock.advance(500);
    assert.equal(doc.text, 'abcde');
    assert.equal(a.text, 'abcde');
    assert.equal(b.text, 'abcde');
    const edits = server.requests.filter((m) => m.type === 'edit').map((m) => m.opId);
    assert.equal(new Set(edits).size, 2, `each operation applied once: ${edits}`);
  });

  test('a client far behind catches up from a snapshot', async () => {
    const { clock, network, server, doc, sessions } = await world('x');
    const [a, b] = sessions;
    server.logRetention = 2;
    network.sockets[0].drop(1006); // a is offline, b types a lot
    for (let i = 0; i < 5; i++) {
      type(b, [...b.text].length, String(i));
      await clock.advance(5);
    }
    await clock.advance(500);
    assert.equal(a.text, doc.text);
    assert.equal(doc.text, 'x01234');
  });

  test('other people\'s selections move with the edits, and this scene\'s presence waits for the ack', async () => {
    const { clock, server, sessions } = await world('hello world');
    const [a, b] = sessions;
    b.setSelection({ anchor: 6, head: 11 }); // "world"
    await clock.advance(50);
    const seen = a.remote.get(b.client.scene);
    assert.deepEqual(seen.selection, { anchor: 6, head: 11 });
    assert.equal(seen.name, 'bob');
    type(a, 0, '>> '); // a's own edit moves b's selection
    assert.deepEqual(a.remote.get(b.client.scene).selection, { anchor: 9, head: 14 });
    a.setSelection({ anchor: 3, head: 3 });
    await clock.advance(50);
    const presences = server.requests.filter((m) => m.type === 'setPresence' && m.name === 'alice');
    assert.equal(presences.at(-1).revision, 1, 'sent at the acknowledged revision');
    assert.deepEqual(b.remote.get(a.client.scene).selection, { anchor: 3, head: 3 });
    // b's view of its own text moved too:
    assert.equal(b.text, '>> hello world');
  });

  test('a presence sent at an older revision is moved through the operations since', async () => {
    const { clock, network, sessions } = await world('abcdef');
    const [a, b] = sessions;
    type(a, 0, '123'); // revision 1 on the server
    await clock.advance(20);
    // A presence from b's scene at revision 0, selecting "cd":
    network.sockets[0].deliver({ type: 'presence', document: a.id, revision: 0, scene: b.client.scene, user: 'bob', name: 'bob', color: '#f00', selection: { anchor: 2, head: 4 } });
    await clock.advance(5);
    assert.deepEqual(a.remote.get(b.client.scene).selection, { anchor: 5, head: 7 });
  });

  test('a gap in the revisions re-opens and fills it', async () => {
    const { clock, network, server, doc, sessions } = await world('ab');
    const [a, b] = sessions;
    // Apply an edit on the server that a never hears about, then one it does.
    server.mute = false;
    const aConnection = [...server.connections].find((c) => c.scene === a.client.scene);
    aConnection.open.delete(doc.id); // a misses the next operation
    type(b, 2, 'c');
    await clock.advance(10);
    aConnection.open.add(doc.id);
    type(b, 3, 'd');
    await clock.advance(30);
    assert.equal(a.text, 'abcd');
    assert.equal(a.revision, 2);
    assert.ok(network.server.requests.some((m) => m.type === 'openDocument' && m.revision === 0));
  });
});

describe('DocumentList', () => {
  test('lists, follows creations, and reports a server without documents', async () => {
    const clock = new FakeClock();
    const network = new FakeNetwork(clock);
    network.server.createDocumentNow('One');
    const client = makeClient(network, 'alice');
    const list = new DocumentList(client).start();
    const changes = [];
    list.on('change', (c) => changes.push(c.change));
    await clock.advance(10);
    assert.deepEqual(list.sorted().map((d) => d.title), ['One']);
    const created = client.request('createDocument', { title: 'Two' });
    await clock.advance(10);
    assert.equal((await created).document.title, 'Two');
    assert.deepEqual(changes, ['reset', 'created']);
    assert.equal(list.documents.size, 2);

    const other = new FakeNetwork(new FakeClock());
    other.server.unknown.add('observeDocuments');
    const bare = makeClient(other, 'bob');
    const bareList = new DocumentList(bare).start();
    await other.clock.advance(10);
    assert.equal(bareList.supported, false);
  });
});

describe('DocumentSession under random edits, emoji and dropped connections', () => {
  /** A small deterministic random generator, so a failure can be replayed from its seed. */
  function random(seed) {
    let state = seed >>> 0;
    return () => {
      state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
      return state / 2 ** 32;
    };
  }

  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    test(`three windows converge (seed ${seed})`, async () => {
      const rand = random(seed);
      const { clock, network, doc, sessions } = await world('start 😀 here', ['alice', 'bob', 'carol']);
      const pieces = ['a', 'bc', '😀', 'é', '🎉x', ' '];
      for (let step = 0; step < 120; step++) {
        const session = sessions[Math.floor(rand() * sessions.length)];
        const length = [...session.text].length;
        const at = Math.floor(rand() * (length + 1));
        if (rand() < 0.3 && length > 0) {
          const count = Math.min(1 + Math.floor(rand() * 3), length - Math.min(at, length - 1));
          const from = Math.min(at, length - 1);
          session.applyLocal([from, -count, length - from - count].filter((c) => c !== 0));
        } else {
          type(session, at, pieces[Math.floor(rand() * pieces.length)]);
        }
        if (rand() < 0.05) {
          const socket = network.sockets.filter((s) => !s.closed)[Math.floor(rand() * 3)];
          socket?.drop(1006);
        }
        await clock.advance(Math.floor(rand() * 4));
      }
      await clock.advance(5000);
      for (const session of sessions) {
        assert.equal(session.text, doc.text);
        assert.equal(session.synchronized, true);
        assert.equal(session.revision, doc.revision);
      }
    });
  }
});
