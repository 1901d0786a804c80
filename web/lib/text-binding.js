// @ts-check
/**
 * Binds a `DocumentSession` to an editable element — a `<textarea>` or a plain-text
 * `contenteditable` — and draws other people's selections and carets over it.
 *
 * Local input becomes operations (`diffToOperation` of the old and new text, so any input
 * method works); remote operations are applied to the element with the local selection moved
 * through them, so a caret stays where its owner left it while others type elsewhere.
 * Offsets are converted between the element's UTF-16 and the protocol's code points.
 *
 * @module text-binding
 */
import { diffToOperation, scalarToUtf16, transformSelection, utf16ToScalar } from './ot.js';

/** @typedef {import('../types/panes-client.js').Selection} Selection */
/** @typedef {import('./documents.js').DocumentSession} DocumentSession */
/** @typedef {import('./documents.js').DocumentChange} DocumentChange */

/**
 * How the binding reads and writes one kind of element, in UTF-16 offsets.
 * @typedef {object} EditorAdapter
 * @property {HTMLElement} element
 * @property {() => string} getText
 * @property {(text: string) => void} setText
 * @property {() => { start: number, end: number, backward: boolean } | null} getSelection null when the element has no selection
 * @property {(start: number, end: number, backward: boolean) => void} setSelection
 * @property {() => void} [normalize] tidies the element's DOM after input, keeping the selection
 */

/**
 * @param {HTMLTextAreaElement} textarea
 * @returns {EditorAdapter}
 */
function textareaAdapter(textarea) {
  return {
    element: textarea,
    getText: () => textarea.value,
    setText: (text) => {
      textarea.value = text;
    },
    getSelection: () => ({
      start: textarea.selectionStart,
      end: textarea.selectionEnd,
      backward: textarea.selectionDirection === 'backward',
    }),
    setSelection: (start, end, backward) => textarea.setSelectionRange(start, end, backward ? 'backward' : 'forward'),
  };
}

/**
 * A `contenteditable` kept as one text node (white-space: pre-wrap), so offsets are simple.
 * @param {HTMLElement} element
 * @returns {EditorAdapter}
 */
function contentEditableAdapter(element) {
  const textNode = () => {
    if (element.childNodes.length !== 1 || element.firstChild?.nodeType !== Node.TEXT_NODE) {
      const text = readText(element);
      element.replaceChildren(document.createTextNode(text));
    }
    return /** @type {Text} */ (element.firstChild);
  };
  /** @param {Node} node @param {number} offset */
  const offsetOf = (node, offset) => {
    const range = document.createRange();
    range.selectNodeContents(element);
    range.setEnd(node, offset);
    return readText(range.cloneContents()).length;
  };
  return {
    element,
    getText: () => readText(element),
    setText: (text) => {
      element.replaceChildren(document.createTextNode(text));
    },
    getSelection: () => {
      const selection = element.ownerDocument.getSelection();
      if (!selection || selection.rangeCount === 0 || !selection.anchorNode || !selection.focusNode) return null;
      if (!element.contains(selection.anchorNode) || !element.contains(selection.focusNode)) return null;
      const anchor = offsetOf(selection.anchorNode, selection.anchorOffset);
      const focus = offsetOf(selection.focusNode, selection.focusOffset);
      return { start: Math.min(anchor, focus), end: Math.max(anchor, focus), backward: focus < anchor };
    },
    setSelection: (start, end, backward) => {
      const node = textNode();
      const selection = element.ownerDocument.getSelection();
      if (!selection) return;
      const length = node.data.length;
      const [a, f] = backward ? [end, start] : [start, end];
      selection.setBaseAndExtent(node, Math.min(a, length), node, Math.min(f, length));
    },
    normalize() {
      if (element.childNodes.length === 1 && element.firstChild?.nodeType === Node.TEXT_NODE) return;
      const selection = this.getSelection();
      this.setText(readText(element));
      if (selection) this.setSelection(selection.start, selection.end, selection.backward);
    },
  };
}

/**
 * The plain text of an element or fragment: text nodes, `<br>` and block breaks as newlines.
 * @param {Node} root
 */
