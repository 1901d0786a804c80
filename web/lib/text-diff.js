// @ts-check
/**
 * The difference between two texts as an operation (ot.js): what a window's unsent edits are
 * rebased over when the server's log no longer reaches back to the revision they were made on
 * (documents.js). A real diff, so edits far from each other stay apart: Myers' O(ND)
 * algorithm ("An O(ND) Difference Algorithm and Its Variations", 1986) in its linear-space
 * form, the middle snake found from both ends at once, as Neil Fraser's diff-match-patch
 * writes it (`diff_bisect`).
 *
 * Two passes, as diff-match-patch's line mode: first over lines (each distinct line one
 * token), then, inside each run of changed lines, over code points. A 1 MB text with edits in
 * a few hundred places costs a line diff of some thousands of tokens and small character
 * diffs, not a character diff of a million code points. A text whose lines are very long is
 * cut into words for the first pass instead.
 *
 * Bounded: past `budget` steps of the search (a pathological pair of texts), the changed runs
 * still left are each replaced whole. The result is always exact: `apply(a, diff(a, b)) === b`.
 *
 * Positions are code points, as everywhere in ot.js: a surrogate pair is never split.
 *
 * Why not a library: Debian's node-diff (jsdiff 5.0) was the candidate. It splits strings into
 * UTF-16 units (so it can cut a surrogate pair), its Myers keeps every path it explores (memory
 * grows with the square of the distance), and the package ships no module the browser can load
 * from web/ without a bundler. The algorithm is short; the tests check it against a brute-force
 * edit distance on small texts and for exactness on random large ones.
 *
 * @module text-diff
 */

import { codePointLength, normalize } from './ot.js';

/** @typedef {import('./ot.js').Operation} Operation */

/** Search steps allowed for one diff before the remaining changed runs are replaced whole. */
export const DEFAULT_DIFF_BUDGET = 20_000_000;

/** Average line length (UTF-16 units) above which the first pass cuts words, not lines. */
const LONG_LINES = 400;

/**
 * An edit script over two token arrays: runs of [kind, count], kind 0 = both have them
 * (retain), 1 = only `a` (delete), 2 = only `b` (insert), in order.
 * @typedef {Array<[0 | 1 | 2, number]>} Script
 */

class Budget {
  /** @param {number} steps */
  constructor(steps) {
    this.left = steps;
  }
}

/**
 * Appends a run to a script, merging it with the last one of the same kind.
 * @param {Script} script
 * @param {0 | 1 | 2} kind
 * @param {number} count
 */
function push(script, kind, count) {
  if (count <= 0) return;
  const last = script[script.length - 1];
  if (last && last[0] === kind) last[1] += count;
  else script.push([kind, count]);
}

/**
 * Myers' diff of `a[aLo..<aHi]` and `b[bLo..<bHi]` (integer tokens), appended to `script`.
 * @param {Int32Array} a
 * @param {number} aLo
 * @param {number} aHi
 * @param {Int32Array} b
 * @param {number} bLo
 * @param {number} bHi
 * @param {Script} script
 * @param {Budget} budget
 */
function diffRange(a, aLo, aHi, b, bLo, bHi, script, budget) {
  // Common prefix and suffix cost nothing to find and shrink the search.
  let prefix = 0;
  while (aLo + prefix < aHi && bLo + prefix < bHi && a[aLo + prefix] === b[bLo + prefix]) prefix++;
  aLo += prefix;
  bLo += prefix;
  let suffix = 0;
  while (aHi - suffix > aLo && bHi - suffix > bLo && a[aHi - 1 - suffix] === b[bHi - 1 - suffix]) suffix++;
  aHi -= suffix;
  bHi -= suffix;
  push(script, 0, prefix);
  if (aLo === aHi) {
    push(script, 2, bHi - bLo);
  } else if (bLo === bHi) {
    push(script, 1, aHi - aLo);
  } else {
    const split = budget.left > 0 ? middleSnake(a, aLo, aHi, b, bLo, bHi, budget) : null;
    if (split) {
      diffRange(a, aLo, split[0], b, bLo, split[1], script, budget);
      diffRange(a, split[0], aHi, b, split[1], bHi, script, budget);
    } else {
      // Nothing in common, or out of budget: replace the run.
      push(script, 1, aHi - aLo);
      push(script, 2, bHi - bLo);
    }
  }
  push(script, 0, suffix);
}

/**
 * Where the shortest edit path of the two ranges crosses its middle: a point `[x, y]` (absolute
 * indices) that splits the problem in two, or null when the ranges share nothing or the
 * budget ran out. diff-match-patch's `diff_bisect`, on index ranges.
 * @param {Int32Array} a
 * @param {number} aLo
 * @param {number} aHi
 * @param {Int32Array} b
 * @param {number} bLo
 * @param {number} bHi
 * @param {Budget} budget
 * @returns {[number, number] | null}
 */
