// @ts-check
/**
 * Presence in one open document: other scenes' selections, kept in local coordinates as the
 * text changes under them, and this scene's selection, shared when the server can place it.
 *
 * A selection is sent only when every local edit is acknowledged, so its positions are in the
 * text at a revision the server knows. One that arrives made at an older revision than the
 * local text is moved through the server operations since (kept in a short history), then
 * past this scene's unacknowledged edits.
 *
 * @module presence
 */
import { codePointLength, transformSelection } from './ot.js';

/** @typedef {import('../types/panes-client.js').Operation} Operation */
/** @typedef {import('../types/panes-client.js').Selection} Selection */
/** @typedef {import('../types/panes-client.js').RemotePresence} RemotePresence */

/** How long selection moves are gathered before one `setPresence` goes out. */
const SEND_DELAY_MS = 30;

export class Presence {
  /** Other scenes' selections, by scene. @type {Map<string, RemotePresence>} */
  remote = new Map();
  /** @type {Selection | null} this scene's */
  selection = null;
  /** @type {Array<{ revision: number, op: Operation }>} server operations, in server coordinates */
  #history = [];
  #historyLimit;
  #dirty = false;
  #inFlight = false;
  /** @type {any} */
  #timer = null;
  #timers;
  #send;

  /**
   * @param {object} options
   * @param {number} options.historyLimit
   * @param {import('../types/panes-client.js').Timers} options.timers
   * @param {(selection: Selection | null) => Promise<unknown> | null} options.send sends it, or
   *   returns null when it cannot be placed now (edits unacknowledged, disconnected)
   */
  constructor({ historyLimit, timers, send }) {
    this.#historyLimit = historyLimit;
    this.#timers = timers;
    this.#send = send;
  }

  /** Starts afresh (the document was (re-)loaded whole). */
  reset() {
    this.#history = [];
    this.remote.clear();
  }

  /**
   * A server operation at `revision`, kept to move late presence.
   * @param {number} revision
   * @param {Operation} op
   */
  record(revision, op) {
    this.#history.push({ revision, op });
    if (this.#history.length > this.#historyLimit) this.#history.splice(0, this.#history.length - this.#historyLimit);
  }

  /**
   * Moves every remote selection through an operation applied to the local text.
   * @param {Operation} op
   * @param {string | undefined} authorScene the scene that made it (its own caret moves after its insert)
   */
  moveThrough(op, authorScene) {
    for (const presence of this.remote.values()) {
      if (presence.selection) presence.selection = transformSelection(op, presence.selection, authorScene === presence.scene);
    }
  }

  /**
   * A `presence` event, or an entry of `openDocument`'s `presence`. Returns whether it changed anything.
   * @param {any} event
   * @param {object} local
   * @param {string | null} local.scene this scene, whose own presence is ignored
   * @param {number} local.revision the server revision of the local text
   * @param {string} local.text
   * @param {(selection: Selection) => Selection} local.pastUnacknowledged moves a selection past local edits
   */
  received(event, local) {
    if (!event || !event.scene || event.scene === local.scene) return false;
    if (event.left) return this.remote.delete(event.scene);
    /** @type {Selection | null} */
    let selection = null;
    if (event.selection && typeof event.selection.anchor === 'number') {
      selection = { anchor: event.selection.anchor, head: event.selection.head ?? event.selection.anchor };
      const from = Number(event.revision ?? local.revision);
      for (const entry of this.#history) {
        if (entry.revision > from) selection = transformSelection(entry.op, selection, false);
      }
      selection = clampSelection(local.pastUnacknowledged(selection), codePointLength(local.text));
    }
    const previous = this.remote.get(event.scene);
    this.remote.set(event.scene, {
      scene: event.scene,
      user: event.user ?? previous?.user ?? '',
      name: event.name ?? previous?.name ?? event.user ?? '',
      color: event.color ?? previous?.color ?? '#888',
      selection,
      // The scene's own payload (`setPresence`'s `data`); every presence carries it.
      data: event.data !== undefined ? event.data : previous?.data ?? null,
      updatedAt: Date.now(),
    });
    return true;
  }

  /**
   * This scene's selection (code points, local text); sent shortly, gathered with further moves.
   * @param {Selection | null} selection
   */
  setSelection(selection) {
    const same =
      selection && this.selection
        ? selection.anchor === this.selection.anchor && selection.head === this.selection.head
        : selection === this.selection;
    if (same) return;
    this.selection = selection;
    this.#dirty = true;
    if (this.#timer === null) {
      this.#timer = this.#timers.setTimeout(() => {
        this.#timer = null;
        this.flush();
      }, SEND_DELAY_MS);
    }
  }

  /** Marks the selection to be sent again (after a reconnect). */
  resend() {
    this.#dirty = this.selection !== null;
    this.flush();
  }

  /** Sends the selection if it changed and can be placed now; one `setPresence` at a time. */
  flush() {
    if (!this.#dirty || this.#inFlight) return;
    const sent = this.#send(this.selection);
    if (!sent) return;
    this.#dirty = false;
    this.#inFlight = true;
    sent
      .catch(() => {})
      .finally(() => {
        this.#inFlight = false;
        if (this.#dirty) this.flush();
      });
  }

  /** @param {number} length */
  clampLocal(length) {
    if (this.selection) this.selection = clampSelection(this.selection, length);
  }

  stop() {
    if (this.#timer !== null) this.#timers.clearTimeout(this.#timer);
    this.#timer = null;
  }
}

/**
 * @param {Selection} selection
 * @param {number} length
 * @returns {Selection}
 */
export function clampSelection(selection, length) {
  const clamp = (/** @type {number} */ n) => Math.min(Math.max(n, 0), length);
  return { anchor: clamp(selection.anchor), head: clamp(selection.head) };
}
