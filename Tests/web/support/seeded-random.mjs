// @ts-check
// A seeded PRNG (mulberry32) for the randomized tests: the same seed gives the same run, so a
// failure names a seed that reproduces it.

/**
 * @param {number} seed
 * @returns {{ next: () => number, int: (n: number) => number }} `next` in [0, 1); `int(n)` in 0..<n
 */
export function seededRandom(seed) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (n) => Math.floor(next() * n) };
}
