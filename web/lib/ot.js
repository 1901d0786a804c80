// @ts-check
/**
 * Text operational transform for Panes documents: the browser twin of
 * `Sources/PanesCore/Documents/TextOperation*.swift`. Both must agree exactly; the vectors in
 * `Tests/Fixtures/ot-vectors.json` are checked against each.
 *
 * A document is a sequence of Unicode code points (the server says "scalars"; for well-formed
 * text they are the same). Every position and length counts code points, never UTF-16 units,
 * so 😀 is one position although it is two units of a JavaScript string. Use
 * `utf16ToScalar` / `scalarToUtf16` to translate a `<textarea>`'s selection offsets.
 *
 * An operation is the wire form itself, a plain array walking the whole document: a positive
 * integer `n` retains `n` code points, a non-empty string inserts it, a negative integer `-n`
 * deletes `n`. For example `[5, "hi", -3, 10]`. Functions here return canonical operations:
 * no empty components, neighbours of one kind merged, an insert before a neighbouring delete.
 *
 * @module ot
 */

/** @typedef {number | string} Component */
/** @typedef {Component[]} Operation */
/** @typedef {{ anchor: number, head: number }} Selection */

/** The largest length one component may carry (a 32-bit signed integer, as on the server). */
export const MAX_COMPONENT_LENGTH = 0x7fffffff;

/** An operation that is malformed or does not fit the document; `code` matches the server's. */
export class OTError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = 'OTError';
    this.code = 'invalid_operation';
  }
}

/** @param {number} unit */
const isHighSurrogate = (unit) => unit >= 0xd800 && unit <= 0xdbff;
/** @param {number} unit */
const isLowSurrogate = (unit) => unit >= 0xdc00 && unit <= 0xdfff;

/**
 * The UTF-16 index `count` code points after `index`, or -1 when the text ends first.
 * A lone surrogate counts as one code point, as `Array.from` counts it.
 * @param {string} text
 * @param {number} index
 * @param {number} count
 */
function advance(text, index, count) {
  let i = index;
  for (let n = 0; n < count; n++) {
    if (i >= text.length) return -1;
    i += isHighSurrogate(text.charCodeAt(i)) && i + 1 < text.length && isLowSurrogate(text.charCodeAt(i + 1)) ? 2 : 1;
  }
  return i;
}

/**
 * How many code points `text` holds: its length as the server counts it.
 * @param {string} text
 */
export function codePointLength(text) {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    if (isHighSurrogate(text.charCodeAt(i)) && i + 1 < text.length && isLowSurrogate(text.charCodeAt(i + 1))) i++;
    count++;
  }
  return count;
}

/**
 * The code-point offset of UTF-16 offset `offset` (a `selectionStart`). An offset between the
 * two halves of a surrogate pair is taken as before the pair.
 * @param {string} text
 * @param {number} offset
 */
export function utf16ToScalar(text, offset) {
  const end = Math.min(Math.max(offset, 0), text.length);
  let count = 0;
  for (let i = 0; i < end; i++) {
    if (isHighSurrogate(text.charCodeAt(i)) && i + 1 < text.length && isLowSurrogate(text.charCodeAt(i + 1))) {
      if (i + 1 >= end) break; // `end` splits the pair
      i++;
    }
    count++;
  }
  return count;
}

/**
 * The UTF-16 offset of code-point offset `index`, clamped to the text, for setting
 * `selectionStart` / `selectionEnd`.
 * @param {string} text
 * @param {number} index
 */
export function scalarToUtf16(text, index) {
  const offset = advance(text, 0, Math.max(index, 0));
  return offset < 0 ? text.length : offset;
}

/** @param {unknown} c @returns {c is number} */
const isRetain = (c) => typeof c === 'number' && c > 0;
/** @param {unknown} c @returns {c is number} */
const isDelete = (c) => typeof c === 'number' && c < 0;

/** Appends components keeping canonical form. */
class Builder {
  constructor() {
    /** @type {Operation} */
    this.ops = [];
  }

