// @ts-check
/**
 * The workspace's documents as a live list: read on every connection (`observeDocuments`),
 * then kept current from `documentsChanged` events.
 *
 * @module document-list
 */
import { EventSource, emit } from './emitter.js';

/** @typedef {import('../types/panes-client.js').DocumentSummary} DocumentSummary */
/** @typedef {import('../types/panes-client.js').DocumentListEvents} DocumentListEvents */
/** @typedef {import('./panes-client.js').PanesClient} PanesClient */
/** @typedef {import('./errors.js').PanesError} PanesError */

/**
 * The workspace's documents, kept current across reconnects.
 * @extends {EventSource<DocumentListEvents>}
 */
export class DocumentList extends EventSource {
  #client;
  /** @type {Map<string, DocumentSummary>} */
  documents = new Map();
  /**
   * False once the server answered `unknown_type`; null until known.
   * @type {boolean | null}
   */
  supported = null;
  loaded = false;
  #stopped = false;
  /** @type {Array<() => void>} */
  #offs = [];

  /** @param {PanesClient} client */
  constructor(client) {
    super();
    this.#client = client;
  }

  start() {
    this.#offs.push(
      this.#client.on('documentsChanged', (event) => {
        if (this.#stopped || !event.document) return;
        const document = event.document;
        // `unshared`: this user may no longer see it (PROTOCOL.md, "Rights per document").
        if (event.change === 'deleted' || event.change === 'unshared') this.documents.delete(document.id);
        else this.documents.set(document.id, { ...this.documents.get(document.id), ...document });
        emit(this, 'change', { change: event.change, document });
      }),
      this.#client.onEveryConnection(() => this.#load()),
    );
    return this;
  }

  #load() {
    this.#client
      .request('observeDocuments', {}, { queue: false })
      .then((result) => {
        if (this.#stopped) return;
        this.supported = true;
        this.loaded = true;
        this.documents = new Map((result.documents ?? []).map((/** @type {DocumentSummary} */ d) => [d.id, d]));
        emit(this, 'change', { change: 'reset' });
      })
      .catch((/** @type {PanesError} */ error) => {
        if (error.code === 'unknown_type') {
          this.supported = false;
          emit(this, 'unsupported', error);
        }
      });
  }

  /** Documents by title (as the server lists them), so the list stays put while people type; ties by id. */
  sorted() {
    return [...this.documents.values()].sort(
      (a, b) => a.title.localeCompare(b.title, undefined, { sensitivity: 'base' }) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
    );
  }

  stop() {
    this.#stopped = true;
    for (const off of this.#offs.splice(0)) off();
    if (this.#client.connected) this.#client.request('unobserveDocuments', {}, { queue: false }).catch(() => {});
  }
}
