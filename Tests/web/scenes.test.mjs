// Scenes and sessions against the real server (lib/scenes.js): lifecycle reports, the
// restoration activity and userInfo a resumed session gets back, the switcher list kept
// current across reconnects, and the window requests (activation, refresh).
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { MemoryStorage, Recorder, clientOf, closeAll, connected, freshWorkspace, next, until } from './support/helpers.mjs';
import { PanesServer } from './support/server.mjs';
import { Tap } from './support/tap.mjs';

/** @type {PanesServer} */
let server;
before(async () => {
  server = await new PanesServer().start();
});
after(() => server.dispose());
afterEach(() => closeAll());

describe('lifecycle', { timeout: 20_000 }, () => {
  test('reports send only the latest state, one at a time', async () => {
    const tap = new Tap();
    const client = clientOf(server, { workspace: freshWorkspace(), createSocket: tap.createSocket });
    await client.start();
    client.setLifecycle({ visible: true, focused: false });
    client.setLifecycle({ visible: false, focused: false });
    client.setLifecycle({ visible: true, focused: true });
    client.setLifecycle({ visible: true, focused: true });
    await client.ping(); // the first report's reply came before this one, and sent the second
    await client.ping();
    assert.deepEqual(tap.sent('lifecycle').map((m) => [m.visible, m.focused]), [[true, false], [true, true]]);
  });

  test('the connect message carries the state reported while disconnected', async () => {
    const tap = new Tap();
    const client = clientOf(server, { workspace: freshWorkspace(), createSocket: tap.createSocket });
    await client.start();
    tap.unreachable = true;
    client.dropConnection();
    client.setLifecycle({ visible: false, focused: false });
    tap.unreachable = false;
    client.reconnectNow();
    await connected(client);
    assert.deepEqual(tap.sent('connect').at(-1).state, { visible: false, focused: false });
    assert.equal(tap.sent('lifecycle').length, 0);
  });

  test('the switcher shows the state the server derived', async () => {
    const workspace = freshWorkspace();
    const watcher = clientOf(server, { workspace });
    await watcher.start();
    const hidden = clientOf(server, { workspace, lifecycle: { visible: false, focused: false } });
    const { session } = await hidden.start();
    const { sessions } = await watcher.listSessions();
    assert.equal(sessions.find((s) => s.persistentIdentifier === session.persistentIdentifier)?.state, 'background');
  });
});

describe('traits', { timeout: 20_000 }, () => {
  test('setTraits sends only changes, only the latest, one at a time, and the switcher sees them', async () => {
    const workspace = freshWorkspace();
    const tap = new Tap();
    const client = clientOf(server, { workspace, createSocket: tap.createSocket, traits: { width: 'regular', pointer: 'fine' } });
    const watcher = clientOf(server, { workspace });
    await client.start();
    await watcher.start();
    const lists = new Recorder();
    watcher.watchSessions(lists.add);
    const changes = new Recorder();
    client.on('traitsChanged', changes.add);

    client.setTraits({ width: 'regular' }); // what the server has: nothing to send
    client.setTraits({ width: 'compact' }); // sent at once
    client.setTraits({ pointer: 'coarse' }); // waits for the first answer…
    client.setTraits({ pointer: 'fine' }); // …and is replaced by this, which the first answer already says
    await changes.atLeast(1);
    await client.ping(); // after the first answer: anything still to report has been sent
    assert.deepEqual(tap.sent('updateTraits').map((m) => m.traits), [{ width: 'compact', pointer: 'fine' }]);

    client.setTraits({ pointer: 'coarse' });
    client.setTraits({ pointer: 'coarse' });
    await changes.atLeast(2);
    await client.ping();
    assert.deepEqual(tap.sent('updateTraits').map((m) => m.traits), [
      { width: 'compact', pointer: 'fine' },
      { width: 'compact', pointer: 'coarse' },
    ]);
    assert.deepEqual(changes.items, [
      { traits: { width: 'compact', pointer: 'fine' }, previous: { width: 'regular', pointer: 'fine' } },
      { traits: { width: 'compact', pointer: 'coarse' }, previous: { width: 'compact', pointer: 'fine' } },
    ]);
    assert.deepEqual(client.traits, { width: 'compact', pointer: 'coarse' });

    // Another window of the user sees the scene's new traits in the switcher's list.
    const own = client.session?.persistentIdentifier;
    const seen = () => lists.items.at(-1)?.sessions.find((/** @type {any} */ s) => s.persistentIdentifier === own)?.traits;
    await until(watcher, 'sessionsChanged', () => seen()?.pointer === 'coarse');
    assert.deepEqual(seen(), { width: 'compact', pointer: 'coarse' });
  });

  test('traits set while disconnected apply at once and the next connect carries them', async () => {
    const tap = new Tap();
    const client = clientOf(server, { workspace: freshWorkspace(), createSocket: tap.createSocket });
    await client.start();
    tap.unreachable = true;
    client.dropConnection();
    const change = next(client, 'traitsChanged');
    client.setTraits({ width: 'compact' });
    assert.deepEqual((await change).traits, { width: 'compact', pointer: 'fine' });
    tap.unreachable = false;
    client.reconnectNow();
    await connected(client);
    assert.deepEqual(tap.sent('connect').at(-1).traits, { width: 'compact', pointer: 'fine' });
    assert.deepEqual(client.connectResult?.traits, { width: 'compact', pointer: 'fine' });
    assert.equal(tap.sent('updateTraits').length, 0);
  });
});

