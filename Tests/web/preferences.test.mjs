// Observing preferences against the real server (lib/preferences.js): initial values before
// `ready`, every change from any window, stopping, and the catch-up after a reconnect that
// delivers only what changed meanwhile.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { Recorder, clientOf, closeAll, connected, freshWorkspace } from './support/helpers.mjs';
import { PanesServer } from './support/server.mjs';
import { Tap } from './support/tap.mjs';

/** @type {PanesServer} */
let server;
before(async () => {
  server = await new PanesServer().start();
});
after(() => server.dispose());
afterEach(() => closeAll());

/** Two windows of one user in a workspace of the test's own. */
async function twoWindows(options = {}) {
  const workspace = freshWorkspace();
  const observer = clientOf(server, { workspace, ...options });
  const writer = clientOf(server, { workspace });
  await Promise.all([observer.start(), writer.start()]);
  return { observer, writer };
}

describe('observing preferences', { timeout: 20_000 }, () => {
  test('initial values arrive before `ready`, then every change from any window, until stopped', async () => {
    const { observer, writer } = await twoWindows();
    await writer.setPreference('notes.fontSize', 15);
    const recorder = new Recorder();
    const changes = recorder.items;
    const handle = observer.observe('notes', { initial: true, old: true }, recorder.add);
    await handle.ready;
    assert.deepEqual(changes.map((c) => [c.keyPath, c.new, Boolean(c.initial)]), [['notes.fontSize', 15, true]]);
    assert.equal(changes[0].observations, undefined, 'connection-local observation numbers are not passed on');
    const result = await writer.setPreference('notes.showWordCount', true);
    assert.equal(result.changed, true);
    await recorder.atLeast(2);
    assert.equal(changes[1].keyPath, 'notes.showWordCount');
    assert.equal(changes[1].new, true);
    assert.equal(changes[1].version, result.version);
    await writer.setPreference('notes.fontSize', 16);
    await recorder.atLeast(3);
    assert.deepEqual([changes[2].old, changes[2].new], [15, 16]);
    handle.stop();
    await writer.setPreference('notes.fontSize', 17);
    await observer.ping(); // a change event would have come before this reply
    assert.equal(changes.length, 3);
  });

  test('without `initial`, current values are not delivered', async () => {
    const { observer, writer } = await twoWindows();
    await writer.setPreference('notes.theme', 'dark');
    const recorder = new Recorder();
    const changes = recorder.items;
    await observer.observe('notes.theme', {}, recorder.add).ready;
    await observer.ping();
    assert.equal(changes.length, 0);
  });

  test('a key with no value is reported as not existing', async () => {
    const { observer } = await twoWindows();
    const recorder = new Recorder();
    const changes = recorder.items;
    await observer.observe('nothing.here', { initial: true }, recorder.add).ready;
    assert.deepEqual(changes.map((c) => [c.keyPath, c.exists]), [['nothing.here', false]]);
  });

  test('after a reconnect, only what changed meanwhile is delivered, as a catch-up', async () => {
    const tap = new Tap();
    const { observer, writer } = await twoWindows({ createSocket: tap.createSocket });
    await writer.setPreference('notes.fontSize', 15);
    await writer.setPreference('notes.showWordCount', false);
    await writer.setPreference('notes.spell', true);
    const recorder = new Recorder();
    const changes = recorder.items;
    await observer.observe('notes', { initial: true, old: true }, recorder.add).ready;
    changes.length = 0;
    tap.unreachable = true;
    observer.dropConnection();
    await writer.setPreference('notes.showWordCount', true);
    await writer.removePreference('notes.spell');
    tap.unreachable = false;
    observer.reconnectNow();
    await connected(observer);
    await recorder.atLeast(2);
    await observer.ping();
    const byKey = Object.fromEntries(changes.map((c) => [c.keyPath, c]));
    assert.deepEqual(Object.keys(byKey).sort(), ['notes.showWordCount', 'notes.spell']);
    assert.deepEqual([byKey['notes.showWordCount'].old, byKey['notes.showWordCount'].new], [false, true]);
    assert.equal(byKey['notes.showWordCount'].catchUp, true);
    assert.equal(byKey['notes.spell'].removed, true);
    assert.equal(byKey['notes.spell'].old, true);
    await writer.setPreference('notes.fontSize', 18);
    await recorder.atLeast(3);
    assert.equal(changes[2].new, 18);
    assert.equal(changes[2].catchUp, undefined);
  });

  test('an observation made while disconnected starts once connected', async () => {
    const workspace = freshWorkspace();
    const writer = clientOf(server, { workspace });
    await writer.start();
    await writer.setPreference('notes.theme', 'dark', { domain: 'workspace' });
    const observer = clientOf(server, { workspace, auth: { name: 'bob' } });
    const recorder = new Recorder();
    const changes = recorder.items;
    const handle = observer.observe('notes.theme', { initial: true }, recorder.add, { domain: 'workspace' });
    observer.start();
    await handle.ready;
    assert.deepEqual(changes.map((c) => [c.domain, c.new]), [['workspace', 'dark']]);
  });

  test('a registered default is reported as the default until set, and again once removed', async () => {
    const { observer, writer } = await twoWindows();
    const recorder = new Recorder();
    const changes = recorder.items;
    await observer.observe('editor.fontSize', { initial: true }, recorder.add).ready;
    assert.equal(changes[0].isDefault, true);
    assert.equal(typeof changes[0].new, 'number');
    await assert.rejects(writer.setPreference('editor.fontSize', 'large'), (e) => e.code === 'type_mismatch' && e.action === 'fix');
    await writer.setPreference('editor.fontSize', 21);
    await writer.removePreference('editor.fontSize');
    await recorder.atLeast(3);
    assert.deepEqual(changes.slice(1).map((c) => [c.new, Boolean(c.isDefault)]), [[21, false], [changes[0].new, true]]);
  });

  test('compare-and-set refuses a stale version', async () => {
    const { writer } = await twoWindows();
    const { version } = await writer.setPreference('notes.fontSize', 14);
    await writer.setPreference('notes.fontSize', 15, { ifVersion: version });
    await assert.rejects(writer.setPreference('notes.fontSize', 16, { ifVersion: version }), (e) => e.code === 'version_conflict' && e.action === 'refresh');
  });
});
