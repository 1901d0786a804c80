// Errors and results no other suite's frames carried, from the real server over a raw socket:
// each as PROTOCOL.md lists it (code, number), so the frame check (scripts/check_frames.py)
// sees them too. The server runs with small limits so each is one or two requests away.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SUBPROTOCOL } from '../../web/panes-client.js';
import { freshWorkspace } from './support/helpers.mjs';
import { PanesServer, WebSocket } from './support/server.mjs';

/** @type {PanesServer} */
let server;
before(async () => {
  server = await new PanesServer({
    settings: { maxObservationsPerScene: 2, operationLogRetention: 2, operationLogRetentionMs: 0, snapshotEvery: 2 },
  }).start();
});
after(() => server.dispose());

/** A connected scene on a raw socket: `ask` sends a request and resolves with its reply. */
async function scene() {
  const socket = new WebSocket(server.url, SUBPROTOCOL);
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = reject;
  });
  /** @type {Map<number, (reply: any) => void>} */
  const waiting = new Map();
  /** @type {any[]} */
  const events = [];
  socket.onmessage = (event) => {
    const message = JSON.parse(String(event.data));
    if (message.type === 'reply') waiting.get(message.re)?.(message);
    else events.push(message);
  };
  let nextID = 1;
  /** @param {Record<string, any>} request */
  const ask = (request) =>
    new Promise((resolve) => {
      const id = nextID++;
      waiting.set(id, resolve);
      socket.send(JSON.stringify({ ...request, id }));
    });
  const connected = await ask({
    type: 'connect',
    protocol: 1,
    client: 'errors-test',
    workspace: freshWorkspace('errors'),
    auth: { name: 'erin' },
    traits: { width: 'regular', pointer: 'fine' },
    state: { visible: true, focused: true },
  });
  assert.equal(connected.ok, true, JSON.stringify(connected));
  return { ask, events, close: () => socket.close() };
}

/** Asserts a refusal with this code and number, and returns its message. */
function refused(reply, code, number) {
  assert.equal(reply.ok, false, JSON.stringify(reply));
  assert.equal(reply.error.code, code, JSON.stringify(reply));
  assert.equal(reply.error.number, number, JSON.stringify(reply));
  return reply.error.message;
}

describe('errors and results a client rarely meets', { timeout: 20_000 }, () => {
  test('unobserving an observation the scene does not have: observation_not_found', async () => {
    const { ask, close } = await scene();
    refused(await ask({ type: 'unobserve', observation: 99 }), 'observation_not_found', 2010);
    const observed = await ask({ type: 'observe', domain: 'user', keyPath: 'notes', options: ['new'] });
    assert.equal(observed.ok, true, JSON.stringify(observed));
    assert.deepEqual((await ask({ type: 'unobserve', observation: observed.result.observation })).result, {});
    refused(await ask({ type: 'unobserve', observation: observed.result.observation }), 'observation_not_found', 2010);
    close();
  });

  test('one observation over maxObservationsPerScene: too_many, naming the setting', async () => {
    const { ask, close } = await scene();
    for (const keyPath of ['a', 'b']) {
      assert.equal((await ask({ type: 'observe', domain: 'user', keyPath, options: [] })).ok, true);
    }
    const message = refused(await ask({ type: 'observe', domain: 'user', keyPath: 'c', options: [] }), 'too_many', 1009);
    assert.match(message, /maxObservationsPerScene/);
    close();
  });

  test('unobserveDocuments ends the list: {} and no more list events', async () => {
    const { ask, events, close } = await scene();
    const observed = await ask({ type: 'observeDocuments' });
    assert.deepEqual(observed.result.documents, []);
    await ask({ type: 'createDocument', title: 'Seen' });
    await ask({ type: 'ping' });
    assert.deepEqual(events.filter((e) => e.type === 'documentsChanged').map((e) => e.change), ['created']);
    assert.deepEqual((await ask({ type: 'unobserveDocuments' })).result, {});
    await ask({ type: 'createDocument', title: 'Unseen' });
    await ask({ type: 'ping' });
    assert.equal(events.filter((e) => e.type === 'documentsChanged').length, 1);
    close();
  });

  test('an activity no scene configuration accepts: unsupported_activity, and nothing made', async () => {
    const { ask, close } = await scene();
    const before = await ask({ type: 'listSessions' });
    refused(await ask({ type: 'requestActivation', activity: { activityType: 'com.example.game' } }),
      'unsupported_activity', 1014);
    assert.equal((await ask({ type: 'listSessions' })).result.sessions.length, before.result.sessions.length);
    close();
  });

  test('an edit on a revision older than the kept log: revision_unavailable, nothing applied', async () => {
    const { ask, close } = await scene();
    const created = await ask({ type: 'createDocument', title: 'Log' });
    const document = created.result.document.id;
    assert.equal((await ask({ type: 'openDocument', document })).result.revision, 0);
    for (let revision = 0; revision < 6; revision++) {
      const edited = await ask({ type: 'edit', document, revision, operation: revision ? [revision, 'x'] : ['x'], opId: `o${revision}` });
      assert.equal(edited.result.revision, revision + 1, JSON.stringify(edited));
    }
    refused(await ask({ type: 'edit', document, revision: 0, operation: ['y'], opId: 'late' }), 'revision_unavailable', 2008);
    const reopened = await ask({ type: 'openDocument', document, revision: 0 });
    assert.equal(reopened.result.catchUp, 'snapshot');
    assert.equal(reopened.result.text, 'xxxxxx');
    close();
  });
});
