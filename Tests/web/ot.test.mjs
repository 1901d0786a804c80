// Tests for web/lib/ot.js: examples, randomised OT laws, UTF-16 <-> code point offsets,
// diffToOperation, and the vectors shared with the Swift implementation.
//
// Regenerate Tests/Fixtures/ot-vectors.json (then run the Swift tests, which must agree):
//   UPDATE_OT_VECTORS=1 node --test Tests/web/ot.test.mjs
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { seededRandom } from './support/seeded-random.mjs';
import {
  MAX_COMPONENT_LENGTH,
  OTError,
  apply,
  baseLength,
  codePointLength,
  compose,
  diffToOperation,
  fromJSON,
  isNoop,
  normalize,
  scalarToUtf16,
  targetLength,
  transform,
  transformPosition,
  transformSelection,
  utf16ToScalar,
} from '../../web/lib/ot.js';

const SEEDS = 500;
const fixtureURL = new URL('../Fixtures/ot-vectors.json', import.meta.url);

// --- Deterministic randomness (mulberry32), the same pieces of text as the Swift tests ---

/** @param {number} seed */
function makeRandom(seed) {
  const { int } = seededRandom(seed);
  const pieces = ['a', 'b', 'c', ' ', '\n', 'é', 'e\u0301', '\u0308', '漢', '字', '😀', '𝒳', '👩\u200d💻', '🇫🇷'];
  /** @param {number} maxPieces */
  const text = (maxPieces) => {
    let out = '';
    for (let n = int(maxPieces + 1); n > 0; n--) out += pieces[int(pieces.length)];
    return out;
  };
  /** A random operation spanning `doc`. @param {string} doc */
  const operation = (doc) => {
    const op = [];
    let remaining = codePointLength(doc);
    while (remaining > 0) {
      const count = 1 + int(Math.min(remaining, 6));
      const kind = int(5);
      if (kind < 2) {
        op.push(count);
        remaining -= count;
      } else if (kind < 4) {
        op.push(-count);
        remaining -= count;
      } else {
        op.push(text(4));
      }
    }
    if (int(2) === 1) op.push(text(3));
    return normalize(op);
  };
  /** The operation with components cut into random smaller ones. @param {import('../../web/lib/ot.js').Operation} op */
  const split = (op) => {
    const parts = [];
    for (const c of op) {
      if (typeof c === 'string') {
        let points = Array.from(c);
        while (points.length > 0) {
          const take = 1 + int(points.length);
          parts.push(points.slice(0, take).join(''));
          points = points.slice(take);
        }
      } else {
        let left = Math.abs(c);
        while (left > 0) {
          const take = 1 + int(left);
          parts.push(Math.sign(c) * take);
          left -= take;
        }
      }
    }
    return parts;
  };
  return { int, text, operation, split };
}

/** A slow, obviously right apply over `Array.from` code points, to check the fast one. */
function referenceApply(doc, op) {
  const points = Array.from(doc);
  let index = 0;
  let out = '';
  for (const c of op) {
    if (typeof c === 'string') out += c;
    else if (c > 0) out += points.slice(index, (index += c)).join('');
    else index -= c;
  }
  assert.equal(index, points.length);
  return out;
}

/** @param {import('../../web/lib/ot.js').Operation} op */
function isCanonical(op) {
  return op.every((c, i) => {
    if (c === 0 || c === '') return false;
    const next = op[i + 1];
    if (next === undefined) return true;
    const kind = (/** @type {string | number} */ x) => (typeof x === 'string' ? 'i' : x > 0 ? 'r' : 'd');
    return kind(c) !== kind(next) && !(kind(c) === 'd' && kind(next) === 'i');
  });
}

// --- Examples ---

