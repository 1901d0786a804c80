// @ts-check
/**
 * One window's undo and redo of its own edits to one document (`DocumentSession.undo()`),
 * as each UIKit scene has its own undo manager.
 *
 * A step is the inverse of one or more of this window's edits, kept as an operation on the
 * window's current text. Every edit that reaches the text from elsewhere (another person's,
 * a catch-up) transforms both stacks, top first, as ot.js's undo manager and ShareDB's
 * `sharedb-undo` do: undoing then takes back exactly what this window did, moved to where it
 * is now, and never touches what others wrote (their inserts are retained by the transform;
 * text they deleted is not brought back twice).
 *
 * Steps are never changed once made, only replaced (and the stacks' arrays likewise), so what
 * `toJSON` hands out stays as it was without a copy: the pending store keeps it as it is.
 *
 * Grouping, the way text editors do it: a burst of typing is one step, broken at a pause of
 * `groupMs`, at a new word (a letter typed after a space), or when the caret moves elsewhere;
 * a run of single-character deletions at one place is one step; a paste, the deletion of a
 * selection and any other larger edit are steps of their own.
 *
 * @module undo-history
 */
import { codePointLength, compose, isNoop, scalarToUtf16, transform, transformPosition } from './ot.js';

/** @typedef {import('./ot.js').Operation} Operation */

/**
 * @typedef {object} UndoStep
 * @property {Operation} op the inverse, on the current text
 * @property {'insert' | 'delete' | 'other'} kind what the step's edits were
 * @property {number} caret for typing, the caret after the last character; for deleting, where the deletion is
 * @property {boolean} space the last character typed was white space
 * @property {number} at when the step was last extended (ms)
 */

/** @typedef {{ undo: UndoStep[], redo: UndoStep[] }} UndoState */

/**
 * The one region an operation changes, if it changes only one.
 * @param {Operation} op
 * @returns {{ at: number, inserted: string, deleted: number } | null}
 */
function singleEdit(op) {
  let at = 0;
  let i = 0;
  if (typeof op[0] === 'number' && op[0] > 0) {
    at = op[0];
    i = 1;
  }
  let inserted = '';
  let deleted = 0;
  if (typeof op[i] === 'string') inserted = /** @type {string} */ (op[i++]);
  if (typeof op[i] === 'number' && /** @type {number} */ (op[i]) < 0) deleted = -(/** @type {number} */ (op[i++]));
  if (i < op.length && typeof op[i] === 'number' && /** @type {number} */ (op[i]) > 0) i++;
  return i === op.length && (inserted !== '' || deleted > 0) ? { at, inserted, deleted } : null;
}

/**
 * The operation that undoes `op`, made on `text`: `apply(apply(text, op), invert(op, text)) === text`.
 * @param {Operation} op
 * @param {string} text
 * @returns {Operation}
 */
export function invert(op, text) {
  /** @type {Operation} */
  const out = [];
  // Only deleted text is read from `text`: a keystroke into a large text costs nothing per
  // character of it. Without surrogates, code points are UTF-16 offsets.
  const deletes = op.some((c) => typeof c === 'number' && c < 0);
  const simple = deletes && !/[\uD800-\uDFFF]/.test(text);
  let position = 0; // code points of `text` consumed
  let index = 0; // the same, in UTF-16 units (kept only when there are surrogates)
  const skip = (/** @type {number} */ count) => {
    position += count;
    if (!deletes) return '';
    const start = index;
    if (simple) index += count;
    else index = scalarToUtf16(text, position);
    return text.slice(start, index);
  };
  for (const c of op) {
    if (typeof c === 'string') {
      out.push(-codePointLength(c));
    } else if (c > 0) {
      skip(c);
      out.push(c);
    } else {
      out.push(skip(-c));
    }
  }
  // Canonical: an insert before a neighbouring delete (the inverse of [n, "ab", -3] is
  // [n, -2, "xyz"], spelled [n, "xyz", -2]).
  for (let i = 1; i < out.length; i++) {
    if (typeof out[i] === 'string' && typeof out[i - 1] === 'number' && /** @type {number} */ (out[i - 1]) < 0) {
      [out[i - 1], out[i]] = [out[i], out[i - 1]];
    }
  }
  return out;
}

export class UndoHistory {
  /** @type {UndoStep[]} the top is last */
  undo = [];
  /** @type {UndoStep[]} */
  redo = [];
  #limit;
  #groupMs;

  /**
   * @param {{ limit?: number, groupMs?: number }} [options] `limit`: steps kept (default 200);
   *   `groupMs`: the pause that ends a burst of typing (default 1000)
   */
  constructor(options = {}) {
    this.#limit = options.limit ?? 200;
    this.#groupMs = options.groupMs ?? 1000;
  }

  get canUndo() {
    return this.undo.length > 0;
  }

  get canRedo() {
    return this.redo.length > 0;
  }