  /** @param {number} count */
  retain(count) {
    if (count <= 0) return;
    const last = this.ops[this.ops.length - 1];
    if (isRetain(last)) this.ops[this.ops.length - 1] = last + count;
    else this.ops.push(count);
  }

  /** @param {string} text */
  insert(text) {
    if (text === '') return;
    const ops = this.ops;
    // An insert goes before a neighbouring delete: one spelling for one edit.
    let at = ops.length;
    if (at > 0 && isDelete(ops[at - 1])) at--;
    const before = ops[at - 1];
    if (at > 0 && typeof before === 'string') ops[at - 1] = before + text;
    else ops.splice(at, 0, text);
  }

  /** @param {number} count */
  delete(count) {
    if (count <= 0) return;
    const last = this.ops[this.ops.length - 1];
    if (isDelete(last)) this.ops[this.ops.length - 1] = last - count;
    else this.ops.push(-count);
  }
}

/**
 * Hands out pieces of an operation's components, at most a given length at a time.
 */
class Reader {
  /** @param {Operation} op */
  constructor(op) {
    this.op = op;
    this.index = 0;
    /** @type {Component | undefined} */
    this.head = undefined;
    /** Code points in `head`. */
    this.headLength = 0;
    this.next();
  }

  next() {
    const head = this.index < this.op.length ? this.op[this.index++] : undefined;
    this.head = head;
    this.headLength = head === undefined ? 0 : typeof head === 'string' ? codePointLength(head) : Math.abs(head);
  }

  /**
   * Takes the first `count` code points of the head (`count` at most its length).
   * @param {number} count
   * @returns {Component}
   */
  take(count) {
    const head = this.head;
    if (head === undefined) throw new Error('take past the end of an operation');
    if (count >= this.headLength) {
      this.next();
      return head;
    }
    this.headLength -= count;
    if (typeof head === 'string') {
      const split = advance(head, 0, count);
      this.head = head.slice(split);
      return head.slice(0, split);
    }
    if (head > 0) {
      this.head = head - count;
      return count;
    }
    this.head = head + count;
    return -count;
  }
}

/**
 * The length of the document an operation applies to.
 * @param {Operation} op
 */
export function baseLength(op) {
  let length = 0;
  for (const c of op) if (typeof c === 'number') length += Math.abs(c);
  return length;
}

/**
 * The length of the document an operation produces.
 * @param {Operation} op
 */
export function targetLength(op) {
  let length = 0;
  for (const c of op) length += typeof c === 'string' ? codePointLength(c) : Math.max(c, 0);
  return length;
}

/**
 * True when applying the operation changes nothing.
 * @param {Operation} op
 */
export function isNoop(op) {
  return op.every(isRetain);
}

/**
 * The canonical form of an operation built by hand: zeros and empty strings dropped,
 * neighbours merged, inserts before deletes.
 * @param {Operation} op
 * @returns {Operation}
 */
export function normalize(op) {
  const out = new Builder();
  for (const c of op) {
    if (typeof c === 'string') out.insert(c);
    else if (c > 0) out.retain(c);
    else out.delete(-c);
  }
  return out.ops;
}

/**
 * A JSON type name, spelled as the server spells it in errors.
 * @param {unknown} value
 */
