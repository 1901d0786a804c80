// @ts-check
/**
 * The client side of server-authoritative OT for one open text document, as in ot.js: at most
 * one operation is in flight to the server, and edits made meanwhile wait in a buffer.
 *
 * States:
 * - `synchronized`: everything local is on the server.
 * - `awaitingConfirm`: one operation (`outstanding`) is sent and not yet acknowledged.
 * - `awaitingWithBuffer`: as above, plus local edits made since (`buffer`), sent after the ack.
 *
 * Transport-agnostic: it calls `send(revision, op, opId)` and is told about the server's
 * operations and acknowledgements; it never touches a socket or the text itself. The caller
 * applies to its text what `applyServer` returns.
 *
 * Reconnecting: call `disconnected()` when the socket drops; edits go on and are held. Once
 * connected again, feed the operations the server applied since `revision` to `applyServer`
 * with their op ids, then call `resend()`.
 *
 * Argument order follows the server's convention (see `transform` in ot.js): the operation the
 * server has not applied yet comes first, so this client and the server break insert ties the
 * same way.
 *
 * @module ot-client
 */
import { compose, isNoop, transform, transformSelection } from './ot.js';

/** @typedef {import('./ot.js').Operation} Operation */
/** @typedef {import('./ot.js').Selection} Selection */
/**
 * Sends an operation, made against server revision `revision`, with its client op id.
 * @typedef {(revision: number, op: Operation, opId: string) => void} SendOperation
 */
/**
 * @typedef {{ name: 'synchronized' }
 *   | { name: 'awaitingConfirm', outstanding: Operation, opId: string }
 *   | { name: 'awaitingWithBuffer', outstanding: Operation, opId: string, buffer: Operation, bufferId: string }} ClientState
 */

export class OTClient {
  /**
   * @param {object} options
   * @param {number} options.revision the server revision the local text is at
   * @param {string} options.idPrefix unique to this client (the session id); op ids are `prefix:n`
   * @param {SendOperation} options.send
   */
  constructor({ revision, idPrefix, send }) {
    /** The server revision the local text is based on: every server operation seen or acknowledged. */
    this.revision = revision;
    this.idPrefix = idPrefix;
    this.send = send;
    this.counter = 0;
    /** @type {ClientState} */
    this.state = { name: 'synchronized' };
    /** False between `disconnected()` and `resend()`: nothing is sent meanwhile. */
    this.connected = true;
  }

  /** The id of the operation in flight, or null. */
  get outstandingId() {
    return this.state.name === 'synchronized' ? null : this.state.opId;
  }

  nextId() {
    this.counter += 1;
    return `${this.idPrefix}:${this.counter}`;
  }

  /**
   * A local edit, already applied to the local text: sent now, or buffered while another
   * operation is in flight. No-ops are dropped.
   * @param {Operation} op
   */
  applyClient(op) {
    if (isNoop(op)) return;
    const state = this.state;
    switch (state.name) {
      case 'synchronized': {
        const opId = this.nextId();
        this.state = { name: 'awaitingConfirm', outstanding: op, opId };
        if (this.connected) this.send(this.revision, op, opId);
        break;
      }
      case 'awaitingConfirm':
        // The buffer's id is fixed now, long before it is sent: a window that keeps its
        // unsent edits (documents.js) has stored it with them by then.
        this.state = { ...state, name: 'awaitingWithBuffer', buffer: op, bufferId: this.nextId() };
        break;
      case 'awaitingWithBuffer':
        this.state = { ...state, buffer: compose(state.buffer, op) };
        break;
    }
  }

  /**
   * An operation from the server, at revision `this.revision`. Returns the operation to apply
   * to the local text, or null when it is this client's own operation coming back (as after a
   * reconnect, when the server replays its log): that counts as the acknowledgement.
   * @param {Operation} op
   * @param {string} [opId] the id the server reports for it, if any
   * @returns {Operation | null}
   */
  applyServer(op, opId) {
    const state = this.state;
    if (opId !== undefined && state.name !== 'synchronized' && opId === state.opId) {
      this.serverAck();
      return null;
    }
    this.revision += 1;
    switch (state.name) {
      case 'synchronized':
        return op;
      case 'awaitingConfirm': {
        const [outstanding, local] = transform(state.outstanding, op);
        this.state = { ...state, outstanding };
        return local;
      }
      case 'awaitingWithBuffer': {
        const [outstanding, pastOutstanding] = transform(state.outstanding, op);
        const [buffer, local] = transform(state.buffer, pastOutstanding);
        this.state = { ...state, outstanding, buffer };
        return local;
      }
    }
  }