describe('canonical form', () => {
  test('normalize merges neighbours, drops empty components and puts inserts before deletes', () => {
    assert.deepEqual(normalize([2, 3, '', 0, -1, -2, 'x']), [5, 'x', -3]);
    assert.deepEqual(normalize(['a', -2, 'b', 1]), ['ab', -2, 1]);
  });

  test('lengths count code points', () => {
    assert.equal(baseLength([5, 'hi', -3, 10]), 18);
    assert.equal(targetLength([1, '😀𝒳', -1]), 3);
    assert.equal(codePointLength('a😀e\u0301👩\u200d💻'), 7);
  });

  test('isNoop holds for retains only', () => {
    assert.ok(isNoop([]));
    assert.ok(isNoop([4]));
    assert.ok(!isNoop([4, 'x']));
  });
});

describe('fromJSON', () => {
  test('normalises non-canonical input', () => {
    assert.deepEqual(fromJSON([1, 2, -1, -1, 'x', 'y', 3]), [3, 'xy', -2, 3]);
    assert.deepEqual(fromJSON([]), []);
  });

  test('accepts the largest component', () => {
    assert.deepEqual(fromJSON([MAX_COMPONENT_LENGTH, -MAX_COMPONENT_LENGTH]), [MAX_COMPONENT_LENGTH, -MAX_COMPONENT_LENGTH]);
  });

  const cases = [
    [{ retain: 3 }, '`operation` must be an array of components, not object'],
    ['abc', '`operation` must be an array of components, not string'],
    [[1, true], '`operation[1]` must be an integer or a string, not boolean'],
    [[null], '`operation[0]` must be an integer or a string, not null'],
    [[[1]], '`operation[0]` must be an integer or a string, not array'],
    [[1, 0], '`operation[1]` is 0; use n > 0 to retain, -n to delete, or a string to insert'],
    [['a', ''], '`operation[1]` is an empty string; an insert needs text'],
    [[1.5], '`operation[0]` is 1.5, not a whole number'],
    [[2147483648], '`operation[0]` is 2147483648, beyond the largest length 2147483647'],
    [[-2147483648], '`operation[0]` is -2147483648, beyond the largest length 2147483647'],
  ];
  for (const [json, message] of cases) {
    test(`rejects ${JSON.stringify(json)} naming what is wrong`, () => {
      assert.throws(() => fromJSON(json), (error) => {
        assert.ok(error instanceof OTError);
        assert.equal(error.code, 'invalid_operation');
        assert.equal(error.message, message);
        return true;
      });
    });
  }

  test('names the request field', () => {
    assert.throws(() => fromJSON([0], 'ops'), /^OTError: `ops\[0\]` is 0/);
  });
});

describe('apply', () => {
  test('retains, inserts and deletes', () => {
    assert.equal(apply('hello there', [6, 'brave new ', -5, 'world']), 'hello brave new world');
  });

  test('counts astral characters as one position', () => {
    assert.equal('a😀b𝒳c'.length, 7);
    assert.equal(apply('a😀b𝒳c', [1, '👍', -1, 2, '𝒴', -1]), 'a👍b𝒳𝒴');
  });

  test('counts combining marks separately', () => {
    assert.equal(apply('cafe\u0301!', [4, -1, 1]), 'cafe!');
    assert.equal(apply('cafe\u0301!', [4, '\u0300', 2]), 'cafe\u0300\u0301!');
  });

  test('rejects an operation that does not span the document, naming both lengths', () => {
    assert.throws(() => apply('a😀bc', [3]), {
      name: 'OTError',
      message: 'the operation spans 3 Unicode scalars but the document has 4',
    });
    assert.throws(() => apply('a😀bc', [2, -3]), {
      message: 'the operation spans 5 Unicode scalars but the document has 4',
    });
  });

  test('handles a million code points', () => {
    const doc = 'ab😀é'.repeat(250_000);
    const op = [];
    for (let i = 0; i < 1000; i++) op.push(997, '𝒳', -2);
    op.push(1_000_000 - baseLength(op));
    assert.equal(codePointLength(apply(doc, normalize(op))), 999_000);
  });
});

