// @ts-check
/**
 * The Panes client library, in one import. See README-client.md.
 *
 * ```js
 * import { connectInBrowser, DocumentSession, TextBinding } from '/panes-client.js';
 * const client = connectInBrowser({ auth: { name: 'Alice' } });
 * ```
 *
 * @module panes
 */
export { PanesClient, PROTOCOL_VERSION, SUBPROTOCOL, CLIENT_VERSION } from './lib/panes-client.js';
export { PanesError, actionForNumber } from './lib/errors.js';
export { backoffDelay } from './lib/backoff.js';
export { Emitter } from './lib/emitter.js';
export { DocumentList, DocumentSession, openDocument } from './lib/documents.js';
export { TextBinding, withAlpha } from './lib/text-binding.js';
export {
  connectInBrowser,
  bindLifecycle,
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
export { OTClient } from './lib/ot-client.js';
export * as ot from './lib/ot.js';