  /**
   * The server applied the outstanding operation; the buffer, if any, goes out next.
   * @param {string} [opId] the acknowledged id; an ack for an id not in flight (a duplicate,
   *   after a resend) is ignored
   * @returns {boolean} whether it acknowledged the outstanding operation
   */
  serverAck(opId) {
    const state = this.state;
    if (state.name === 'synchronized' || (opId !== undefined && opId !== state.opId)) {
      if (opId !== undefined) return false;
      throw new Error('an acknowledgement arrived with no operation in flight');
    }
    this.revision += 1;
    if (state.name === 'awaitingConfirm') {
      this.state = { name: 'synchronized' };
    } else {
      this.state = { name: 'awaitingConfirm', outstanding: state.buffer, opId: state.bufferId };
      if (this.connected) this.send(this.revision, state.buffer, state.bufferId);
    }
    return true;
  }

  /** The connection is gone: hold everything until `resend()`. */
  disconnected() {
    this.connected = false;
  }

  /**
   * Connected again, and the operations missed meanwhile have gone through `applyServer`
   * (which acknowledges this client's own operation if the server had applied it). Sends the
   * outstanding operation, transformed to the current revision and with the same op id, so a
   * server that did apply it after all can recognise it and not apply it twice.
   * @returns {{ revision: number, op: Operation, opId: string } | null} what was sent, or null
   */
  resend() {
    this.connected = true;
    const state = this.state;
    if (state.name === 'synchronized') return null;
    this.send(this.revision, state.outstanding, state.opId);
    return { revision: this.revision, op: state.outstanding, opId: state.opId };
  }

  /**
   * The local edits not yet acknowledged, oldest first, each with the op id it is (or will
   * be) sent with: what a window keeps to send again after a reload.
   * @returns {Array<{ op: Operation, opId: string }>}
   */
  pending() {
    const state = this.state;
    if (state.name === 'synchronized') return [];
    const first = { op: state.outstanding, opId: state.opId };
    return state.name === 'awaitingWithBuffer' ? [first, { op: state.buffer, opId: state.bufferId }] : [first];
  }

  /**
   * Takes back edits kept from an earlier page (`pending()`), made on revision `revision`,
   * as unsent: nothing goes out until `resend()`.
   * @param {number} revision
   * @param {Array<{ op: Operation, opId: string }>} pending
   */
  restore(revision, pending) {
    this.revision = revision;
    this.connected = false;
    const [first, ...rest] = pending.filter((p) => !isNoop(p.op));
    if (!first) {
      this.state = { name: 'synchronized' };
      return;
    }
    if (rest.length === 0) {
      this.state = { name: 'awaitingConfirm', outstanding: first.op, opId: first.opId };
      return;
    }
    const buffer = rest.slice(1).reduce((a, p) => compose(a, p.op), rest[0].op);
    this.state = { name: 'awaitingWithBuffer', outstanding: first.op, opId: first.opId, buffer, bufferId: rest[0].opId };
  }

  /**
   * The server's log no longer reaches back to `this.revision`: the unacknowledged edits are
   * moved over `difference`, an operation from the text they were made on to the server's
   * text at `revision`, as over one operation of the server's, and wait for `resend()`.
   * Returns the operation to apply to the local text (the difference, moved past them).
   * @param {number} revision
   * @param {Operation} difference
   * @returns {Operation}
   */
  rebase(revision, difference) {
    const state = this.state;
    let local = difference;
    switch (state.name) {
      case 'awaitingConfirm': {
        const [outstanding, past] = transform(state.outstanding, difference);
        this.state = { ...state, outstanding };
        local = past;
        break;
      }
      case 'awaitingWithBuffer': {
        const [outstanding, pastOutstanding] = transform(state.outstanding, difference);
        const [buffer, past] = transform(state.buffer, pastOutstanding);
        this.state = { ...state, outstanding, buffer };
        local = past;
        break;
      }
    }
    this.revision = revision;
    return local;
  }

  /**
   * The outstanding operation is known to be applied (the server said so), but its effect is
   * already in the text being caught up to: it is dropped, and the buffer becomes outstanding.
   * @returns {Operation | null} the dropped operation
   */
  dropOutstanding() {
    const state = this.state;
    if (state.name === 'synchronized') return null;
    this.state = state.name === 'awaitingWithBuffer'
      ? { name: 'awaitingConfirm', outstanding: state.buffer, opId: state.bufferId }
      : { name: 'synchronized' };
    return state.outstanding;
  }

  /**
   * A selection received at `this.revision` (another user's presence), moved past this
   * client's unsent edits so it fits the local text.
   * @param {Selection} selection
   * @returns {Selection}
   */
  transformSelection(selection) {
    const state = this.state;
    if (state.name === 'synchronized') return selection;
    const moved = transformSelection(state.outstanding, selection);
    return state.name === 'awaitingWithBuffer' ? transformSelection(state.buffer, moved) : moved;
  }
}
