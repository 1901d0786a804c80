// Issue 25 §4 against the real server, through the JS client: versions saved, listed, read and
// compared; a restore reaches every window and is one undo step of the restoring window's, made
// past its own unsent edits; errors name their field and change nothing.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { DocumentSession, ot } from '../../web/panes-client.js';
import { clientOf, closeAll, converged, freshWorkspace } from './support/helpers.mjs';
import { PanesServer } from './support/server.mjs';

let server;
before(async () => {
  server = await new PanesServer({ settings: { maxVersionNameBytes: 16, rateLimitPerSecond: 100000, rateLimitBurst: 100000 } }).start();
});
after(() => server.dispose());
afterEach(() => closeAll());

async function clientFor(workspace, name) {
  const client = clientOf(server, { workspace, auth: { name } });
  await client.start();
  return client;
}

const length = (text) => [...text].length;
function type(session, at, text) {
  session.applyLocal([at, text, length(session.text) - at].filter((c) => c !== 0));
}

describe('versions', { timeout: 60_000 }, () => {
  test('saved, listed, read and compared', async () => {
    const workspace = freshWorkspace();
    const client = await clientFor(workspace, 'alice');
    const summary = await client.createDocument('Plan', { text: 'alpha\nbeta\n' });
    const doc = await new DocumentSession(client, summary.id).open();
    const first = await doc.saveVersion('first');
    assert.equal(first.kind, 'named');
    assert.equal(first.name, 'first');
    type(doc, 6, 'BETA ');
    await converged([doc]);
    const second = await doc.saveVersion('second');
    assert.equal(second.revision, 1);
    const listed = await client.listVersions(summary.id);
    assert.deepEqual(listed.map((v) => v.id), [second.id, first.id]);
    const read = await client.readVersion(summary.id, first.id);
    assert.equal(read.text, 'alpha\nbeta\n');
    const compared = await client.compareVersions(summary.id, first.id, second.id);
    assert.equal(ot.apply(read.text, compared.operation), 'alpha\nBETA beta\n');
  });

  test('a restore reaches every window and is one undo step of the restoring one, past its unsent edits', async () => {
    const workspace = freshWorkspace();
    const [a, b] = [await clientFor(workspace, 'alice'), await clientFor(workspace, 'bob')];
    const summary = await a.createDocument('Plan', { text: 'one two three' });
    const alice = await new DocumentSession(a, summary.id).open();
    const bob = await new DocumentSession(b, summary.id).open();
    const version = await alice.saveVersion('before');
    type(bob, 4, 'FOUR ');
    await converged([alice, bob]);
    assert.equal(alice.text, 'one FOUR two three');
    // Alice types while the restore is on its way: her edit is unsent when its reply comes.
    const restoring = alice.restoreVersion(version.id);
    type(alice, 0, '> ');
    const result = await restoring;
    assert.ok(result.operation, 'the restore changed the text');
    await converged([alice, bob]);
    assert.equal(alice.text, '> one two three');
    assert.equal(bob.text, '> one two three');
    // The restore came back after her typing, so it is her latest step: undo takes it back
    // (Bob's words come back: he did not lose them), then her typing.
    assert.ok(alice.undo());
    assert.equal(alice.text, '> one FOUR two three');
    await converged([alice, bob]);
    assert.equal(bob.text, '> one FOUR two three');
    assert.ok(alice.undo());
    assert.equal(alice.text, 'one FOUR two three');
    assert.ok(alice.redo());
    await converged([alice, bob]);
    assert.equal(bob.text, '> one FOUR two three');
  });

  test('bad input is refused naming the field, and nothing changes', async () => {
    const workspace = freshWorkspace();
    const client = await clientFor(workspace, 'alice');
    const stranger = await clientFor(freshWorkspace(), 'eve');
    const summary = await client.createDocument('Plan', { text: 'x' });
    const doc = await new DocumentSession(client, summary.id).open();
    await assert.rejects(doc.saveVersion('a name far over sixteen bytes'), (e) => e.code === 'too_large' && e.field === 'name');
    await assert.rejects(client.readVersion(summary.id, 'ver_nope'), (e) => e.code === 'version_not_found' && e.field === 'version');
    await assert.rejects(doc.restoreVersion('ver_nope'), (e) => e.code === 'version_not_found' && e.field === 'version');
    const version = await doc.saveVersion('ok');
    await assert.rejects(stranger.readVersion(summary.id, version.id), (e) => e.code === 'document_not_found' && e.field === 'document');
    await assert.rejects(stranger.listVersions(summary.id), (e) => e.code === 'document_not_found');
    assert.deepEqual((await client.listVersions(summary.id)).map((v) => v.name), ['ok']);
    assert.equal(doc.text, 'x');
    assert.equal(doc.canUndo, false);
  });
});