  /**
   * This window made an edit (typing, a paste, a deletion): its inverse joins the open step
   * or starts a new one, and what could be redone is forgotten.
   * @param {Operation} op
   * @param {string} before the text it was made on
   * @param {number} now ms
   */
  recordEdit(op, before, now) {
    if (isNoop(op)) return;
    const inverse = invert(op, before);
    this.redo = [];
    const edit = singleEdit(op);
    const top = this.undo[this.undo.length - 1];
    if (edit && top && now - top.at <= this.#groupMs) {
      const chars = [...edit.inserted];
      const typing = edit.deleted === 0 && chars.length === 1;
      const space = typing && /\s/u.test(chars[0]);
      if (typing && top.kind === 'insert' && top.caret === edit.at && !(top.space && !space)) {
        this.undo = [...this.undo.slice(0, -1), { ...top, op: compose(inverse, top.op), caret: edit.at + 1, space, at: now }];
        return;
      }
      const oneDeleted = edit.inserted === '' && edit.deleted === 1;
      // Backspace (the deletion ends where the last one was) or forward delete (starts there).
      if (oneDeleted && top.kind === 'delete' && (edit.at + 1 === top.caret || edit.at === top.caret)) {
        this.undo = [...this.undo.slice(0, -1), { ...top, op: compose(inverse, top.op), caret: edit.at, at: now }];
        return;
      }
    }
    this.undo = this.#pushed(this.undo, this.#stepFor(inverse, edit, now));
  }

  /**
   * Takes the step to undo (or redo) off its stack: the operation to apply to the current
   * text, or null when there is none.
   * @param {'undo' | 'redo'} which
   * @returns {Operation | null}
   */
  take(which) {
    const stack = this[which];
    const step = stack[stack.length - 1];
    if (!step) return null;
    this[which] = stack.slice(0, -1);
    return step.op;
  }

  /**
   * An undo or redo was applied: its inverse goes on the other stack, as a step of its own.
   * @param {'undo' | 'redo'} which what was applied
   * @param {Operation} op
   * @param {string} before the text it was applied to
   * @param {number} now
   */
  recordApplied(which, op, before, now) {
    const step = this.#stepFor(invert(op, before), null, now);
    if (which === 'undo') this.redo = this.#pushed(this.redo, step);
    else this.undo = this.#pushed(this.undo, step);
  }

  /**
   * An edit from elsewhere changed the text: both stacks are moved past it, top first (each
   * step applies to the text the steps above it leave). Steps it emptied are dropped (what
   * they would undo is gone).
   * @param {Operation} op the edit, as applied to the current text
   */
  transform(op) {
    if (isNoop(op)) return;
    this.undo = UndoHistory.#transformed(this.undo, op);
    this.redo = UndoHistory.#transformed(this.redo, op);
  }

  /**
   * @param {UndoStep[]} stack
   * @param {Operation} op
   */
  static #transformed(stack, op) {
    /** @type {UndoStep[]} */
    const moved = new Array(stack.length);
    let other = op;
    for (let i = stack.length - 1; i >= 0; i--) {
      const [step, past] = transform(stack[i].op, other);
      moved[i] = { ...stack[i], op: step, caret: i === stack.length - 1 ? transformPosition(op, stack[i].caret) : stack[i].caret };
      other = past;
    }
    return moved.filter((step) => !isNoop(step.op));
  }

  /** Ends the open step: the next edit starts a new one (the caret moved, say). */
  close() {
    const top = this.undo[this.undo.length - 1];
    if (top && top.at !== -Infinity) this.undo = [...this.undo.slice(0, -1), { ...top, at: -Infinity }];
  }

  /** @returns {UndoState} */
  toJSON() {
    return { undo: this.undo, redo: this.redo };
  }

  /**
   * Takes back what `toJSON` kept (after a reload). Steps are closed: typing after a reload
   * starts a new one.
   * @param {UndoState | null | undefined} state
   */
  restore(state) {
    const valid = (/** @type {any} */ s) => s && Array.isArray(s.op) && typeof s.caret === 'number';
    this.undo = (state?.undo ?? []).filter(valid).map((s) => ({ ...s, at: -Infinity }));
    this.redo = (state?.redo ?? []).filter(valid).map((s) => ({ ...s, at: -Infinity }));
  }

  /**
   * @param {Operation} inverse
   * @param {{ at: number, inserted: string, deleted: number } | null} edit
   * @param {number} now
   * @returns {UndoStep}
   */
  #stepFor(inverse, edit, now) {
    const chars = edit ? [...edit.inserted] : [];
    if (edit && edit.deleted === 0 && chars.length === 1) {
      return { op: inverse, kind: 'insert', caret: edit.at + 1, space: /\s/u.test(chars[0]), at: now };
    }
    if (edit && edit.inserted === '' && edit.deleted === 1) {
      return { op: inverse, kind: 'delete', caret: edit.at, space: false, at: now };
    }
    // A paste, a deleted selection, an undo's inverse: a step that nothing joins.
    return { op: inverse, kind: 'other', caret: 0, space: false, at: -Infinity };
  }

  /**
   * The stack with `step` on top, at most `limit` deep.
   * @param {UndoStep[]} stack
   * @param {UndoStep} step
   */
  #pushed(stack, step) {
    const next = stack.length >= this.#limit ? stack.slice(stack.length - this.#limit + 1) : stack.slice();
    next.push(step);
    return next;
  }
}
