// Rights per document against the real server (`--auth tokens`): a viewer's session is
// read-only, a downgrade or a revoked link reaches an open session at once, and the document
// list drops what the user may no longer see.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { DocumentList } from '../../web/panes-client.js';
import { clientOf, closeAll, next, until } from './support/helpers.mjs';
import { PanesServer } from './support/server.mjs';

const TOKENS = {
  tokens: [
    { token: 't-ed', user: 'ed', name: 'Ed', workspaces: { acme: 'editor' } },
    { token: 't-eve', user: 'eve', name: 'Eve', workspaces: { acme: 'editor' } },
    { token: 't-vic', user: 'vic', name: 'Vic', workspaces: { acme: 'viewer' } },
  ],
};

/** @type {PanesServer} */
let server;
before(async () => {
  server = await new PanesServer({
    files: { 'tokens.json': JSON.stringify(TOKENS) },
    args: (data) => ['--auth', 'tokens', '--tokens', `${data}/tokens.json`],
  }).start();
});
after(() => server.dispose());
afterEach(() => closeAll());

/** @param {string} token */
async function user(token) {
  const client = clientOf(server, { workspace: 'acme', auth: { token } });
  await client.start();
  return client;
}

describe('rights per document', { timeout: 30_000 }, () => {
  test("a viewer's session is read-only; a grant makes it an editor, and a downgrade makes it read-only at once", async () => {
    const ed = await user('t-ed');
    const vic = await user('t-vic');
    const summary = await ed.createDocument('Plan', { text: 'hello' });
    const session = await vic.openDocument(summary.id);
    assert.equal(session.role, 'viewer');
    assert.equal(session.readOnly, true);

    const changed = next(session, 'accessChanged');
    await ed.shareDocument(summary.id, 'vic', 'editor');
    assert.deepEqual(await changed, { role: 'editor' });
    assert.equal(session.readOnly, false);
    session.applyLocal([5, '!']);
    await session.whenSaved();

    const downgraded = next(session, 'accessChanged');
    await ed.shareDocument(summary.id, 'vic', 'viewer');
    assert.deepEqual(await downgraded, { role: 'viewer' });
    assert.equal(session.readOnly, true);
    const shares = await ed.listDocumentShares(summary.id);
    assert.deepEqual(shares.grants.map((g) => [g.user, g.role]), [['vic', 'viewer']]);
  });

  test('a document taken away leaves the list and closes the session', async () => {
    const ed = await user('t-ed');
    const eve = await user('t-eve');
    const summary = await ed.createDocument('Secret', { text: 'x' });
    const list = new DocumentList(eve).start();
    await until(list, 'change', () => list.documents.has(summary.id));
    const session = await eve.openDocument(summary.id);
    assert.equal(session.role, 'editor');
    const gone = next(session, 'accessChanged');
    await ed.shareDocument(summary.id, 'eve', 'none');
    assert.deepEqual(await gone, { role: 'none' });
    assert.equal(session.status, 'closed');
    await until(list, 'change', () => !list.documents.has(summary.id));
    await assert.rejects(eve.openDocument(summary.id), { code: 'document_not_found' });
  });

  test('a link opens the document with its role until it is revoked', async () => {
    const ed = await user('t-ed');
    const eve = await user('t-eve');
    const summary = await ed.createDocument('Linked', { text: 'x' });
    await ed.shareDocument(summary.id, 'eve', 'none');
    const { link, token } = await ed.createDocumentLink(summary.id, 'viewer', { expiresInMs: 60_000 });
    assert.equal(link.role, 'viewer');
    const session = await eve.openDocument(summary.id, { link: token });
    assert.equal(session.role, 'viewer');
    assert.equal(session.text, 'x');
    const revoked = next(session, 'accessChanged');
    await ed.revokeDocumentLink(summary.id, link.id);
    assert.deepEqual(await revoked, { role: 'none' });
    await assert.rejects(eve.openDocument(summary.id, { link: token }), { code: 'forbidden' });
  });
});
