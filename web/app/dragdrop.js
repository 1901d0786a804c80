// @ts-check
/**
 * Drag and drop of documents between windows, over the protocol's drags: the source asks the
 * server for a drag (`beginDrag`) and puts only its identifier in the native drag data
 * (`application/x-panes-drag`); the window that receives the drop sends `drop`. Dropping on a
 * window opens the document there; dropping on the "new window" zone (shown while dragging)
 * or outside every window opens it in a new tab.
 *
 * The drag is requested on `pointerdown`, before the native `dragstart`, because drag data can
 * only be set synchronously in `dragstart`. Handlers accept both real and synthesized events
 * (tests dispatch `DragEvent`s carrying a `DataTransfer`, since a real drag between tabs
 * cannot be scripted).
 *
 * @module app/dragdrop
 */
import { byId, icons } from './dom.js';
import { describeError, toast } from './feedback.js';
import { DOCUMENT_ACTIVITY } from './workspace.js';

/** @typedef {import('./workspace.js').Workspace} Workspace */

/** The drag's identifier, the only thing the protocol puts in the native drag data. */
export const DRAG_TYPE = 'application/x-panes-drag';
/** The document's identifier, so a drop still works where the server has no drags. */
export const DOCUMENT_TYPE = 'application/x-panes-document';

/**
 * @typedef {object} PreparedDrag
 * @property {string} documentId
 * @property {number} at
 * @property {string | null} id
 * @property {Promise<string | null>} promise
 * @property {boolean} used
 */

/**
 * What the parts of the drag and drop share: the workspace, the elements, and the drags this
 * window prepared, is the source of, and heard ended.
 * @typedef {object} DragContext
 * @property {Workspace} ws
 * @property {Workspace['client']} client
 * @property {HTMLElement} app
 * @property {HTMLElement} list
 * @property {HTMLElement} zone
 * @property {PreparedDrag | null} prepared
 * @property {PreparedDrag | null} active the drag this window is the source of, while it lasts
 * @property {Set<string>} ended drags the server reported ended (dropped or cancelled)
 */

/** @param {Workspace} ws */
export function installDragAndDrop(ws) {
  const zone = byId('new-window-zone');
  /** @type {HTMLElement} */ (zone.querySelector('.new-window-zone-icon')).innerHTML = icons.newWindow;
  /** @type {DragContext} */
  const d = { ws, client: ws.client, app: byId('app'), list: byId('document-list'), zone, prepared: null, active: null, ended: new Set() };
  installDragSource(d);
  followServerDrags(d);
  installDropTargets(d);

  // Escape while the zone shows (a synthesized drag never ends on its own).
  window.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && !zone.hidden && !d.active) hideZone(d);
  });
}

/**
 * The drag for a document, asked of the server ahead of `dragstart` (reused for 45 s).
 * @param {DragContext} d
 * @param {string} documentId
 */
function prepare(d, documentId) {
  const { ws, client, prepared } = d;
  if (prepared && prepared.documentId === documentId && !prepared.used && Date.now() - prepared.at < 45_000) return prepared;
  if (prepared && !prepared.used) discard(d, prepared);
  /** @type {PreparedDrag} */
  const entry = { documentId, at: Date.now(), id: null, used: false, promise: Promise.resolve(null) };
  if (client.supports('beginDrag') && client.connected) {
    const activity = { activityType: DOCUMENT_ACTIVITY, title: ws.summaryOf(documentId)?.title ?? '', targetContentIdentifier: documentId };
    entry.promise = client
      .beginDrag([{ activity, operations: ['copy', 'move'] }])
      .then((result) => {
        entry.id = result.drag;
        return result.drag;
      })
      .catch(() => null);
  }
  d.prepared = entry;
  return entry;
}

/**
 * @param {DragContext} d
 * @param {PreparedDrag} entry
 */
function discard(d, entry) {
  entry.promise.then((id) => {
    if (id && !d.ended.has(id)) d.client.cancelDrag(id).catch(() => {});
  });
}

/** @param {DragContext} d */
function showZone(d) {
  d.zone.hidden = false;
}
/** @param {DragContext} d */
function hideZone(d) {
  d.zone.hidden = true;
  d.zone.dataset.over = 'false';
  d.app.dataset.dropTarget = 'false';
}

/**
 * Source: the sidebar's rows.
 * @param {DragContext} d
 */