describe('compose and transform', () => {
  test('compose applies both in turn', () => {
    const composed = compose([3, 'XY', -2, 1], [-1, 3, '😀', -1, 1]);
    assert.deepEqual(composed, [-1, 2, 'X😀', -2, 1]);
    assert.equal(apply('abcdef', composed), 'bcX😀f');
  });

  test('compose drops text inserted then deleted', () => {
    assert.deepEqual(compose([1, 'hello', 1], [2, -3, 2]), [1, 'ho', 1]);
  });

  test('concurrent inserts at one position put the first argument first', () => {
    const [aPrime, bPrime] = transform([1, 'A', 1], [1, 'B', 1]);
    assert.deepEqual(aPrime, [1, 'A', 2]);
    assert.deepEqual(bPrime, [2, 'B', 1]);
    assert.equal(apply(apply('xy', [1, 'A', 1]), bPrime), 'xABy');
  });

  test('mismatched operations are rejected', () => {
    assert.throws(() => compose([2, 'x'], [2]), {
      message: 'cannot compose: the first operation produces 3 scalars but the second spans 2',
    });
    assert.throws(() => transform([2], [3]), {
      message: 'cannot transform: the operations span 2 and 3 scalars, not the same document',
    });
  });
});

describe('positions', () => {
  test('a remote insert at the cursor leaves it before; the author moves past', () => {
    const op = [2, '😀😀', 2];
    assert.equal(transformPosition(op, 2), 2);
    assert.equal(transformPosition(op, 2, true), 4);
    assert.equal(transformPosition(op, 3), 5);
  });

  test('a cursor inside deleted text moves to where it was', () => {
    const op = [1, -3, 2];
    assert.deepEqual([0, 1, 2, 3, 4, 5, 6].map((p) => transformPosition(op, p)), [0, 1, 1, 1, 1, 2, 3]);
  });

  test('selections move end by end', () => {
    assert.deepEqual(transformSelection(['𝒳𝒴', 5], { anchor: 4, head: 1 }), { anchor: 6, head: 3 });
  });

  test('positions outside the document are clamped', () => {
    assert.equal(transformPosition([2, 'x'], -4), 0);
    assert.equal(transformPosition([2, 'x'], 99), 2);
    assert.equal(transformPosition([2, 'x'], 99, true), 3);
  });
});

// --- Randomised laws ---

describe('properties over random seeds', () => {
  test('apply agrees with a code-point reference', () => {
    for (let seed = 0; seed < SEEDS; seed++) {
      const r = makeRandom(seed);
      const doc = r.text(24);
      const op = r.operation(doc);
      assert.equal(apply(doc, op), referenceApply(doc, op), `seed ${seed}: ${JSON.stringify([doc, op])}`);
    }
  });

  test('transformed operations converge and keep lengths consistent (TP1)', () => {
    for (let seed = 0; seed < SEEDS; seed++) {
      const r = makeRandom(seed);
      const doc = r.text(24);
      const a = r.operation(doc);
      const b = r.operation(doc);
      const [aPrime, bPrime] = transform(a, b);
      const why = `seed ${seed}: ${JSON.stringify({ doc, a, b })}`;
      assert.equal(apply(apply(doc, a), bPrime), apply(apply(doc, b), aPrime), why);
      assert.equal(baseLength(aPrime), targetLength(b), why);
      assert.equal(baseLength(bPrime), targetLength(a), why);
      assert.equal(targetLength(aPrime), targetLength(bPrime), why);
    }
  });

  test('composing equals applying in turn, and is associative', () => {
    for (let seed = 0; seed < SEEDS; seed++) {
      const r = makeRandom(seed);
      const doc = r.text(20);
      const a = r.operation(doc);
      const b = r.operation(apply(doc, a));
      const c = r.operation(apply(apply(doc, a), b));
      const why = `seed ${seed}: ${JSON.stringify({ doc, a, b, c })}`;
      assert.equal(apply(doc, compose(a, b)), apply(apply(doc, a), b), why);
      assert.deepEqual(compose(compose(a, b), c), compose(a, compose(b, c)), why);
    }
  });

  test('results are canonical and survive the wire split into pieces', () => {
    for (let seed = 0; seed < SEEDS; seed++) {
      const r = makeRandom(seed);
      const doc = r.text(16);
      const a = r.operation(doc);
      const b = r.operation(doc);
      const [aPrime, bPrime] = transform(a, b);
      for (const op of [a, b, aPrime, bPrime, compose(a, bPrime)]) {
        const why = `seed ${seed}: ${JSON.stringify(op)}`;
        assert.ok(isCanonical(op), why);
        assert.deepEqual(fromJSON(JSON.parse(JSON.stringify(op))), op, why);
        assert.deepEqual(fromJSON(r.split(op)), op, why);
      }
    }
  });

  test('positions stay in the document, in order, and own cursors stay on their character', () => {
    for (let seed = 0; seed < SEEDS; seed++) {
      const r = makeRandom(seed);
      const doc = r.text(24);
      const op = r.operation(doc);
      const before = Array.from(doc);
      const after = Array.from(apply(doc, op));
      const why = `seed ${seed}: ${JSON.stringify({ doc, op })}`;
      for (const own of [false, true]) {
        let previous = 0;
        for (let p = 0; p <= baseLength(op); p++) {
          const moved = transformPosition(op, p, own);
          assert.ok(moved >= previous && moved <= targetLength(op), `${why} moves ${p} to ${moved}`);
          previous = moved;
        }
      }
      let old = 0;
      for (const c of op) {
        if (typeof c === 'number' && c > 0) {
          for (let p = old; p < old + c; p++) {
            assert.equal(after[transformPosition(op, p, true)], before[p], `${why} at ${p}`);
            assert.ok(transformPosition(op, p) <= transformPosition(op, p, true), `${why} at ${p}`);
          }
        }
        if (typeof c === 'number') old += Math.abs(c);
      }
    }
  });
});

