// @ts-check
/**
 * Reconnection delays: exponential backoff with jitter, so that a thousand tabs that lost the
 * same server do not all come back in the same millisecond.
 *
 * Two ceilings. While the server cannot be reached at all (the socket never opens: it is
 * down, restarting, or the network is), a retry costs it nothing, so attempts stay at most
 * `unreachableMaxMs` apart and a server that comes back is found within about that long. Once
 * it answers and then refuses or fails (overloaded, draining, faulting), the delays grow to
 * `maxMs`, which is what protects it.
 *
 * @module backoff
 */

/** @typedef {import('../types/panes-client.js').BackoffOptions} BackoffOptions */

export const DEFAULT_BACKOFF = Object.freeze({ baseMs: 250, maxMs: 15000, unreachableMaxMs: 2000, factor: 2, jitter: 0.5 });

/**
 * The delay before reconnection attempt `attempt` (0 for the first retry): `base · factor^attempt`
 * capped, of which the last `jitter` part is random ("equal jitter"): with the defaults,
 * attempt 3 waits between 1 and 2 seconds.
 * @param {number} attempt
 * @param {BackoffOptions} [options]
 * @param {() => number} [random] a number in [0, 1), as `Math.random`
 * @param {{ unreachable?: boolean }} [situation] the last attempt never reached the server
 * @returns {number} milliseconds
 */
export function backoffDelay(attempt, options = {}, random = Math.random, situation = {}) {
  const baseMs = options.baseMs ?? DEFAULT_BACKOFF.baseMs;
  const maxMs = options.maxMs ?? DEFAULT_BACKOFF.maxMs;
  const unreachableMaxMs = options.unreachableMaxMs ?? DEFAULT_BACKOFF.unreachableMaxMs;
  const factor = options.factor ?? DEFAULT_BACKOFF.factor;
  const jitter = options.jitter ?? DEFAULT_BACKOFF.jitter;
  const cap = situation.unreachable ? Math.min(unreachableMaxMs, maxMs) : maxMs;
  const exponent = Math.max(0, Math.min(attempt, 30));
  const ceiling = Math.min(cap, baseMs * factor ** exponent);
  const spread = Math.min(Math.max(jitter, 0), 1);
  return Math.round(ceiling * (1 - spread) + ceiling * spread * random());
}
