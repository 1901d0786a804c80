// @ts-check
/**
 * Who is here, as people rather than windows. The server reports presence per scene (a
 * window); one person with four windows open on a document is one person here: one avatar
 * with a count of their windows in the toolbar, and carets whose labels say which window
 * each is in.
 *
 * A person's windows are numbered in the order they opened the document, as the server lists
 * participants, so every window numbers them alike ("Alice, window 2" is the same window for
 * Bob as for Alice). Labels sit in the editor's margin, level with their caret, so they never
 * cover text.
 *
 * @module app/presence
 */
import { h, initials } from './dom.js';
import { colorFor } from './identity.js';

/** @typedef {import('../panes-client.js').DocumentSession} DocumentSession */

/**
 * @typedef {object} Person
 * @property {string} user
 * @property {string} name
 * @property {string} color
 * @property {string[]} scenes their windows in the document, in the order they opened it
 * @property {boolean} me
 */

/**
 * @typedef {object} Self
 * @property {string} user the user's id, as presence reports it
 * @property {string} name
 * @property {string} color
 * @property {string} scene this window
 */

/** A margin narrower than this gets short labels: initials and the window's number. */
const SHORT_LABEL_MARGIN = 64;
/** Most avatars shown; more people collapse into "+n". */
const MAX_AVATARS = 5;

/**
 * Everyone in the document, one entry per person, this user first.
 * @param {DocumentSession} doc
 * @param {Self} self
 * @returns {Person[]}
 */
export function peopleIn(doc, self) {
  /** @type {Map<string, Person>} */
  const byUser = new Map([[self.user, { user: self.user, name: self.name, color: self.color, scenes: [], me: true }]]);
  /** @param {{ scene: string, user?: string, name?: string, color?: string }} p */
  const add = (p) => {
    const user = p.user || p.name || p.scene;
    let person = byUser.get(user);
    if (!person) {
      const name = p.name || user;
      person = { user, name, color: p.color ?? colorFor(name), scenes: [], me: false };
      byUser.set(user, person);
    } else if (!person.me && p.color && person.scenes.length === 0) {
      person.color = p.color;
    }
    if (!person.scenes.includes(p.scene)) person.scenes.push(p.scene);
  };
  for (const p of doc.summary?.participants ?? []) add(p);
  for (const p of doc.remote.values()) add(p);
  add({ scene: self.scene, user: self.user });
  return [...byUser.values()];
}

/**
 * The people other than `me` who have a listed document open, once each: from the summary's
 * `people` (their windows on every node, and how many of those are in use), else from its
 * `participants` (this node's windows only; an older server). Each reads, for a tooltip or a
 * screen reader, "Alice — 2 windows, active in 1".
 * @param {import('../lib/documents.js').DocumentSummary} summary
 * @param {string} me
 * @returns {{ user: string, name: string, color?: string, windows: number, active: number | null, description: string }[]}
 */
export function othersIn(summary, me) {
  const participants = summary.participants ?? [];
  const colorOf = (/** @type {string} */ user) => participants.find((p) => p.user === user && p.color)?.color;
  const listed = summary.people
    ? summary.people.map((p) => ({ user: p.user, name: p.name, windows: p.windows, active: /** @type {number | null} */ (p.active) }))
    : [...new Map(participants.map((p) => [p.user ?? '', p])).values()].map((p) => ({
        user: p.user ?? '', name: p.name ?? p.user ?? '', windows: participants.filter((q) => q.user === p.user).length, active: null,
      }));
  return listed.filter((p) => p.user !== me).map((p) => ({ ...p, color: colorOf(p.user), description: describeWindows(p) }));
}

/**
 * "Alice — 2 windows, active in 1", "Bob — 1 window, active", "Carol — 1 window, not active".
 * @param {{ name: string, windows: number, active: number | null }} person
 */
export function describeWindows({ name, windows, active }) {
  const count = `${windows} ${windows === 1 ? 'window' : 'windows'}`;
  if (active === null) return `${name} — ${count}`;
  if (windows === 1) return `${name} — ${count}, ${active ? 'active' : 'not active'}`;
  return `${name} — ${count}, ${active ? `active in ${active}` : 'none active'}`;
}

/**
 * How a person reads in a list: "Alice (you) in 4 windows", "Bob".
 * @param {Person} person
 */
export function describePerson(person) {
  const windows = person.scenes.length > 1 ? ` in ${person.scenes.length} windows` : '';
  return `${person.name}${person.me ? ' (you)' : ''}${windows}`;
}

/**
 * Draws the toolbar's avatars: one per person, with their number of windows. Shown when
 * anyone else is here, or this person has the document open in another window too.
 * @param {HTMLElement} list
 * @param {Person[]} people
 * @param {string} scene this window
 */