// --- UTF-16 offsets and textarea diffs ---

describe('UTF-16 and code point offsets', () => {
  test('surrogate pairs count once', () => {
    const text = 'a😀b𝒳';
    assert.deepEqual([0, 1, 2, 3, 4, 5, 6].map((o) => utf16ToScalar(text, o)), [0, 1, 1, 2, 3, 3, 4]);
    assert.deepEqual([0, 1, 2, 3, 4, 5].map((i) => scalarToUtf16(text, i)), [0, 1, 3, 4, 6, 6]);
  });

  test('lone surrogates count as one position each', () => {
    assert.equal(codePointLength('\ud83d'), 1);
    assert.equal(utf16ToScalar('a\ude00b', 3), 3);
    assert.equal(scalarToUtf16('a\ud83db', 2), 2);
  });

  test('round trips over random text', () => {
    for (let seed = 0; seed < SEEDS; seed++) {
      const text = makeRandom(seed).text(20);
      const length = codePointLength(text);
      for (let i = 0; i <= length; i++) assert.equal(utf16ToScalar(text, scalarToUtf16(text, i)), i, `seed ${seed}`);
      for (let o = 0; o <= text.length; o++) {
        const back = scalarToUtf16(text, utf16ToScalar(text, o));
        const splitsPair = o > 0 && o < text.length && /[\ud800-\udbff]/.test(text[o - 1]) && /[\udc00-\udfff]/.test(text[o]);
        assert.equal(back, splitsPair ? o - 1 : o, `seed ${seed} offset ${o}`);
      }
    }
  });
});

