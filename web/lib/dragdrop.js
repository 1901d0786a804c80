// @ts-check
/**
 * Drag and drop between scenes: the server holds a drag's items (activities); the browser's
 * native drag carries only the drag's identifier (`application/x-panes-drag`). The source
 * hears how it ended (`dragEnded`); a scene that items are dropped on hears `itemsDropped`; a
 * window whose drop onto the new-window zone was never answered (its node died) hears
 * `openWindows` where it resumes.
 *
 * @module dragdrop
 */

/** @typedef {import('./connection.js').Connection} Connection */
/** @typedef {import('../types/panes-client.js').DragItem} DragItem */
/** @typedef {import('../types/panes-client.js').DragOperation} DragOperation */

/** The MIME type under which a page puts a drag's identifier in the native drag data. */
export const DRAG_MIME_TYPE = 'application/x-panes-drag';

export class DragAndDrop {
  #connection;

  /** @param {Connection} connection */
  constructor(connection) {
    this.#connection = connection;
  }

  /** @param {DragItem[]} items */
  beginDrag(items) {
    return this.#connection.request('beginDrag', { items });
  }

  /**
   * @param {string} drag
   * @param {'scene' | 'newWindow'} target
   * @param {{ scene?: string, operation?: DragOperation }} options
   */
  drop(drag, target, options) {
    /** @type {Record<string, any>} */
    const fields = { drag, target, operation: options.operation ?? 'copy' };
    if (options.scene) fields.scene = options.scene;
    const answer = this.#connection.request('drop', fields);
    if (target !== 'newWindow') return answer;
    // Its windows are the caller's to open now: the same windows sent again as `openWindows`
    // (PROTOCOL.md, drop) are not emitted.
    return answer.then((result) => {
      this.#connection.dropApplied(drag);
      return result;
    });
  }

  /** @param {string} drag */
  cancelDrag(drag) {
    return this.#connection.request('cancelDrag', { drag });
  }
}
