// @ts-check
/**
 * Drag and drop between scenes: the server holds a drag's items (activities); the browser's
 * native drag carries only the drag's identifier (`application/x-panes-drag`). The source
 * hears how it ended (`dragEnded`); a scene that items are dropped on hears `itemsDropped`.
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
    return this.#connection.request('drop', fields);
  }

  /** @param {string} drag */
  cancelDrag(drag) {
    return this.#connection.request('cancelDrag', { drag });
  }
}