function middleSnake(a, aLo, aHi, b, bLo, bHi, budget) {
  const n = aHi - aLo;
  const m = bHi - bLo;
  const maxD = Math.ceil((n + m) / 2);
  const offset = maxD;
  const size = 2 * maxD + 2;
  const forward = new Int32Array(size).fill(-1);
  const backward = new Int32Array(size).fill(-1);
  forward[offset + 1] = 0;
  backward[offset + 1] = 0;
  const delta = n - m;
  // With an odd delta the paths meet while extending forward, else while extending backward.
  const front = (delta & 1) !== 0;
  let k1start = 0;
  let k1end = 0;
  let k2start = 0;
  let k2end = 0;
  for (let d = 0; d < maxD; d++) {
    budget.left -= 2 * d + 1;
    if (budget.left <= 0) return null;
    for (let k1 = -d + k1start; k1 <= d - k1end; k1 += 2) {
      const i = offset + k1;
      let x1 = k1 === -d || (k1 !== d && forward[i - 1] < forward[i + 1]) ? forward[i + 1] : forward[i - 1] + 1;
      let y1 = x1 - k1;
      while (x1 < n && y1 < m && a[aLo + x1] === b[bLo + y1]) {
        x1++;
        y1++;
      }
      forward[i] = x1;
      if (x1 > n) {
        k1end += 2; // off the right edge
      } else if (y1 > m) {
        k1start += 2; // off the bottom edge
      } else if (front) {
        const j = offset + delta - k1;
        if (j >= 0 && j < size && backward[j] !== -1 && x1 >= n - backward[j]) return [aLo + x1, bLo + y1];
      }
    }
    for (let k2 = -d + k2start; k2 <= d - k2end; k2 += 2) {
      const i = offset + k2;
      let x2 = k2 === -d || (k2 !== d && backward[i - 1] < backward[i + 1]) ? backward[i + 1] : backward[i - 1] + 1;
      let y2 = x2 - k2;
      while (x2 < n && y2 < m && a[aHi - 1 - x2] === b[bHi - 1 - y2]) {
        x2++;
        y2++;
      }
      backward[i] = x2;
      if (x2 > n) {
        k2end += 2;
      } else if (y2 > m) {
        k2start += 2;
      } else if (!front) {
        const j = offset + delta - k2;
        if (j >= 0 && j < size && forward[j] !== -1) {
          const x1 = forward[j];
          const y1 = x1 - (j - offset);
          if (x1 >= n - x2) return [aLo + x1, bLo + y1];
        }
      }
    }
  }
  return null;
}

/**
 * The edit script between two token arrays.
 * @param {Int32Array} a
 * @param {Int32Array} b
 * @param {Budget} budget
 * @returns {Script}
 */
function diffTokens(a, b, budget) {
  /** @type {Script} */
  const script = [];
  diffRange(a, 0, a.length, b, 0, b.length, script, budget);
  return script;
}

/**
 * A text's code points.
 * @param {string} text
 */
function codePoints(text) {
  const out = new Int32Array(text.length);
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.codePointAt(i) ?? 0;
    out[n++] = c;
    if (c > 0xffff) i++;
  }
  return out.subarray(0, n);
}

/**
 * Cuts a text into the first pass's pieces: lines (each with its newline), or, when lines are
 * long, words (each with the spaces after it). Joined again they are the text.
 * @param {string} text
 * @param {boolean} words
 * @returns {string[]}
 */
function pieces(text, words) {
  const out = [];
  if (words) {
    for (const match of text.matchAll(/\S*\s*/g)) {
      if (match[0] === '') break;
      out.push(match[0]);
    }
    return out;
  }
  let start = 0;
  for (let end = text.indexOf('\n'); end >= 0; end = text.indexOf('\n', start)) {
    out.push(text.slice(start, end + 1));
    start = end + 1;
  }
  if (start < text.length) out.push(text.slice(start));
  return out;
}

/**
 * Collects an operation's components as they come; `normalize` (ot.js) merges neighbours and
 * puts inserts before deletes at the end.
 */
class OperationBuilder {
  constructor() {
    /** @type {Operation} */
    this.ops = [];
  }

  /** @param {number} n */
  retain(n) {
    if (n > 0) this.ops.push(n);
  }

  /** @param {string} text */
  insert(text) {
    if (text !== '') this.ops.push(text);
  }

  /** @param {number} n */
  delete(n) {
    if (n > 0) this.ops.push(-n);
  }
}

