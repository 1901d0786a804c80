// Issue 25 against the real server: unsent edits are never discarded (a catch-up past the kept
// log rebases them over the difference, text-diff.js), they survive the page (the pending
// store, shared here by two client objects as a reloaded page shares IndexedDB), and undo and
// redo take back a window's own edits only. Plus the diff itself, checked against a brute-force
// edit distance.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { DocumentSession, MemoryPendingStore, diffOperation, ot } from '../../web/panes-client.js';
import { clientOf, closeAll, connected, converged, freshWorkspace, MemoryStorage, until } from './support/helpers.mjs';
import { seededRandom } from './support/seeded-random.mjs';
import { PanesServer } from './support/server.mjs';
import { Tap } from './support/tap.mjs';

/** A server whose log keeps only a few operations, by count: catch-ups past it are by snapshot. */
let server;
before(async () => {
  server = await new PanesServer({
    settings: { operationLogRetention: 5, operationLogRetentionMs: 0, snapshotEvery: 5, rateLimitPerSecond: 100000, rateLimitBurst: 100000 },
  }).start();
});
after(() => server.dispose());
afterEach(() => closeAll());

/** One window: a client with a tap, its session storage and pending store (a browser tab's). */
async function windowOf(workspace, name, { storage = new MemoryStorage(), pendingStore = new MemoryPendingStore(), on = server } = {}) {
  const tap = new Tap();
  const client = clientOf(on, { workspace, auth: { name }, createSocket: tap.createSocket, storage, pendingStore });
  await client.start();
  return { client, tap, storage, pendingStore, name };
}

const length = (text) => [...text].length;
/** Types `text` at code point `at`. */
function type(session, at, text) {
  const n = length(session.text);
  session.applyLocal([at, text, n - at].filter((c) => c !== 0));
}
function erase(session, at, count) {
  const n = length(session.text);
  session.applyLocal([at, -count, n - at - count].filter((c) => c !== 0));
}
function offline(w) {
  w.tap.unreachable = true;
  w.client.dropConnection();
}
function online(w) {
  w.tap.unreachable = false;
  w.client.reconnectNow();
}
/** What a newcomer reads from the server. */
async function serverText(workspace, id, on = server) {
  const reader = clientOf(on, { workspace, auth: { name: 'reader' } });
  await reader.start();
  const session = await reader.openDocument(id);
  const text = session.text;
  reader.close();
  return text;
}
/**
 * Makes `count` edits, each appending `x`, through one client's raw requests: `batch` at a
 * time, all made on the same revision (the server transforms them past each other; keep
 * `batch` within the kept log).
 */
let bulk = 0;
async function manyEdits(client, id, start, count, batch = 1) {
  let revision = start.revision;
  let size = length(start.text);
  for (let done = 0; done < count; ) {
    const requests = [];
    const n = Math.min(batch, count - done);
    for (let i = 0; i < n; i++) {
      requests.push(client.request('edit', { document: id, revision, operation: [size, 'x'], opId: `bulk${process.pid}:${++bulk}` }));
    }
    const replies = await Promise.all(requests);
    done += n;
    size += n;
    revision = Math.max(...replies.map((r) => r.revision));
  }
  return revision;
}
const occurrences = (text, piece) => text.split(piece).length - 1;

