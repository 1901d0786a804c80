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

/** @param {Workspace} ws */
export function installDragAndDrop(ws) {
  const client = ws.client;
  const app = byId('app');
  const list = byId('document-list');
  const zone = byId('new-window-zone');
  /** @type {HTMLElement} */ (zone.querySelector('.new-window-zone-icon')).innerHTML = icons.newWindow;

  /** @type {PreparedDrag | null} */
  let prepared = null;
  /**
   * The drag this window is the source of, while it lasts.
   * @type {PreparedDrag | null}
   */
  let active = null;
  /** Drags the server reported ended (dropped or cancelled). @type {Set<string>} */
  const ended = new Set();

  /** @param {string} documentId */
  const prepare = (documentId) => {
    if (prepared && prepared.documentId === documentId && !prepared.used && Date.now() - prepared.at < 45_000) return prepared;
    if (prepared && !prepared.used) discard(prepared);
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
    prepared = entry;
    return entry;
  };

  /** @param {PreparedDrag} entry */
  const discard = (entry) => {
    entry.promise.then((id) => {
      if (id && !ended.has(id)) client.cancelDrag(id).catch(() => {});
    });
  };

  const showZone = () => {
    zone.hidden = false;
  };
  const hideZone = () => {
    zone.hidden = true;
    zone.dataset.over = 'false';
    app.dataset.dropTarget = 'false';
  };

  // Source: the sidebar's rows.
  list.addEventListener('pointerdown', (event) => {
    const row = /** @type {HTMLElement} */ (event.target).closest('.document-row');
    if (row instanceof HTMLElement && row.dataset.documentId) prepare(row.dataset.documentId);
  });
  list.addEventListener('dragstart', (event) => {
    const row = /** @type {HTMLElement} */ (event.target).closest?.('.document-row');
    const transfer = event.dataTransfer;
    if (!(row instanceof HTMLElement) || !transfer || !row.dataset.documentId) return;
    const documentId = row.dataset.documentId;
    const entry = prepare(documentId);
    entry.used = true;
    prepared = null;
    active = entry;
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
    showZone();
  });
  list.addEventListener('dragend', (event) => {
    const row = /** @type {HTMLElement} */ (event.target).closest?.('.document-row');
    row?.classList.remove('dragging');
    hideZone();
    const entry = active;
    active = null;
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
      if (id && ended.has(id)) return;
      if (outside) {
        if (id) dropOnNewWindow(id, entry.documentId);
        else ws.openInNewWindow(entry.documentId);
      } else if (id) {
        client.cancelDrag(id).catch(() => {});
      }
    }, 400);
  });

  client.on('dragEnded', (/** @type {any} */ event) => {
    ended.add(event.drag);
    if (active && active.id === event.drag) {
      // Ended elsewhere (a drop in another window) before this window saw `dragend`.
      active = null;
      hideZone();
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

  // Targets: the whole window, and the new-window zone.
  /** @param {DataTransfer | null} transfer */
  const carriesDocument = (transfer) => Boolean(transfer && [...transfer.types].some((t) => t === DRAG_TYPE || t === DOCUMENT_TYPE));

  app.addEventListener('dragenter', (event) => {
    if (!carriesDocument(event.dataTransfer)) return;
    event.preventDefault();
    showZone();
  });
  app.addEventListener('dragover', (event) => {
    if (!carriesDocument(event.dataTransfer)) return;
    event.preventDefault();
    const onZone = zone.contains(/** @type {Node} */ (event.target));
    if (event.dataTransfer) event.dataTransfer.dropEffect = event.shiftKey ? 'move' : 'copy';
    zone.dataset.over = String(onZone);
    app.dataset.dropTarget = String(!onZone && !active);
  });
  app.addEventListener('dragleave', (event) => {
    if (!carriesDocument(event.dataTransfer)) return;
    const next = /** @type {Node | null} */ (event.relatedTarget);
    if (next && app.contains(next)) return;
    if (!active) hideZone();
    else app.dataset.dropTarget = 'false';
  });
  app.addEventListener('drop', async (event) => {
    const transfer = event.dataTransfer;
    if (!carriesDocument(transfer) || !transfer) return;
    event.preventDefault();
    const onZone = zone.contains(/** @type {Node} */ (event.target));
    const operation = event.shiftKey ? 'move' : 'copy';
    hideZone();
    let id = transfer.getData(DRAG_TYPE);
    const documentId = transfer.getData(DOCUMENT_TYPE);
    if (!id && active) id = (await active.promise) ?? '';
    if (!id) {
      // No server drag (a server without drags, or a very quick drag): use the document id.
      if (documentId && onZone) ws.openInNewWindow(documentId);
      else if (documentId) ws.openDocument(documentId, { focus: true });
      return;
    }
    if (onZone) {
      await dropOnNewWindow(id, documentId, operation);
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

  /**
   * @param {string} id
   * @param {string} documentId
   * @param {'copy' | 'move'} [operation]
   */
  const dropOnNewWindow = async (id, documentId, operation = 'copy') => {
    try {
      const result = await client.drop(id, 'newWindow', { operation });
      for (const w of result.windows ?? []) ws.openURL(w.url);
    } catch (error) {
      if (documentId && /** @type {any} */ (error).code !== 'unsupported_activity') ws.openInNewWindow(documentId);
      else toast(describeError(error, 'open a new window'));
    }
  };

  // Escape while the zone shows (a synthesized drag never ends on its own).
  window.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && !zone.hidden && !active) hideZone();
  });
}
