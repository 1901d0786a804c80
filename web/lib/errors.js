// @ts-check
/**
 * Errors as the protocol names them (PROTOCOL.md, "Errors"), plus the few a client makes up
 * itself (`timeout`, `disconnected`, `closed`). Every error carries the protocol's `code`, and
 * an `action` that says what to do about it without knowing the code.
 *
 * @module errors
 */

/** @typedef {import('../types/panes-client.js').ErrorAction} ErrorAction */

/** @typedef {import('../types/panes-client.js').WireError} WireError */

/**
 * The action an error number's range implies (1000s fix, 2000s refresh, 3000s give up,
 * 4000s retry).
 * @param {number | undefined} number
 * @returns {ErrorAction}
 */
export function actionForNumber(number) {
  if (number === undefined) return 'retry';
  if (number >= 1000 && number < 2000) return 'fix';
  if (number >= 2000 && number < 3000) return 'refresh';
  if (number >= 3000 && number < 4000) return 'giveUp';
  return 'retry';
}

/** A failed request, or a connection that could not be made. */
export class PanesError extends Error {
  /**
   * @param {WireError} error
   * @param {string} [request] the request type that failed
   */
  constructor(error, request) {
    super(error.message || error.code);
    this.name = 'PanesError';
    /** The protocol's stable code, e.g. `session_not_found`, or `timeout` / `disconnected`. */
    this.code = error.code;
    /** The protocol's error number; 0 for errors made up by the client. */
    this.number = error.number ?? 0;
    /** @type {ErrorAction} */
    this.action = error.action ?? actionForNumber(error.number);
    /** The request field that was wrong, if any. */
    this.field = error.field;
    /** How long to wait before retrying, for `rate_limited` and `server_draining`. */
    this.retryAfterMs = error.retryAfterMs ?? error.reconnectAfterMs;
    /** The request type that failed. */
    this.request = request;
  }

  /** True when the server does not know the request type: the feature is not on this server. */
  get isUnsupported() {
    return this.code === 'unknown_type';
  }
}

/**
 * No reply came in time.
 * @param {string} request
 * @param {number} ms
 */
export function timeoutError(request, ms) {
  return new PanesError({ code: 'timeout', action: 'retry', message: `no reply to \`${request}\` within ${ms} ms` }, request);
}

/**
 * The connection dropped before the reply came; the request may or may not have been applied.
 * @param {string} request
 */
export function disconnectedError(request) {
  return new PanesError(
    { code: 'disconnected', action: 'retry', message: `the connection dropped before \`${request}\` was answered` },
    request,
  );
}

/**
 * The client was closed (or its session destroyed) and sends nothing more.
 * @param {string} request
 */
export function closedError(request) {
  return new PanesError({ code: 'closed', action: 'giveUp', message: 'the client is closed' }, request);
}

/**
 * The scene's session was destroyed (close code 4001) before the request was answered. For
 * `requestDestruction` of the scene's own session this means the destruction happened but
 * its reply was lost behind the close.
 * @param {string} request
 */
export function destroyedError(request) {
  return new PanesError(
    { code: 'closed', action: 'giveUp', message: `the session was destroyed (close 4001) before \`${request}\` was answered` },
    request,
  );
}