describe('text-diff', () => {
  test('is exact and as small as the edit distance (random texts, emoji included)', () => {
    const { next: random } = seededRandom(7);
    const alphabet = ['a', 'b', ' ', '\n', '😀', 'é'];
    const text = (n) => Array.from({ length: n }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
    const distance = (a, b) => {
      const x = [...a];
      const y = [...b];
      let row = Array.from({ length: y.length + 1 }, (_, j) => j);
      for (let i = 1; i <= x.length; i++) {
        const next = [i];
        for (let j = 1; j <= y.length; j++) next[j] = x[i - 1] === y[j - 1] ? row[j - 1] : 1 + Math.min(row[j], next[j - 1]);
        row = next;
      }
      return row[y.length];
    };
    const cost = (op) => op.reduce((n, c) => n + (typeof c === 'string' ? length(c) : c < 0 ? -c : 0), 0);
    for (let i = 0; i < 1500; i++) {
      const a = text(Math.floor(random() * 30));
      const b = random() < 0.5 ? text(Math.floor(random() * 30)) : a.slice(0, Math.floor(random() * a.length)) + text(3) + a.slice(Math.floor(random() * a.length));
      const op = diffOperation(a, b);
      assert.equal(ot.apply(a, op), b, JSON.stringify({ a, b, op }));
      // Minimal within a line; across lines the first pass may pick a larger (still exact) one.
      if (!a.includes('\n') && !b.includes('\n')) assert.equal(cost(op), distance(a, b), JSON.stringify({ a, b, op }));
    }
  });

  test('keeps edits far apart as separate changes, not one replaced span', () => {
    const base = Array.from({ length: 2000 }, (_, i) => `line ${i} of the text`).join('\n');
    const edited = base.replace('line 10 ', 'line 10 A').replace('line 1990 ', 'line 1990 B');
    const op = diffOperation(base, edited);
    assert.equal(ot.apply(base, op), edited);
    assert.deepEqual(op.filter((c) => typeof c !== 'number' || c < 0), ['A', 'B']);
  });

  test('a rebase over the difference equals the exact catch-up where the histories touch different characters', () => {
    const { next: random } = seededRandom(9);
    const letters = 'abcdefgh \n';
    const text = (n) => Array.from({ length: n }, () => letters[Math.floor(random() * letters.length)]).join('');
    /** An edit inside [from, to) of `t` (code points), as an operation on `t`. */
    const editWithin = (t, from, to) => {
      const n = length(t);
      const at = from + Math.floor(random() * Math.max(1, to - from));
      if (random() < 0.6 || at >= to) return [at, text(1 + Math.floor(random() * 3)), n - at].filter((c) => c !== 0);
      const count = Math.min(1 + Math.floor(random() * 3), to - at);
      return [at, -count, n - at - count].filter((c) => c !== 0);
    };
    for (let round = 0; round < 300; round++) {
      // The server's history edits the first half, the window's unsent edits the second; a
      // fixed marker between them is never touched.
      const left = text(20 + Math.floor(random() * 40));
      const right = text(20 + Math.floor(random() * 40));
      const base = `${left}|${right}`;
      let server = base;
      const history = [];
      for (let i = 0; i < 1 + Math.floor(random() * 8); i++) {
        const op = editWithin(server, 0, server.indexOf('|'));
        history.push(op);
        server = ot.apply(server, op);
      }
      let local = base;
      let pending = null;
      for (let i = 0; i < 1 + Math.floor(random() * 5); i++) {
        const op = editWithin(local, [...local].indexOf('|') + 1, length(local));
        pending = pending ? ot.compose(pending, op) : op;
        local = ot.apply(local, op);
      }
      let exact = pending;
      for (const op of history) exact = ot.transform(exact, op)[0];
      const [byDifference] = ot.transform(pending, diffOperation(base, server));
      assert.equal(ot.apply(server, byDifference), ot.apply(server, exact), JSON.stringify({ base, history, pending }));
    }
  });

  test('a spent budget still gives an exact operation', () => {
    const op = diffOperation('abcdefgh'.repeat(50), 'hgfedcba'.repeat(50), { budget: 10 });
    assert.equal(ot.apply('abcdefgh'.repeat(50), op), 'hgfedcba'.repeat(50));
  });
});

describe('unsent edits are never discarded', { timeout: 120_000 }, () => {
  test('a window offline while another makes 10,000 edits gets its edits in, exactly once', async () => {
    // A log of 600 by count: the 10,000 go in batches of 500 made on one revision.
    const own = await new PanesServer({
      settings: { operationLogRetention: 600, operationLogRetentionMs: 0, snapshotEvery: 600, rateLimitPerSecond: 100000, rateLimitBurst: 100000 },
    }).start();
    try {
      await tenThousand(own);
    } finally {
      await own.dispose();
    }
  });

  async function tenThousand(on) {
    const workspace = freshWorkspace();
    const [a, b] = [await windowOf(workspace, 'alice', { on }), await windowOf(workspace, 'bob', { on })];
    const summary = await a.client.createDocument('Plan', { text: 'intro\n' });
    const mine = await new DocumentSession(a.client, summary.id).open();
    const theirs = await new DocumentSession(b.client, summary.id).open();
    offline(a);
    type(mine, 0, 'OFFLINE ');
    type(mine, length(mine.text), ' END');
    const revision = await manyEdits(b.client, summary.id, { revision: theirs.revision, text: theirs.text }, 10_000, 500);
    assert.equal(revision, 10_000);
    online(a);
    await connected(a.client);
    await until(mine, 'saved', () => mine.synchronized && mine.revision >= 10_001);
    const reopened = a.tap.received.filter((m) => m.type === 'reply' && m.result?.catchUp);
    assert.equal(reopened.at(-1).result.catchUp, 'snapshot', 'the log did not reach back: caught up by difference');
    const text = await serverText(workspace, summary.id, on);
    // As an exact catch-up would: at the same place, the edit the server had not applied goes first.
    assert.equal(text, `OFFLINE intro\n END${'x'.repeat(10_000)}`);
    assert.equal(mine.text, text);
    assert.equal(occurrences(text, 'OFFLINE'), 1);
  }

  test('an edit applied whose reply was lost is not applied again after a catch-up past the log', async () => {
    const workspace = freshWorkspace();
    const [a, b] = [await windowOf(workspace, 'alice'), await windowOf(workspace, 'bob')];
    const summary = await a.client.createDocument('Plan', { text: 'abc' });
    const mine = await new DocumentSession(a.client, summary.id).open();
    const theirs = await new DocumentSession(b.client, summary.id).open();
    const stop = a.tap.drop((m) => m.type === 'reply' && a.tap.sent('edit').some((e) => e.id === m.re));
    type(mine, 3, 'D');
    await until(theirs, 'change', () => theirs.text === 'abcD'); // applied; the reply never arrives
    offline(a);
    stop();
    type(mine, 4, 'E'); // buffered behind it
    await manyEdits(b.client, summary.id, { revision: theirs.revision, text: theirs.text }, 3); // 3 < 5: the log has D
    await manyEdits(b.client, summary.id, { revision: theirs.revision + 3, text: theirs.text + 'xxx' }, 12); // now it does not
    online(a);
    await until(mine, 'saved', () => mine.synchronized);
    const text = await serverText(workspace, summary.id);
    assert.equal(occurrences(text, 'D'), 1, text);
    assert.equal(occurrences(text, 'E'), 1, text);
    assert.equal(mine.text, text);
    const reopen = a.tap.sent('openDocument').at(-1);
    assert.ok(reopen.pending?.length >= 1, 'the re-open names the unacknowledged op ids');
  });
});

describe('unsent edits survive the page', { timeout: 60_000 }, () => {
  test('a reloaded window sends what it kept once; a duplicated tab sends nothing of it', async () => {
    const workspace = freshWorkspace();
    const pendingStore = new MemoryPendingStore(); // the browser's IndexedDB, shared by the tabs
    const first = await windowOf(workspace, 'alice', { pendingStore });
    const summary = await first.client.createDocument('Plan', { text: 'hello' });
    const doc = await new DocumentSession(first.client, summary.id).open();
    offline(first);
    type(doc, 5, ' world');
    type(doc, 0, '> ');
    const session = first.client.session.persistentIdentifier;
    assert.ok(await pendingStore.load({ session, document: summary.id }), 'kept before applyLocal returned');
    first.client.close(); // the page goes away without a word
    // Others write meanwhile, past the kept log.
    const other = await windowOf(workspace, 'bob');
    const theirs = await new DocumentSession(other.client, summary.id).open();
    await manyEdits(other.client, summary.id, { revision: theirs.revision, text: theirs.text }, 20);
    // The reload: the same sessionStorage and IndexedDB.
    const reloaded = await windowOf(workspace, 'alice', { storage: first.storage, pendingStore });
    assert.equal(reloaded.client.session.persistentIdentifier, session, 'resumed, not forked');
    const again = await new DocumentSession(reloaded.client, summary.id).open();
    await again.whenSaved();
    // As an exact catch-up would: at the same place, the edit the server had not applied goes first.
    assert.equal(again.text, `> hello world${'x'.repeat(20)}`);
    const text = await serverText(workspace, summary.id);
    assert.equal(text, again.text);
    assert.equal(occurrences(text, 'world'), 1);
    assert.equal(await pendingStore.load({ session, document: summary.id }).then((r) => r?.pending.length ?? 0), 0);
    // A duplicated tab: a copy of the sessionStorage while the original is live gets a fork.
    const duplicate = await windowOf(workspace, 'alice', { storage: reloaded.storage.copy(), pendingStore });
    assert.notEqual(duplicate.client.session.persistentIdentifier, session);
    await new DocumentSession(duplicate.client, summary.id).open();
    assert.deepEqual(duplicate.tap.sent('edit'), []);
    assert.equal(await serverText(workspace, summary.id), text);
  });

  test('a tab duplicated while its original was offline: whichever resumes sends the edits, once', async () => {
    const workspace = freshWorkspace();
    const pendingStore = new MemoryPendingStore();
    const original = await windowOf(workspace, 'alice', { pendingStore });
    const summary = await original.client.createDocument('Plan', { text: 'base' });
    const doc = await new DocumentSession(original.client, summary.id).open();
    const session = original.client.session.persistentIdentifier;
    offline(original);
    type(doc, 4, ' typed');
    // The duplicate copies sessionStorage while the original cannot answer: it resumes the
    // session, finds what the original kept, and sends it.
    const duplicate = await windowOf(workspace, 'alice', { storage: original.storage.copy(), pendingStore });
    assert.equal(duplicate.client.session.persistentIdentifier, session);
    const copy = await new DocumentSession(duplicate.client, summary.id).open();
    await copy.whenSaved();
    assert.equal(copy.text, 'base typed');
    // The original comes back: its session is taken, so it gets another, and keeps its own
    // record under that one; its edit (same op id) is recognised, not applied again.
    online(original);
    await until(original.client, 'connect', () => original.client.session.persistentIdentifier !== session);
    await converged([doc, copy]);
    assert.equal(await serverText(workspace, summary.id), 'base typed');
    assert.equal(doc.text, 'base typed');
    const theirs = await pendingStore.load({ session, document: summary.id });
    assert.ok(!theirs || theirs.pending.length === 0, "the duplicate's record is not the original's to write");
  });

  test('the undo history survives a reload', async () => {
    const workspace = freshWorkspace();
    const pendingStore = new MemoryPendingStore();
    const first = await windowOf(workspace, 'alice', { pendingStore });
    const summary = await first.client.createDocument('Plan', { text: '' });
    const doc = await new DocumentSession(first.client, summary.id).open();
    for (const ch of 'alpha beta ') type(doc, length(doc.text), ch);
    await doc.whenSaved();
    first.client.close();
    const reloaded = await windowOf(workspace, 'alice', { storage: first.storage, pendingStore });
    const again = await new DocumentSession(reloaded.client, summary.id).open();
    assert.equal(again.canUndo, true);
    again.undo();
    assert.equal(again.text, 'alpha ');
    await again.whenSaved();
    assert.equal(await serverText(workspace, summary.id), 'alpha ');
  });
});

describe('undo and redo', { timeout: 60_000 }, () => {
  test("typing is grouped by word; undo takes back one's own words and leaves the others'", async () => {
    const workspace = freshWorkspace();
    const [a, b] = [await windowOf(workspace, 'alice'), await windowOf(workspace, 'bob')];
    const summary = await a.client.createDocument('Plan', { text: '' });
    const alice = await new DocumentSession(a.client, summary.id).open();
    const bob = await new DocumentSession(b.client, summary.id).open();
    const changes = [];
    alice.on('undoChange', (e) => changes.push(e));
    for (const ch of 'alpha beta ') type(alice, length(alice.text), ch);
    await converged([alice, bob]);
    type(bob, length(bob.text), 'BOB');
    await converged([alice, bob]);
    assert.equal(alice.text, 'alpha beta BOB');
    assert.ok(alice.undo());
    assert.equal(alice.text, 'alpha BOB');
    assert.ok(alice.undo());
    assert.equal(alice.text, 'BOB');
    assert.equal(alice.canUndo, false);
    assert.equal(alice.undo(), null, 'nothing left: nothing happens');
    await converged([alice, bob]);
    assert.equal(bob.text, 'BOB');
    assert.ok(alice.redo());
    assert.equal(alice.text, 'alpha BOB');
    assert.deepEqual(changes[0], { canUndo: true, canRedo: false });
    assert.ok(changes.some((e) => e.canRedo));
    // A paste and a deleted selection are steps of their own; a run of backspaces is one.
    type(alice, 0, 'PASTED ');
    erase(alice, 0, 2);
    for (let i = 0; i < 3; i++) erase(alice, length(alice.text) - 1, 1);
    assert.equal(alice.text, 'STED alpha ');
    alice.undo();
    assert.equal(alice.text, 'STED alpha BOB');
    alice.undo();
    assert.equal(alice.text, 'PASTED alpha BOB');
    alice.undo();
    assert.equal(alice.text, 'alpha BOB');
    await converged([alice, bob]);
  });

  for (const seed of [11, 12, 13]) {
    test(`several windows: undo never removes another's characters, and redo brings back one's own (seed ${seed})`, async () => {
      const { next: random } = seededRandom(seed);
      const workspace = freshWorkspace();
      const windows = [await windowOf(workspace, 'alice'), await windowOf(workspace, 'bob'), await windowOf(workspace, 'carol')];
      const summary = await windows[0].client.createDocument('Plan', { text: '' });
      const sessions = await Promise.all(windows.map((w) => new DocumentSession(w.client, summary.id).open()));
      // Each window types characters of its own alphabet (so every character says who typed it).
      const alphabets = ['abcdefghij', 'KLMNOPQRST', '0123456789'];
      for (let step = 0; step < 120; step++) {
        const i = Math.floor(random() * 3);
        const s = sessions[i];
        const at = Math.floor(random() * (length(s.text) + 1));
        type(s, at, alphabets[i][Math.floor(random() * 10)] + (random() < 0.2 ? ' ' : ''));
        if (random() < 0.3) await windows[i].client.ping();
      }
      await converged(sessions);
      const [alice] = sessions;
      const before = alice.text;
      const others = (text) => [...text].filter((c) => !alphabets[0].includes(c) && c !== ' ').sort().join('');
      const own = (text) => [...text].filter((c) => alphabets[0].includes(c)).sort().join('');
      // Others keep typing while alice undoes everything.
      let undone = 0;
      while (alice.canUndo) {
        alice.undo();
        undone++;
        if (random() < 0.3) type(sessions[1], Math.floor(random() * (length(sessions[1].text) + 1)), 'Z');
      }
      await converged(sessions);
      assert.ok(undone > 0);
      assert.equal(own(alice.text), '', 'all of her characters went');
      const afterUndo = alice.text;
      assert.equal(others(afterUndo).replace(/Z/g, ''), others(before), "nobody else's character went");
      while (alice.canRedo) alice.redo();
      await converged(sessions);
      assert.equal(own(alice.text), own(before), 'redo brings hers back');
      assert.equal(others(alice.text), others(afterUndo));
      assert.equal(await serverText(workspace, summary.id), alice.text);
    });
  }
});

describe('random histories: offline windows, reloads, catch-ups past the log', { timeout: 120_000 }, () => {
  for (const seed of [21, 22, 23, 24]) {
    test(`every acknowledged or unsent edit is in once, and everyone converges (seed ${seed})`, async () => {
      const { next: random } = seededRandom(seed);
      const workspace = freshWorkspace();
      const pendingStore = new MemoryPendingStore();
      const windows = [];
      for (const name of ['alice', 'bob', 'carol']) windows.push(await windowOf(workspace, name, { pendingStore }));
      const summary = await windows[0].client.createDocument('Plan', { text: '' });
      const sessions = await Promise.all(windows.map((w) => new DocumentSession(w.client, summary.id).open()));
      // Every insert is a character never used before; deletes are recorded by character.
      let code = 0x4e00;
      const inserted = new Set();
      const deleted = new Set();
      for (let step = 0; step < 150; step++) {
        const i = Math.floor(random() * 3);
        const w = windows[i];
        const s = sessions[i];
        const r = random();
        if (r < 0.6 || length(s.text) === 0) {
          const ch = String.fromCodePoint(code++);
          inserted.add(ch);
          type(s, Math.floor(random() * (length(s.text) + 1)), ch);
        } else if (r < 0.75) {
          const chars = [...s.text];
          const at = Math.floor(random() * chars.length);
          deleted.add(chars[at]);
          erase(s, at, 1);
        } else if (r < 0.85) {
          if (w.tap.unreachable) online(w);
          else offline(w);
        } else if (r < 0.9) {
          // A reload: the page goes (with whatever it had not sent) and comes back.
          w.client.close();
          const back = await windowOf(workspace, w.name, { storage: w.storage, pendingStore });
          windows[i] = back;
          sessions[i] = await new DocumentSession(back.client, summary.id).open();
        } else if (w.client.connected) {
          await w.client.request('ping', {}, { queue: false }).catch(() => {}); // lets the server's frames in
        }
      }
      for (const w of windows) if (w.tap.unreachable) online(w);
      const watchdog = process.env.DEBUG_UNSENT ? setTimeout(() => {
        for (const [i, s] of sessions.entries()) console.log(i, s.status, s.synchronized, s.revision, windows[i].client.status, JSON.stringify(windows[i].tap.received.slice(-3)), JSON.stringify(windows[i].tap.sent('openDocument').slice(-2)), JSON.stringify(windows[i].tap.sent('edit').slice(-2)));
      }, 15000) : null;
      await Promise.all(windows.map((w) => connected(w.client)));
      await converged(sessions);
      clearTimeout(watchdog);
      const text = await serverText(workspace, summary.id);
      for (const s of sessions) assert.equal(s.text, text);
      const expected = [...inserted].filter((c) => !deleted.has(c)).sort().join('');
      assert.equal([...text].sort().join(''), expected, 'each edit applied once: none lost, none doubled');
    });
  }
});