function readText(root) {
  let text = '';
  /** @param {Node} node */
  const walk = (node) => {
    for (const child of node.childNodes) {
      if (child.nodeType === Node.TEXT_NODE) {
        text += /** @type {Text} */ (child).data;
      } else if (child.nodeName === 'BR') {
        text += '\n';
      } else {
        const block = child.nodeName === 'DIV' || child.nodeName === 'P';
        if (block && text !== '' && !text.endsWith('\n')) text += '\n';
        walk(child);
      }
    }
  };
  walk(root);
  return text;
}

/** @typedef {import('../types/panes-client.js').BindingOptions} BindingOptions */

/**
 * Keeps an element and a `DocumentSession` in step.
 */
export class TextBinding {
  /** @readonly */ session;
  /** @readonly */ element;
  #adapter;
  #options;
  #composing = false;
  /** The element's text as last synchronised with the session. */
  #value;
  /** @type {Array<() => void>} */
  #offs = [];
  /** @type {PresenceLayer | null} */
  #layer;

  /**
   * @param {DocumentSession} session
   * @param {HTMLTextAreaElement | HTMLElement} element a textarea, or a contenteditable element
   * @param {BindingOptions} [options]
   */
  constructor(session, element, options = {}) {
    this.session = session;
    this.#adapter = element instanceof HTMLTextAreaElement ? textareaAdapter(element) : contentEditableAdapter(element);
    this.element = element;
    this.#options = options;
    this.#value = session.text;
    this.#adapter.setText(session.text);
    this.#layer = options.showRemote === false ? null : new PresenceLayer(this, () => this.#value);

    const listen = (/** @type {EventTarget} */ target, /** @type {string} */ type, /** @type {(e: any) => void} */ fn) => {
      target.addEventListener(type, fn);
      this.#offs.push(() => target.removeEventListener(type, fn));
    };
    // The browser's own undo knows nothing of operations: undo and redo go to the session,
    // which takes back this window's edits only.
    listen(element, 'beforeinput', (/** @type {InputEvent} */ event) => {
      if (event.inputType !== 'historyUndo' && event.inputType !== 'historyRedo') return;
      event.preventDefault();
      if (event.inputType === 'historyUndo') session.undo();
      else session.redo();
    });
    listen(element, 'input', () => this.#localInput());
    // A caret moved by hand (a click, an arrow key) ends the burst of typing being grouped.
    for (const type of ['mousedown', 'keydown']) {
      listen(element, type, (/** @type {KeyboardEvent} */ event) => {
        if (type === 'mousedown' || /^(Arrow|Home|End|Page)/.test(event.key ?? '')) session.breakUndoGroup();
      });
    }
    listen(element, 'compositionstart', () => {
      this.#composing = true;
    });
    listen(element, 'compositionend', () => {
      this.#composing = false;
      this.#localInput();
    });
    listen(element.ownerDocument, 'selectionchange', () => this.#reportSelection());
    for (const type of ['select', 'keyup', 'mouseup', 'focus']) listen(element, type, () => this.#reportSelection());
    listen(element, 'scroll', () => this.#layer?.position());
    this.#offs.push(
      session.on('change', (/** @type {DocumentChange} */ change) => {
        if (change.remote) this.#remoteChange(change);
        else if (change.history) this.#historyChange(change);
        this.#options.onChange?.(change);
        this.#layer?.render();
      }),
      session.on('presence', () => this.#layer?.render()),
    );
    this.#layer?.render();
  }

  /** The local selection in code points, or null when the element has none. @returns {Selection | null} */
  selection() {
    const s = this.#adapter.getSelection();
    if (!s) return null;
    const text = this.#value;
    const start = utf16ToScalar(text, s.start);
    const end = utf16ToScalar(text, s.end);
    return s.backward ? { anchor: end, head: start } : { anchor: start, head: end };
  }

  /**
   * Selects a range given in code points.
   * @param {Selection} selection
   */
  select(selection) {
    const text = this.#value;
    const anchor = scalarToUtf16(text, selection.anchor);
    const head = scalarToUtf16(text, selection.head);
    this.#adapter.setSelection(Math.min(anchor, head), Math.max(anchor, head), head < anchor);
    this.#reportSelection();
  }

  #localInput() {
    const text = this.#adapter.getText();
    if (text === this.#value) return;
    const op = diffToOperation(this.#value, text);
    this.#value = text;
    this.#adapter.normalize?.();
    this.session.applyLocal(op);
    this.#reportSelection();
  }

  #reportSelection() {
    const element = this.element;
    if (element.ownerDocument.activeElement !== element) return;
    const selection = this.selection();
    if (!selection) return;
    this.session.setSelection(selection);
    this.#options.onSelectionChange?.(selection);
  }

  /**
   * Puts a remote change into the element, keeping the local selection and scroll in place.
   * @param {DocumentChange} change
   */
  #remoteChange(change) {
    // Input not yet seen by `localInput` (mid-composition) is folded in first, so nothing typed is lost.
    if (this.#adapter.getText() !== this.#value && !this.#composing) this.#localInput();
    const element = this.element;
    const hadFocus = element.ownerDocument.activeElement === element;
    const before = this.selection();
    const scrollTop = element.scrollTop;
    const text = this.session.text;
    this.#value = text;
    this.#adapter.setText(text);
    if (before) {
      const moved = change.op ? transformSelection(change.op, before, false) : before;
      const anchor = scalarToUtf16(text, moved.anchor);
      const head = scalarToUtf16(text, moved.head);
      if (hadFocus || element instanceof HTMLTextAreaElement) {
        this.#adapter.setSelection(Math.min(anchor, head), Math.max(anchor, head), head < anchor);
      }
    }
    element.scrollTop = scrollTop;
  }

  /**
   * Puts an undo or redo into the element, with the caret after what it changed, as editors do.
   * @param {DocumentChange} change
   */
  #historyChange(change) {
    const element = this.element;
    const scrollTop = element.scrollTop;
    const text = this.session.text;
    this.#value = text;
    this.#adapter.setText(text);
    const caret = change.op ? changedEnd(change.op) : 0;
    const offset = scalarToUtf16(text, caret);
    this.#adapter.setSelection(offset, offset, false);
    element.scrollTop = scrollTop;
    this.#reportSelection();
  }

  /** Redraws remote selections (after a font or layout change). */
  refresh() {
    this.#layer?.render();
  }

  destroy() {
    for (const off of this.#offs.splice(0)) off();
    this.#layer?.destroy();
  }
}

/**
 * The position, in the text after `op`, just past its last change.
 * @param {import('../types/panes-client.js').Operation} op
 */
function changedEnd(op) {
  let position = 0;
  let end = 0;
  for (const c of op) {
    if (typeof c === 'string') {
      position += [...c].length;
      end = position;
    } else if (c > 0) {
      position += c;
    } else {
      end = position;
    }
  }
  return end;
}

/** How long a remote caret's name stays shown after its owner's last move. */
const LABEL_MS = 5000;

/**
 * Other people's selections and carets, drawn over the element. Over a textarea this is a
 * mirror: a box with the same font, padding and width holding the same text, transparent,
 * with the selections marked, scrolled with the textarea.
 */
class PresenceLayer {
  /**
   * @param {TextBinding} binding
   * @param {() => string} text the element's text, as the binding last synchronised it
   */
  constructor(binding, text) {
    this.binding = binding;
    this.text = text;
    const element = binding.element;
    const doc = element.ownerDocument;
    this.root = doc.createElement('div');
    this.root.className = 'pn-presence-layer';
    this.root.setAttribute('aria-hidden', 'true');
    Object.assign(this.root.style, { position: 'absolute', pointerEvents: 'none', overflow: 'hidden', inset: '0' });
    this.mirror = doc.createElement('div');
    this.mirror.className = 'pn-presence-mirror';
    this.root.append(this.mirror);
    const parent = element.parentElement;
    if (parent && getComputedStyle(parent).position === 'static') parent.style.position = 'relative';
    element.after(this.root);
    this.observer = new ResizeObserver(() => this.render());
    // The border box, not the content box: an editor that centres its text with padding keeps
    // its content width when the window grows, and only the padding (which the mirror copies)
    // changes.
    this.observer.observe(element, { box: 'border-box' });
    /** @type {any} */
    this.idleTimer = null;
  }

  /** Aligns the layer with the element's box and scroll position. */
  position() {
    const element = this.binding.element;
    Object.assign(this.root.style, {
      top: `${element.offsetTop + element.clientTop}px`,
      left: `${element.offsetLeft + element.clientLeft}px`,
      width: `${element.clientWidth}px`,
      height: `${element.clientHeight}px`,
      inset: '',
    });
    this.mirror.style.transform = `translate(${-element.scrollLeft}px, ${-element.scrollTop}px)`;
  }

  render() {
    const binding = this.binding;
    const element = binding.element;
    const remote = [...binding.session.remote.values()].filter((p) => p.selection);
    this.position();
    const style = getComputedStyle(element);
    for (const property of [
      'fontFamily', 'fontSize', 'fontWeight', 'fontStyle', 'lineHeight', 'letterSpacing', 'wordSpacing',
      'paddingTop', 'paddingRight', 'paddingBottom', 'paddingLeft', 'textIndent', 'textAlign', 'tabSize',
      'wordBreak', 'overflowWrap', 'fontVariantLigatures', 'fontFeatureSettings',
    ]) {
      // @ts-ignore: copying computed style properties by name
      this.mirror.style[property] = style[property];
    }
    Object.assign(this.mirror.style, {
      position: 'absolute',
      top: '0',
      left: '0',
      width: `${element.clientWidth}px`,
      boxSizing: 'border-box',
      whiteSpace: 'pre-wrap',
      color: 'transparent',
      margin: '0',
      border: '0',
    });
    const text = this.text();
    /** @type {Array<{ at: number, kind: 'start' | 'end' | 'caret', index: number }>} */
    const marks = [];
    remote.forEach((p, index) => {
      const selection = /** @type {Selection} */ (p.selection);
      const a = scalarToUtf16(text, Math.min(selection.anchor, selection.head));
      const b = scalarToUtf16(text, Math.max(selection.anchor, selection.head));
      if (a !== b) {
        marks.push({ at: a, kind: 'start', index }, { at: b, kind: 'end', index });
      }
      marks.push({ at: scalarToUtf16(text, selection.head), kind: 'caret', index });
    });
    marks.sort((x, y) => x.at - y.at || (x.kind === 'end' ? -1 : 0) - (y.kind === 'end' ? -1 : 0));
    const doc = element.ownerDocument;
    const fragment = doc.createDocumentFragment();
    /** @type {Set<number>} */
    const open = new Set();
    let position = 0;
    const flush = (/** @type {number} */ until) => {
      if (until <= position) return;
      const piece = text.slice(position, until);
      position = until;
      if (open.size === 0) {
        fragment.append(piece);
        return;
      }
      const mark = doc.createElement('span');
      mark.className = 'pn-remote-selection';
      const color = remote[[...open][open.size - 1]].color;
      mark.style.backgroundColor = withAlpha(color, 0.22);
      mark.textContent = piece;
      fragment.append(mark);
    };
    for (const mark of marks) {
      flush(mark.at);
      if (mark.kind === 'start') open.add(mark.index);
      else if (mark.kind === 'end') open.delete(mark.index);
      else {
        const p = remote[mark.index];
        const caret = doc.createElement('span');
        caret.className = Date.now() - p.updatedAt > LABEL_MS ? 'pn-remote-caret idle' : 'pn-remote-caret';
        caret.style.setProperty('--pn-color', p.color);
        caret.dataset.scene = p.scene;
        const label = doc.createElement('span');
        label.className = 'pn-remote-label';
        label.textContent = p.name;
        caret.append(label);
        fragment.append(caret);
      }
    }
    flush(text.length);
    fragment.append('\u200b'); // a trailing newline still takes a line, as in the textarea
    this.mirror.replaceChildren(fragment);
    // Names show while their owners are active; redraw when the next one goes idle.
    clearTimeout(this.idleTimer);
    const pending = remote.map((p) => p.updatedAt + LABEL_MS - Date.now()).filter((ms) => ms > 0);
    if (pending.length) this.idleTimer = setTimeout(() => this.render(), Math.min(...pending) + 20);
  }

  destroy() {
    clearTimeout(this.idleTimer);
    this.observer.disconnect();
    this.root.remove();
  }
}

/**
 * `#rrggbb` with an alpha, as `rgba()`; other colour syntaxes are returned as they are.
 * @param {string} color
 * @param {number} alpha
 */
export function withAlpha(color, alpha) {
  const match = /^#([0-9a-f]{6})$/i.exec(color);
  if (!match) return color;
  const n = parseInt(match[1], 16);
  return `rgba(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255}, ${alpha})`;
}