function typeName(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/**
 * Validates a decoded JSON value as an operation and returns it in canonical form.
 * Rejects what the server rejects: a non-array, components that are not integers or strings,
 * zero, empty strings, fractions, and lengths over `MAX_COMPONENT_LENGTH`.
 * @param {unknown} value
 * @param {string} [field] the message field it came in, for error messages
 * @returns {Operation}
 */
export function fromJSON(value, field = 'operation') {
  if (!Array.isArray(value)) {
    throw new OTError(`\`${field}\` must be an array of components, not ${typeName(value)}`);
  }
  const out = new Builder();
  value.forEach((c, index) => {
    const path = `\`${field}[${index}]\``;
    if (typeof c === 'string') {
      if (c === '') throw new OTError(`${path} is an empty string; an insert needs text`);
      out.insert(c);
    } else if (typeof c === 'number') {
      if (!Number.isInteger(c)) throw new OTError(`${path} is ${c}, not a whole number`);
      if (Math.abs(c) > MAX_COMPONENT_LENGTH) {
        throw new OTError(`${path} is ${c}, beyond the largest length ${MAX_COMPONENT_LENGTH}`);
      }
      if (c === 0) throw new OTError(`${path} is 0; use n > 0 to retain, -n to delete, or a string to insert`);
      if (c > 0) out.retain(c);
      else out.delete(-c);
    } else {
      throw new OTError(`${path} must be an integer or a string, not ${typeName(c)}`);
    }
  });
  return out.ops;
}

/**
 * The text after the operation.
 * @param {string} text
 * @param {Operation} op
 * @returns {string}
 * @throws {OTError} when the text is not `baseLength(op)` code points long
 */
export function apply(text, op) {
  /** @type {string[]} */
  const parts = [];
  let index = 0;
  for (const c of op) {
    if (typeof c === 'string') {
      parts.push(c);
      continue;
    }
    const end = advance(text, index, Math.abs(c));
    if (end < 0) throw lengthMismatch(text, op);
    if (c > 0) parts.push(text.slice(index, end));
    index = end;
  }
  if (index !== text.length) throw lengthMismatch(text, op);
  return parts.join('');
}

/**
 * @param {string} text
 * @param {Operation} op
 */
function lengthMismatch(text, op) {
  return new OTError(
    `the operation spans ${baseLength(op)} Unicode scalars but the document has ${codePointLength(text)}`,
  );
}

/**
 * One operation with the effect of `a` then `b`.
 * @param {Operation} a
 * @param {Operation} b
 * @returns {Operation}
 */
export function compose(a, b) {
  if (targetLength(a) !== baseLength(b)) {
    throw new OTError(
      `cannot compose: the first operation produces ${targetLength(a)} scalars but the second spans ${baseLength(b)}`,
    );
  }
  const out = new Builder();
  const first = new Reader(a);
  const second = new Reader(b);
  for (;;) {
    // Deletes of the first and inserts of the second touch nothing of the other side.
    if (isDelete(first.head)) {
      out.delete(-first.head);
      first.next();
      continue;
    }
    if (typeof second.head === 'string') {
      out.insert(second.head);
      second.next();
      continue;
    }
    if (first.head === undefined || second.head === undefined) break; // equal lengths: both end
    const count = Math.min(first.headLength, second.headLength);
    const piece = first.take(count);
    const action = second.take(count);
    if (typeof piece === 'string') {
      if (isRetain(action)) out.insert(piece); // inserted then deleted leaves nothing
    } else if (isRetain(action)) {
      out.retain(count);
    } else {
      out.delete(count);
    }
  }
  return out.ops;
}

/**
 * Rewrites two concurrent operations on the same document so each applies after the other:
 * `apply(apply(S, a), bPrime) === apply(apply(S, b), aPrime)`.
 *
 * Tie-break: when both insert at the same position, `a`'s text comes first. As on the server,
 * `a` is always the operation the server has not applied yet (this client's pending one) and
 * `b` the one from the server's history, so the server (`transform(clientOp, historyOp)`) and
 * the sending client (`transform(outstanding, serverOp)`) break every tie the same way.
 *
 * @param {Operation} a
 * @param {Operation} b
 * @returns {[Operation, Operation]} `[aPrime, bPrime]`: `aPrime` applies after `b`, `bPrime` after `a`
 */
export function transform(a, b) {
  if (baseLength(a) !== baseLength(b)) {
    throw new OTError(
      `cannot transform: the operations span ${baseLength(a)} and ${baseLength(b)} scalars, not the same document`,
    );
  }
  const aPrime = new Builder();
  const bPrime = new Builder();
  const readerA = new Reader(a);
  const readerB = new Reader(b);
  for (;;) {
    // An insert of `a` is looked at first: that is the tie-break.
    if (typeof readerA.head === 'string') {
      aPrime.insert(readerA.head);
      bPrime.retain(readerA.headLength);
      readerA.next();
      continue;
    }
    if (typeof readerB.head === 'string') {
      aPrime.retain(readerB.headLength);
      bPrime.insert(readerB.head);
      readerB.next();
      continue;
    }
    if (readerA.head === undefined || readerB.head === undefined) break; // equal lengths: both end
    const count = Math.min(readerA.headLength, readerB.headLength);
    const pieceA = readerA.take(count);
    const pieceB = readerB.take(count);
    if (isRetain(pieceA) && isRetain(pieceB)) {
      aPrime.retain(count);
      bPrime.retain(count);
    } else if (isDelete(pieceA) && isRetain(pieceB)) {
      aPrime.delete(count);
    } else if (isRetain(pieceA) && isDelete(pieceB)) {
      bPrime.delete(count);
    } // both deleted the same text: nothing to do
  }
  return [aPrime.ops, bPrime.ops];
}

/**
 * Where a code-point position ends up after `op`. Inside deleted text it moves to where the
 * deletion was; text inserted exactly at it goes after someone else's cursor but before the
 * author's own (`isOwnEdit`), which moves past what it typed.
 * @param {Operation} op
 * @param {number} position clamped to `0…baseLength(op)`
 * @param {boolean} [isOwnEdit]
 * @returns {number} a position in `0…targetLength(op)`
 */
export function transformPosition(op, position, isOwnEdit = false) {
  const at = Math.min(Math.max(position, 0), baseLength(op));
  let old = 0; // consumed from the base document
  let now = 0; // produced in the target document
  for (const c of op) {
    if (typeof c === 'string') {
      if (at === old && !isOwnEdit) return now;
      now += codePointLength(c);
    } else if (c > 0) {
      if (at < old + c) return now + (at - old);
      old += c;
      now += c;
    } else {
      if (at < old - c) return now;
      old -= c;
    }
  }
  return now;
}

/**
 * A selection after `op`, both ends moved by `transformPosition`.
 * @param {Operation} op
 * @param {Selection} selection
 * @param {boolean} [isOwnEdit]
 * @returns {Selection}
 */
export function transformSelection(op, selection, isOwnEdit = false) {
  return {
    anchor: transformPosition(op, selection.anchor, isOwnEdit),
    head: transformPosition(op, selection.head, isOwnEdit),
  };
}

/**
 * The operation turning `oldText` into `newText` as one replaced region: the common prefix and
 * suffix are retained, the middle deleted and the new middle inserted. Never splits a surrogate
 * pair. Good for a textarea's `input` event, where one edit changes one region.
 * @param {string} oldText
 * @param {string} newText
 * @returns {Operation}
 */
export function diffToOperation(oldText, newText) {
  const shortest = Math.min(oldText.length, newText.length);
  let prefix = 0;
  while (prefix < shortest && oldText.charCodeAt(prefix) === newText.charCodeAt(prefix)) prefix++;
  // Equal high surrogates may be followed by different low ones: keep the pair whole.
  if (prefix > 0 && isHighSurrogate(oldText.charCodeAt(prefix - 1))) prefix--;
  let suffix = 0;
  while (
    suffix < shortest - prefix &&
    oldText.charCodeAt(oldText.length - 1 - suffix) === newText.charCodeAt(newText.length - 1 - suffix)
  ) {
    suffix++;
  }
  if (suffix > 0 && isLowSurrogate(oldText.charCodeAt(oldText.length - suffix))) suffix--;
  const out = new Builder();
  out.retain(codePointLength(oldText.slice(0, prefix)));
  out.insert(newText.slice(prefix, newText.length - suffix));
  out.delete(codePointLength(oldText.slice(prefix, oldText.length - suffix)));
  out.retain(codePointLength(oldText.slice(oldText.length - suffix)));
  return out.ops;
}
