// @ts-check
/**
 * The Panes client library: its one entry point. Runs unchanged in browsers and in Node 20
 * (pass `ws`'s `WebSocket` where there is no global one). Types: `types/panes-client.d.ts`.
 *
 * ```js
 * import { PanesClient } from 'panes-client';
 * const client = new PanesClient({ url: 'ws://127.0.0.1:8080/ws', auth: { name: 'Alice' } });
 * const { session } = await client.start();
 * ```
 *
 * In a page served by Panes: `import { connectInBrowser } from '/panes-client.js'`.
 *
 * @module panes-client
 */
export { PanesClient, PROTOCOL_VERSION, SUBPROTOCOL, CLIENT_VERSION } from './lib/panes-client.js';
export { PanesError, actionForNumber } from './lib/errors.js';
export { DocumentList } from './lib/document-list.js';
export { DocumentSession, openDocument } from './lib/documents.js';
export { MemoryPendingStore, IndexedDBPendingStore } from './lib/pending-store.js';
export { diffOperation } from './lib/text-diff.js';
export { DRAG_MIME_TYPE } from './lib/dragdrop.js';
export { TextBinding, withAlpha } from './lib/text-binding.js';
export {
  connectInBrowser,
  bindLifecycle,
  bindTraits,
  currentTraits,
  currentLifecycle,
  socketURL,
  ticketFromURL,
  removeTicketFromURL,
  openTicketWindow,
  playDismissal,
  closeWindow,
  COMPACT_MAX_WIDTH,
} from './lib/browser.js';
export * as ot from './lib/ot.js';
