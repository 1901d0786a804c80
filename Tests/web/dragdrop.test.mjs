// Drag and drop between scenes against the real server (lib/dragdrop.js): a drag begun in
// one window and dropped on another, on the dropping window itself, and on the new-window
// zone (whose ticket opens a window with the item), and a cancelled drag.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { clientOf, closeAll, freshWorkspace, next } from './support/helpers.mjs';
import { PanesServer } from './support/server.mjs';

/** @type {PanesServer} */
let server;
before(async () => {
  server = await new PanesServer().start();
});
after(() => server.dispose());
afterEach(() => closeAll());

const item = (id = 'doc_dragged') => ({ activity: { activityType: 'panes.document', title: 'Dragged', targetContentIdentifier: id } });

async function twoWindows() {
  const workspace = freshWorkspace();
  const source = clientOf(server, { workspace });
  const target = clientOf(server, { workspace });
  await Promise.all([source.start(), target.start()]);
  return { workspace, source, target };
}

describe('drag and drop', { timeout: 20_000 }, () => {
  test('dropped by the window it lands on: that window gets the items, the source hears it ended', async () => {
    const { source, target } = await twoWindows();
    const ended = next(source, 'dragEnded');
    const { drag, expiresAt } = await source.beginDrag([{ ...item(), operations: ['copy', 'move'] }]);
    assert.equal(typeof expiresAt, 'number');
    const result = await target.drop(drag, 'scene', { operation: 'move' });
    assert.deepEqual(result.items?.map((i) => i.targetContentIdentifier), ['doc_dragged']);
    assert.equal(result.operation, 'move');
    const event = await ended;
    assert.deepEqual([event.drag, event.outcome, event.operation, event.target?.kind], [drag, 'dropped', 'move', 'scene']);
  });

  test('dropped onto another scene by name: that scene gets `itemsDropped`', async () => {
    const { source, target } = await twoWindows();
    const dropped = next(target, 'itemsDropped');
    const { drag } = await source.beginDrag([item()]);
    const result = await source.drop(drag, 'scene', { scene: target.scene ?? '' });
    assert.equal(result.delivered, target.scene);
    const event = await dropped;
    assert.equal(event.drag, drag);
    assert.equal(event.items[0].targetContentIdentifier, 'doc_dragged');
    assert.equal(event.source?.scene, source.scene);
    await assert.rejects(target.drop(drag, 'scene'), (e) => e.code === 'drag_already_dropped');
  });

  test('dropped on the new-window zone: a ticket per item opens a window with it', async () => {
    const { workspace, source, target } = await twoWindows();
    const { drag } = await source.beginDrag([item('doc_new_window')]);
    const { windows = [] } = await target.drop(drag, 'newWindow');
    assert.equal(windows.length, 1);
    const opened = clientOf(server, { workspace, ticket: windows[0].ticket });
    const result = await opened.start();
    assert.equal(result.session.persistentIdentifier, windows[0].session);
    assert.equal(result.connectionOptions.userActivities[0].targetContentIdentifier, 'doc_new_window');
  });

  test('a cancelled drag ends for its source and cannot be dropped', async () => {
    const { source, target } = await twoWindows();
    const ended = next(source, 'dragEnded');
    const { drag } = await source.beginDrag([item()]);
    await source.cancelDrag(drag);
    assert.equal((await ended).outcome, 'cancelled');
    await assert.rejects(target.drop(drag, 'scene'), (e) => e.action === 'refresh');
  });

  test('an operation the items do not allow is refused', async () => {
    const { source, target } = await twoWindows();
    const { drag } = await source.beginDrag([item()]);
    await assert.rejects(target.drop(drag, 'scene', { operation: 'move' }), (e) => e.code === 'operation_not_allowed' && e.action === 'fix');
  });
});