export function renderPeople(list, people, scene) {
  const shown = people.length > 1 || people.some((p) => p.scenes.length > 1) ? people : [];
  const visible = shown.length > MAX_AVATARS ? shown.slice(0, MAX_AVATARS - 1) : shown;
  const hidden = shown.slice(visible.length);
  list.replaceChildren(
    ...visible.map((p) => {
      const windows = p.scenes.length;
      const which = p.me && windows > 1 ? `; this is window ${p.scenes.indexOf(scene) + 1}` : '';
      return h('li', { class: 'person', title: `${describePerson(p)}${which}`, dataset: { user: p.user } },
        h('span', { class: 'avatar', style: { background: p.color } }, initials(p.name)),
        windows > 1 ? h('span', { class: 'window-count', 'aria-hidden': 'true' }, String(windows)) : '');
    }),
    hidden.length
      ? h('li', { class: 'person', title: hidden.map(describePerson).join(', ') }, h('span', { class: 'avatar more' }, `+${hidden.length}`))
      : '',
  );
  list.hidden = shown.length === 0;
  list.setAttribute('aria-label', shown.length ? `Here: ${shown.map(describePerson).join(', ')}` : 'Nobody else is here');
}

/**
 * Rewrites the labels of the presence layer's carets (text-binding.js draws them with the
 * person's name) each time the layer redraws: "You" for this person's other windows, the
 * window's number when the person has several, short labels in a narrow margin, and labels on
 * one line set side by side.
 */
export class CaretLabels {
  /**
   * @param {HTMLElement} container holds the presence layer (`.pn-presence-mirror`)
   * @param {DocumentSession} doc
   * @param {() => Self} self
   */
  constructor(container, doc, self) {
    this.doc = doc;
    this.self = self;
    this.mirror = /** @type {HTMLElement | null} */ (container.querySelector('.pn-presence-mirror'));
    this.observer = new MutationObserver(() => this.decorate());
    if (this.mirror) this.observer.observe(this.mirror, { childList: true });
    this.decorate();
  }

  decorate() {
    const mirror = this.mirror;
    if (!mirror) return;
    const carets = /** @type {HTMLElement[]} */ ([...mirror.querySelectorAll('.pn-remote-caret[data-scene]')]);
    if (carets.length === 0) return;
    /** @type {Map<string, { person: Person, number: number }>} */
    const windows = new Map();
    for (const person of peopleIn(this.doc, this.self())) {
      person.scenes.forEach((scene, index) => windows.set(scene, { person, number: index + 1 }));
    }
    const margin = parseFloat(getComputedStyle(mirror).paddingLeft);
    const short = margin < SHORT_LABEL_MARGIN;
    /** Labels placed so far: their extents, horizontally measured leftwards from the text. */
    const placed = /** @type {Array<{ top: number, bottom: number, left: number, right: number }>} */ ([]);
    for (const caret of carets) {
      const label = /** @type {HTMLElement | null} */ (caret.querySelector('.pn-remote-label'));
      const found = windows.get(caret.dataset.scene ?? '');
      if (!label || !found) continue;
      const { person, number } = found;
      const several = person.scenes.length > 1;
      caret.dataset.window = String(number);
      label.classList.toggle('pn-short', short);
      if (short) {
        label.replaceChildren(`${initials(person.name)}${several ? number : ''}`);
      } else {
        label.replaceChildren(
          h('span', { class: 'pn-label-name' }, person.me ? 'You' : person.name),
          several ? h('span', { class: 'pn-label-separator' }, ' · ') : '',
          several ? h('span', { class: 'pn-label-window' }, `window ${number}`) : '',
        );
      }
      // Labels that would overlap (carets on one line, or on neighbouring lines) go side by
      // side, the first nearest the text, or below one another when the margin is full.
      label.style.marginRight = label.style.marginTop = '';
      const top = label.offsetTop;
      const height = label.offsetHeight;
      const width = label.offsetWidth + 2;
      let [dx, dy] = [0, 0];
      for (let tries = placed.length; tries > 0; tries--) {
        const hit = placed.filter((p) => p.top < top + dy + height && top + dy < p.bottom && p.left < dx + width && dx < p.right);
        if (hit.length === 0) break;
        const right = Math.max(...hit.map((p) => p.right));
        if (right + width <= margin - 8) dx = right;
        else [dx, dy] = [0, Math.max(...hit.map((p) => p.bottom)) - top];
      }
      if (dx) label.style.marginRight = `${dx}px`;
      if (dy) label.style.marginTop = `${dy}px`;
      placed.push({ top: top + dy, bottom: top + dy + height + 1, left: dx, right: dx + width });
    }
  }

  destroy() {
    this.observer.disconnect();
  }
}
