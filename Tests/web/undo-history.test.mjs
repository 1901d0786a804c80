// Tests for web/lib/undo-history.js on its own: the inverse of an operation, how edits group
// into steps, and moving the steps past other people's edits.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { UndoHistory, invert } from '../../web/lib/undo-history.js';
import { apply, normalize, transform } from '../../web/lib/ot.js';
import { seededRandom } from './support/seeded-random.mjs';

/** A text and its history, edited as a window would. */
function editor(text = '') {
  const history = new UndoHistory({ groupMs: 1000 });
  let now = 0;
  return {
    history,
    get text() {
      return text;
    },
    edit(op, after = 10) {
      now += after;
      history.recordEdit(op, text, now);
      text = apply(text, op);
    },
    type(at, chars) {
      for (const ch of chars) {
        this.edit(normalize([at, ch, [...text].length - at]));
        at += 1;
      }
    },
    remote(op) {
      text = apply(text, op);
      history.transform(op);
    },
    undo() {
      const op = history.take('undo');
      if (!op) return false;
      const before = text;
      text = apply(text, op);
      history.recordApplied('undo', op, before, now);
      return true;
    },
    redo() {
      const op = history.take('redo');
      if (!op) return false;
      const before = text;
      text = apply(text, op);
      history.recordApplied('redo', op, before, now);
      return true;
    },
  };
}

describe('invert', () => {
  test('undoes any operation, emoji included', () => {
    const { next: random } = seededRandom(5);
    const letters = ['a', 'b', '😀', 'é', ' '];
    for (let i = 0; i < 3000; i++) {
      const text = Array.from({ length: Math.floor(random() * 12) }, () => letters[Math.floor(random() * 5)]).join('');
      const n = [...text].length;
      const at = Math.floor(random() * (n + 1));
      const deleted = Math.min(Math.floor(random() * 4), n - at);
      const op = normalize([at, random() < 0.5 ? '😀x' : '', -deleted, n - at - deleted]);
      assert.equal(apply(apply(text, op), invert(op, text)), text, JSON.stringify({ text, op }));
    }
  });
});

describe('UndoHistory', () => {
  test('a burst of typing is one step per word; a pause ends a step', () => {
    const e = editor();
    e.type(0, 'alpha ');
    e.type(6, 'beta');
    assert.equal(e.history.undo.length, 2);
    e.edit([10, '!'], 5000); // after a pause
    assert.equal(e.history.undo.length, 3);
    e.undo();
    assert.equal(e.text, 'alpha beta');
    e.undo();
    assert.equal(e.text, 'alpha ');
    e.undo();
    assert.equal(e.text, '');
    assert.equal(e.history.canUndo, false);
    e.redo();
    e.redo();
    assert.equal(e.text, 'alpha beta');
  });

  test('backspaces in a row are one step; a paste and a deleted selection are steps of their own', () => {
    const e = editor('hello world');
    for (let i = 0; i < 3; i++) e.edit(normalize([10 - i, -1])); // backspace at the end
    assert.equal(e.text, 'hello wo');
    assert.equal(e.history.undo.length, 1);
    e.edit([8, ' pasted text']);
    e.edit([-5, 15]);
    assert.equal(e.history.undo.length, 3);
    e.undo();
    assert.equal(e.text, 'hello wo pasted text');
    e.undo();
    assert.equal(e.text, 'hello wo');
    e.undo();
    assert.equal(e.text, 'hello world');
  });

  test("an undo moves past others' edits and never removes their characters", () => {
    const e = editor('0123456789');
    e.type(5, 'abc');
    e.remote([6, 'XY', 7]); // someone types inside the word
    e.remote(['>', 15]);
    assert.equal(e.text, '>01234aXYbc56789');
    e.undo();
    assert.equal(e.text, '>01234XY56789');
  });

  test('a new edit forgets what could be redone; steps emptied by others go', () => {
    const e = editor('abc');
    e.type(3, 'd');
    e.undo();
    assert.equal(e.history.canRedo, true);
    e.type(3, 'e');
    assert.equal(e.history.canRedo, false);
    e.remote([3, -1]); // someone deletes the "e": nothing of it is left to undo
    assert.equal(e.history.canUndo, false);
  });

  test('keeps at most `limit` steps, and hands out what it keeps without changing it later', () => {
    const history = new UndoHistory({ limit: 3 });
    let text = '';
    for (let i = 0; i < 5; i++) {
      const op = normalize([i * 2, 'x y'.slice(0, 2), 0]);
      history.recordEdit(op, text, i * 5000);
      text = apply(text, op);
    }
    assert.equal(history.undo.length, 3);
    const kept = history.toJSON();
    const snapshot = JSON.stringify(kept);
    history.transform(['>', [...text].length]);
    history.take('undo');
    assert.equal(JSON.stringify(kept), snapshot);
  });

  test('a restored history keeps undoing after a transform (the steps compose with others)', () => {
    const e = editor('');
    e.type(0, 'one two');
    const other = new UndoHistory();
    other.restore(JSON.parse(JSON.stringify(e.history.toJSON())));
    const [step] = transform(other.undo[other.undo.length - 1].op, [7, '!']);
    assert.equal(apply('one two!', step), 'one !');
  });
});