describe('diffToOperation', () => {
  test('makes one replaced region', () => {
    assert.deepEqual(diffToOperation('hello world', 'hello brave world'), [6, 'brave ', 5]);
    assert.deepEqual(diffToOperation('abc', 'abc'), [3]);
    assert.deepEqual(diffToOperation('', 'x😀'), ['x😀']);
    assert.deepEqual(diffToOperation('abcdef', 'abXYef'), [2, 'XY', -2, 2]);
  });

  test('never splits a surrogate pair', () => {
    // 😀 is d83d de00 and 😁 is d83d de01: they share a high surrogate.
    assert.deepEqual(diffToOperation('a😀b', 'a😁b'), [1, '😁', -1, 1]);
    // 🀀 is d83c dc00 and 😀 is d83d de00; 🌀 is d83c df00.
    assert.deepEqual(diffToOperation('x\ud83c\udc00', 'x\ud83d\udc00'), [1, '\ud83d\udc00', -1]);
    assert.deepEqual(diffToOperation('😀', '😀😀'), [1, '😀']);
  });

  test('round trips random edits', () => {
    for (let seed = 0; seed < SEEDS; seed++) {
      const r = makeRandom(seed);
      const before = r.text(20);
      // Either an unrelated text or a typical single-region edit of the old one.
      const points = Array.from(before);
      const at = r.int(points.length + 1);
      const after =
        r.int(3) === 0
          ? r.text(20)
          : points.slice(0, at).join('') + r.text(3) + points.slice(at + r.int(points.length - at + 1)).join('');
      const op = diffToOperation(before, after);
      const why = `seed ${seed}: ${JSON.stringify({ before, after, op })}`;
      assert.equal(apply(before, op), after, why);
      assert.ok(isCanonical(op), why);
      assert.ok(op.filter((c) => typeof c === 'string').length <= 1, why);
      assert.ok(op.filter((c) => typeof c === 'number' && c < 0).length <= 1, why);
      // Typing plain ASCII into a textarea: the operation is just that insert.
      const typed = diffToOperation(before, points.slice(0, at).join('') + 'typed' + points.slice(at).join(''));
      assert.equal(typed.filter((c) => typeof c === 'number' && c < 0).length, 0, why);
    }
  });
});

// --- Vectors shared with the Swift implementation ---

/** Hand-picked cases: ties, overlaps, astral text, empty documents. */
const HAND_PICKED = [
  ['insert tie: a first', 'xy', [1, 'A', 1], [1, 'B', 1]],
  ['insert tie at start', 'xy', ['A', 2], ['B', 2]],
  ['insert tie at end', 'xy', [2, 'A'], [2, 'B']],
  ['insert tie in empty document', '', ['😀'], ['𝒳']],
  ['both empty', '', [], []],
  ['noop against edit', 'abc', [3], [1, -1, 1]],
  ['overlapping deletes', 'a😀cdef', [1, -3, 2], [2, -3, 1]],
  ['same delete', 'abcd', [1, -2, 1], [1, -2, 1]],
  ['delete everything twice', 'a😀b', [-3], [-3]],
  ['insert inside concurrent delete', 'abcd', [2, '𝒳', 2], [1, -2, 1]],
  ['insert at delete start', 'abcd', [1, 'X', 3], [1, -2, 1]],
  ['insert at delete end', 'abcd', [3, 'X', 1], [1, -2, 1]],
  ['replace vs replace', 'hello', ['J', -1, 4], ['Y', -1, 4]],
  ['replace vs insert', 'hello', [1, 'ipp', -3, 1], [2, '😀', 3]],
  ['astral edits', '😀𝒳👍', [1, -1, '🇫🇷', 1], [2, '\u0301', 1]],
  ['combining mark split', 'cafe\u0301', [4, -1], [3, -1, 'é', 1]],
  ['ZWJ sequence', '👩\u200d💻!', [1, -2, 1], [3, '?', 1]],
  ['CJK', '漢字漢字', [2, '的', 2], [-1, 3, '。']],
  ['insert vs delete all', 'abc', [1, 'X', 2], [-3]],
  ['many components', 'abcdefghij', [1, 'x', -1, 1, 'y', -1, 1, 'z', -1, 1, -1, 2], [-2, 2, '😀', -2, 2, 'q', 2]],
];

/** @param {string} name @param {string} doc @param {any[]} a @param {any[]} b */
function makeVector(name, doc, a, b) {
  const [aPrime, bPrime] = transform(a, b);
  const composed = compose(a, bPrime);
  const length = codePointLength(doc);
  const positions = [];
  const step = length <= 12 ? 1 : Math.ceil(length / 10);
  for (let p = 0; p <= length; p += step) positions.push([p, transformPosition(a, p), transformPosition(a, p, true)]);
  if (positions[positions.length - 1][0] !== length) {
    positions.push([length, transformPosition(a, length), transformPosition(a, length, true)]);
  }
  return { name, doc, a, b, aPrime, bPrime, composed, result: apply(doc, composed), positions };
}