/**
 * Adds the character-level difference of two strings to an operation.
 * @param {OperationBuilder} out
 * @param {string} from
 * @param {string} to
 * @param {Budget} budget
 */
function diffCharacters(out, from, to, budget) {
  const a = codePoints(from);
  const b = codePoints(to);
  let bIndex = 0; // in code points of `to`
  let bOffset = 0; // in UTF-16 units of `to`
  for (const [kind, count] of diffTokens(a, b, budget)) {
    if (kind === 0) {
      out.retain(count);
      for (let i = 0; i < count; i++) bOffset += b[bIndex++] > 0xffff ? 2 : 1;
    } else if (kind === 1) {
      out.delete(count);
    } else {
      const start = bOffset;
      for (let i = 0; i < count; i++) bOffset += b[bIndex++] > 0xffff ? 2 : 1;
      out.insert(to.slice(start, bOffset));
    }
  }
}

/**
 * The operation that turns `from` into `to`, as small as Myers' diff finds it (see the module
 * comment for the two passes and the budget). `apply(from, diff(from, to)) === to` always.
 * @param {string} from
 * @param {string} to
 * @param {{ budget?: number }} [options] `budget`: search steps before changed runs are replaced whole
 * @returns {Operation}
 */
export function diffOperation(from, to, options = {}) {
  const budget = new Budget(options.budget ?? DEFAULT_DIFF_BUDGET);
  const out = new OperationBuilder();
  // The common ends, in UTF-16 units without splitting a surrogate pair.
  const shortest = Math.min(from.length, to.length);
  let prefix = 0;
  while (prefix < shortest && from.charCodeAt(prefix) === to.charCodeAt(prefix)) prefix++;
  if (prefix > 0 && isHigh(from.charCodeAt(prefix - 1))) prefix--;
  let suffix = 0;
  while (suffix < shortest - prefix && from.charCodeAt(from.length - 1 - suffix) === to.charCodeAt(to.length - 1 - suffix)) suffix++;
  if (suffix > 0 && isLow(from.charCodeAt(from.length - suffix))) suffix--;
  out.retain(codePointLength(from.slice(0, prefix)));
  diffMiddle(out, from.slice(prefix, from.length - suffix), to.slice(prefix, to.length - suffix), budget);
  out.retain(codePointLength(from.slice(from.length - suffix)));
  return normalize(out.ops);
}

/** @param {number} unit */
const isHigh = (unit) => unit >= 0xd800 && unit <= 0xdbff;
/** @param {number} unit */
const isLow = (unit) => unit >= 0xdc00 && unit <= 0xdfff;

/**
 * The two passes over what differs between the texts' common ends.
 * @param {OperationBuilder} out
 * @param {string} from
 * @param {string} to
 * @param {Budget} budget
 */
function diffMiddle(out, from, to, budget) {
  if (from === '' || to === '') {
    out.insert(to);
    out.delete(codePointLength(from));
    return;
  }
  const newlines = (/** @type {string} */ text) => {
    let n = 1;
    for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) n++;
    return n;
  };
  const longLines = (from.length + to.length) / (newlines(from) + newlines(to)) > LONG_LINES;
  const piecesA = pieces(from, longLines);
  const piecesB = pieces(to, longLines);
  /** @type {Map<string, number>} */
  const ids = new Map();
  /**
   * Code points of each distinct piece, by id.
   * @type {number[]}
   */
  const lengths = [];
  const tokens = (/** @type {string[]} */ list) => {
    const array = new Int32Array(list.length);
    list.forEach((piece, i) => {
      let id = ids.get(piece);
      if (id === undefined) {
        id = ids.size;
        ids.set(piece, id);
        lengths.push(codePointLength(piece));
      }
      array[i] = id;
    });
    return array;
  };
  const a = tokens(piecesA);
  const b = tokens(piecesB);
  const script = diffTokens(a, b, budget);
  let ia = 0;
  let ib = 0;
  for (let s = 0; s < script.length; s++) {
    const [kind, count] = script[s];
    if (kind === 0) {
      for (let i = 0; i < count; i++) out.retain(lengths[a[ia++]]);
      ib += count;
      continue;
    }
    // A run of changed pieces: the deletes and inserts until the next common piece.
    let deleted = '';
    let inserted = '';
    for (; s < script.length && script[s][0] !== 0; s++) {
      const [k, c] = script[s];
      if (k === 1) deleted += piecesA.slice(ia, (ia += c)).join('');
      else inserted += piecesB.slice(ib, (ib += c)).join('');
    }
    s--;
    diffCharacters(out, deleted, inserted, budget);
  }
}
