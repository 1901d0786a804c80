// @ts-check
/**
 * Reconnection delays: exponential backoff with jitter, so that a thousand tabs that lost the
 * same server do not all come back in the same millisecond.
 *
 * @module backoff
 */

/**
 * @typedef {object} BackoffOptions
 * @property {number} [baseMs] the first delay (attempt 0), before jitter; default 250
 * @property {number} [maxMs] the largest delay, before jitter; default 15000
 * @property {number} [factor] growth per attempt; default 2
 * @property {number} [jitter] the fraction of the delay that is random, 0…1; default 0.5
 */

/**
 * The delay before reconnection attempt `attempt` (0 for the first retry): `base · factor^attempt`
 * capped at `max`, of which the last `jitter` part is random ("equal jitter"): with the
 * defaults, attempt 3 waits between 1 and 2 seconds.
 * @param {number} attempt
 * @param {BackoffOptions} [options]
 * @param {() => number} [random] a number in [0, 1), as `Math.random`
 * @returns {number} milliseconds
 */
export function backoffDelay(attempt, options = {}, random = Math.random) {
  const { baseMs = 250, maxMs = 15000, factor = 2, jitter = 0.5 } = options;
  const exponent = Math.max(0, Math.min(attempt, 30));
  const ceiling = Math.min(maxMs, baseMs * factor ** exponent);
  const spread = Math.min(Math.max(jitter, 0), 1);
  return Math.round(ceiling * (1 - spread) + ceiling * spread * random());
}
