// @ts-check
/**
 * An automated socket test written with panes-client, in Node 20: one user with two windows
 * (scenes) observes a preference, edits a shared document, and drags it from one window to
 * the other. Run it against a server:
 *
 *     node socket-test.mjs ws://127.0.0.1:8080/ws [workspace]
 *
 * Node 20 has no global WebSocket (unless run with --experimental-websocket), so this uses
 * `ws` (`npm install ws`, or Debian's node-ws with NODE_PATH=/usr/share/nodejs).
 */
import { createRequire } from 'node:module';
import { PanesClient } from 'panes-client';

const url = process.argv[2] ?? 'ws://127.0.0.1:8080/ws';
const workspace = process.argv[3] ?? 'example';
const WebSocket = globalThis.WebSocket ?? createRequire(import.meta.url)('ws');

/** A window of Ada's: one scene, with a session of its own. */
async function openWindow() {
  const client = new PanesClient({ url, workspace, auth: { name: 'Ada' }, WebSocket });
  await client.start();
  return client;
}

/**
 * Resolves once `test()` holds for a document, checked after each of its changes.
 * @param {import('panes-client').DocumentSession} document
 * @param {() => boolean} test
 */
function until(document, test) {
  return new Promise((resolve) => {
    const check = () => {
      if (!test()) return;
      off();
      resolve(undefined);
    };
    const off = document.on('change', check);
    check();
  });
}

const left = await openWindow();
const right = await openWindow();
console.log(`connected: 2 windows of ${left.user?.name}, sessions differ: ${left.session?.persistentIdentifier !== right.session?.persistentIdentifier}`);

// A preference set in one window is heard in the other.
/** @type {Promise<unknown>} */
const heard = new Promise((resolve) => {
  const observation = left.observe('editor.fontSize', {}, (change) => (observation.stop(), resolve(change.new)));
  observation.ready.then(() => right.setPreference('editor.fontSize', 18));
});
console.log(`preference: editor.fontSize = ${await heard} (set in the right window, heard in the left)`);

// A document edited in one window reaches the other.
const summary = await left.createDocument('Notes', { text: 'Hello' });
const mine = await left.openDocument(summary.id);
const theirs = await right.openDocument(summary.id);
mine.applyLocal([5, ', world']); // retain 5 code points, insert
await mine.whenSaved();
await until(theirs, () => theirs.text === mine.text);
console.log(`document: "${theirs.text}" at revision ${theirs.revision} in both windows`);

// Drag the document from the left window and drop it on the right one.
const ended = new Promise((resolve) => left.once('dragEnded', resolve));
const activity = { activityType: 'panes.document', title: summary.title, targetContentIdentifier: summary.id };
const { drag } = await left.beginDrag([{ activity }]);
const { items = [] } = await right.drop(drag, 'scene');
const { outcome } = /** @type {import('panes-client').DragEndedEvent} */ (await ended);
console.log(`drag: ${items.map((item) => item.title).join(', ')} dropped on the right window; the left saw ${outcome}`);

left.close();
right.close();