describe('sessions', { timeout: 20_000 }, () => {
  test('a resumed session gets its restoration activity and userInfo back', async () => {
    const workspace = freshWorkspace();
    const storage = new MemoryStorage();
    const first = clientOf(server, { workspace, storage });
    await first.start();
    // A document that exists: one that does not is answered `document_gone` instead.
    const { document } = await first.request('createDocument', { title: 'Plan' });
    const activity = { activityType: 'panes.document', title: 'Plan', userInfo: { scroll: 340 }, targetContentIdentifier: document.id };
    const saved = await first.updateActivity(activity);
    assert.equal(typeof saved.savedAt, 'number');
    await first.setUserInfo({ sidebar: false, color: 'red' });
    assert.deepEqual((await first.setUserInfo({ color: null }, { merge: true })).userInfo, { sidebar: false });
    first.close();
    const again = clientOf(server, { workspace, storage });
    const result = await again.start();
    assert.equal(result.restoration.status, 'restored');
    assert.deepEqual(result.session.stateRestorationActivity, activity);
    assert.deepEqual(result.session.userInfo, { sidebar: false });
  });

  test('watchSessions gives the list now, on every change, and again after a reconnect', async () => {
    const workspace = freshWorkspace();
    const client = clientOf(server, { workspace });
    await client.start();
    const lists = new Recorder();
    const watch = client.watchSessions(lists.add);
    assert.equal((await lists.atLeast(1))[0].sessions.length, 1);
    const other = clientOf(server, { workspace });
    const { session } = await other.start();
    const withOther = await lists.atLeast(2);
    assert.ok(withOther.at(-1).sessions.some((s) => s.persistentIdentifier === session.persistentIdentifier));
    const count = lists.items.length;
    client.dropConnection();
    await lists.atLeast(count + 1);
    assert.equal(lists.items.at(-1).sessions.length, 2);
    watch.stop();
  });

  test('users whose names differ only in their bytes (NFC and NFD) are two users', async () => {
    // `josé` composed and decomposed: the same text to a Swift String, two users to Panes.
    const workspace = freshWorkspace();
    const composed = clientOf(server, { workspace, auth: { name: 'jos\u00e9' } });
    const decomposed = clientOf(server, { workspace, auth: { name: 'jose\u0301' } });
    const mine = await composed.start();
    await composed.setPreference('editor.fontSize', 21);
    const theirs = await decomposed.start();
    assert.equal(mine.user.id, 'jos\u00e9');
    assert.equal(theirs.user.id, 'jose\u0301');
    assert.equal(theirs.created, true);
    const listed = (client) => client.listSessions().then((r) => r.sessions.map((s) => s.persistentIdentifier));
    assert.deepEqual(await listed(composed), [mine.session.persistentIdentifier]);
    assert.deepEqual(await listed(decomposed), [theirs.session.persistentIdentifier]);
    const seen = new Recorder();
    await decomposed.observe('editor.fontSize', { initial: true }, seen.add).ready;
    assert.equal(seen.items[0].isDefault, true, 'the default, not the other user\'s 21');
  });
});

describe('windows', { timeout: 20_000 }, () => {
  test('requestActivation brings forward the window that shows the content', async () => {
    const workspace = freshWorkspace();
    const shower = clientOf(server, { workspace });
    await shower.start();
    await shower.updateActivity({ activityType: 'panes.document', targetContentIdentifier: 'doc_shown' });
    const asker = clientOf(server, { workspace });
    await asker.start();
    const activated = next(shower, 'activate');
    const activity = { activityType: 'panes.document', title: 'Shown', targetContentIdentifier: 'doc_shown' };
    const result = await asker.requestActivation(activity);
    assert.equal(result.action, 'activated');
    assert.equal(result.scene, shower.scene);
    const event = await activated;
    assert.equal(event.activity.targetContentIdentifier, 'doc_shown');
    assert.equal(event.requestedBy?.scene, asker.scene);
  });

  test('requestRefresh updates the switcher entry of another session', async () => {
    const workspace = freshWorkspace();
    const a = clientOf(server, { workspace });
    const b = clientOf(server, { workspace });
    const [{ session }] = await Promise.all([a.start(), b.start()]);
    const { session: entry } = await b.requestRefresh({ session: session.persistentIdentifier, title: 'Plan (v2)', snapshot: { text: 'Q3 goals' } });
    assert.equal(entry.title, 'Plan (v2)');
    assert.deepEqual(entry.snapshot, { text: 'Q3 goals' });
    await assert.rejects(b.requestRefresh({ session: 'not-a-session', title: 'x' }), (e) => e.code === 'session_not_found');
  });
});