const INVALID = [
  [{ retain: 3 }, '`operation` must be an array of components, not object'],
  [7, '`operation` must be an array of components, not integer'],
  [[1, true], '`operation[1]` must be an integer or a string, not boolean'],
  [[null], '`operation[0]` must be an integer or a string, not null'],
  [[{}], '`operation[0]` must be an integer or a string, not object'],
  [[3, 0], '`operation[1]` is 0; use n > 0 to retain, -n to delete, or a string to insert'],
  [[''], '`operation[0]` is an empty string; an insert needs text'],
  [[2, -0.5], '`operation[1]` is -0.5, not a whole number'],
  [[2147483648], '`operation[0]` is 2147483648, beyond the largest length 2147483647'],
  [[1, -2147483648], '`operation[1]` is -2147483648, beyond the largest length 2147483647'],
];

function generateFixture() {
  const vectors = HAND_PICKED.map(([name, doc, a, b]) => makeVector(name, doc, normalize(a), normalize(b)));
  for (let seed = 1; vectors.length < 40; seed++) {
    const r = makeRandom(seed * 7919);
    const doc = r.text(12);
    vectors.push(makeVector(`random ${seed}`, doc, r.operation(doc), r.operation(doc)));
  }
  return {
    comment:
      'OT vectors shared by web/lib/ot.js and TextOperation.swift. composed = compose(a, bPrime); ' +
      'result = apply(doc, composed); positions = [p, transformPosition(a, p), transformPosition(a, p, own)]. ' +
      'Regenerate: UPDATE_OT_VECTORS=1 node --test Tests/web/ot.test.mjs',
    vectors,
    invalid: INVALID.map(([json, message]) => ({ json, message })),
  };
}

describe('shared vectors', () => {
  if (process.env.UPDATE_OT_VECTORS === '1') {
    // One vector per line: readable in a diff, and small.
    const { comment, vectors, invalid } = generateFixture();
    const lines = (/** @type {unknown[]} */ items) => items.map((item) => '    ' + JSON.stringify(item)).join(',\n');
    writeFileSync(
      fileURLToPath(fixtureURL),
      `{\n  "comment": ${JSON.stringify(comment)},\n  "vectors": [\n${lines(vectors)}\n  ],\n` +
        `  "invalid": [\n${lines(invalid)}\n  ]\n}\n`,
    );
  }
  const fixture = JSON.parse(readFileSync(fixtureURL, 'utf8'));

  test('the fixture holds the hand-picked cases and random ones', () => {
    assert.ok(fixture.vectors.length >= 30 && fixture.vectors.length <= 50);
    assert.deepEqual(JSON.parse(JSON.stringify(generateFixture())), fixture);
  });

  for (const vector of fixture.vectors) {
    test(`vector: ${vector.name}`, () => {
      const a = fromJSON(vector.a);
      const b = fromJSON(vector.b);
      const [aPrime, bPrime] = transform(a, b);
      assert.deepEqual(aPrime, vector.aPrime);
      assert.deepEqual(bPrime, vector.bPrime);
      assert.deepEqual(compose(a, bPrime), vector.composed);
      assert.equal(apply(vector.doc, vector.composed), vector.result);
      assert.equal(apply(apply(vector.doc, b), aPrime), vector.result);
      for (const [p, other, own] of vector.positions) {
        assert.equal(transformPosition(a, p), other, `position ${p}`);
        assert.equal(transformPosition(a, p, true), own, `own position ${p}`);
      }
    });
  }

  test('every invalid vector is rejected with its message', () => {
    for (const { json, message } of fixture.invalid) assert.throws(() => fromJSON(json), { message });
  });
});