function installDragSource(d) {
  const { ws, client, list } = d;
  list.addEventListener('pointerdown', (event) => {
    const row = /** @type {HTMLElement} */ (event.target).closest('.document-row');
    if (row instanceof HTMLElement && row.dataset.documentId) prepare(d, row.dataset.documentId);
  });
  list.addEventListener('dragstart', (event) => {
    const row = /** @type {HTMLElement} */ (event.target).closest?.('.document-row');
    const transfer = event.dataTransfer;
    if (!(row instanceof HTMLElement) || !transfer || !row.dataset.documentId) return;
    const documentId = row.dataset.documentId;
    const entry = prepare(d, documentId);
    entry.used = true;
    d.prepared = null;
    d.active = entry;
    transfer.effectAllowed = 'copyMove';
    transfer.setData('text/plain', ws.summaryOf(documentId)?.title ?? documentId);
    transfer.setData(DOCUMENT_TYPE, documentId);
    if (entry.id) {
      transfer.setData(DRAG_TYPE, entry.id);
    } else {
      // Too quick for the server: a real drag goes on without the id (drops fall back to the
      // document id); a synthesized DataTransfer can still take it now.
      entry.promise.then((id) => {
        try {
          if (id) transfer.setData(DRAG_TYPE, id);
        } catch {
          /* the drag data store is protected after dragstart */
        }
      });
    }
    row.classList.add('dragging');
    showZone(d);
  });
  list.addEventListener('dragend', (event) => {
    const row = /** @type {HTMLElement} */ (event.target).closest?.('.document-row');
    row?.classList.remove('dragging');
    hideZone(d);
    const entry = d.active;
    d.active = null;
    if (!entry) return;
    if (event.dataTransfer && event.dataTransfer.dropEffect !== 'none') return; // a window took it
    const outside =
      event.screenX < window.screenX ||
      event.screenY < window.screenY ||
      event.screenX > window.screenX + window.outerWidth ||
      event.screenY > window.screenY + window.outerHeight;
    // A drop in another window reports itself (`dragEnded`) shortly; give it a moment.
    setTimeout(async () => {
      const id = await entry.promise;
      if (id && d.ended.has(id)) return;
      if (outside) {
        if (id) dropOnNewWindow(d, id, entry.documentId);
        else ws.openInNewWindow(entry.documentId);
      } else if (id) {
        client.cancelDrag(id).catch(() => {});
      }
    }, 400);
  });
}

/**
 * The server's drag events: drags ended elsewhere, and items dropped on this window.
 * @param {DragContext} d
 */
function followServerDrags(d) {
  const { ws, client, list } = d;
  client.on('dragEnded', (/** @type {any} */ event) => {
    d.ended.add(event.drag);
    if (d.active && d.active.id === event.drag) {
      // Ended elsewhere (a drop in another window) before this window saw `dragend`.
      d.active = null;
      hideZone(d);
      list.querySelector('.dragging')?.classList.remove('dragging');
    }
    // A move to another window takes the document away from this one.
    const target = event.target ?? {};
    if (event.outcome === 'dropped' && event.operation === 'move' && target.kind === 'scene' && target.scene !== client.scene) {
      const moved = ws.documentId;
      if (moved) {
        ws.closeDocument();
        toast('The document moved to another window.');
      }
    }
  });
  client.on('itemsDropped', (/** @type {any} */ event) => {
    const item = event.items?.[0];
    if (item?.targetContentIdentifier) ws.openDocument(item.targetContentIdentifier, { focus: true });
  });
}

/** @param {DataTransfer | null} transfer */
const carriesDocument = (transfer) => Boolean(transfer && [...transfer.types].some((t) => t === DRAG_TYPE || t === DOCUMENT_TYPE));

/**
 * Targets: the whole window, and the new-window zone.
 * @param {DragContext} d
 */
function installDropTargets(d) {
  const { ws, client, app, zone } = d;
  app.addEventListener('dragenter', (event) => {
    if (!carriesDocument(event.dataTransfer)) return;
    event.preventDefault();
    showZone(d);
  });
  app.addEventListener('dragover', (event) => {
    if (!carriesDocument(event.dataTransfer)) return;
    event.preventDefault();
    const onZone = zone.contains(/** @type {Node} */ (event.target));
    if (event.dataTransfer) event.dataTransfer.dropEffect = event.shiftKey ? 'move' : 'copy';
    zone.dataset.over = String(onZone);
    app.dataset.dropTarget = String(!onZone && !d.active);
  });
  app.addEventListener('dragleave', (event) => {
    if (!carriesDocument(event.dataTransfer)) return;
    const next = /** @type {Node | null} */ (event.relatedTarget);
    if (next && app.contains(next)) return;
    if (!d.active) hideZone(d);
    else app.dataset.dropTarget = 'false';
  });
  app.addEventListener('drop', async (event) => {
    const transfer = event.dataTransfer;
    if (!carriesDocument(transfer) || !transfer) return;
    event.preventDefault();
    const onZone = zone.contains(/** @type {Node} */ (event.target));
    const operation = event.shiftKey ? 'move' : 'copy';
    hideZone(d);
    let id = transfer.getData(DRAG_TYPE);
    const documentId = transfer.getData(DOCUMENT_TYPE);
    if (!id && d.active) id = (await d.active.promise) ?? '';
    if (!id) {
      // No server drag (a server without drags, or a very quick drag): use the document id.
      if (documentId && onZone) ws.openInNewWindow(documentId);
      else if (documentId) ws.openDocument(documentId, { focus: true });
      return;
    }
    if (onZone) {
      await dropOnNewWindow(d, id, documentId, operation);
      return;
    }
    try {
      const result = await client.drop(id, 'scene', { operation });
      const item = result.items?.[0];
      if (item?.targetContentIdentifier) await ws.openDocument(item.targetContentIdentifier, { focus: true });
    } catch (error) {
      if (documentId) ws.openDocument(documentId, { focus: true });
      else toast(describeError(error, 'drop that here'));
    }
  });
}

/**
 * @param {DragContext} d
 * @param {string} id
 * @param {string} documentId
 * @param {'copy' | 'move'} [operation]
 */
async function dropOnNewWindow(d, id, documentId, operation = 'copy') {
  const { ws, client } = d;
  try {
    const result = await client.drop(id, 'newWindow', { operation });
    for (const w of result.windows ?? []) ws.openURL(w.url);
  } catch (error) {
    if (documentId && /** @type {any} */ (error).code !== 'unsupported_activity') ws.openInNewWindow(documentId);
    else toast(describeError(error, 'open a new window'));
  }
}
