// @ts-check
/**
 * The switcher (App Exposé): every session of this user in the workspace, live or closed.
 * Two windows often show the same document, so a card shows what tells them apart: the
 * document (or that there is none), a preview, the window's note (the session's subtitle,
 * which each window sets to its note's first line), its state and when it was last active. Choosing one brings its window forward (or reopens a closed one in a new tab);
 * × closes it — its window plays the dismissal animation and goes away, and its state is
 * discarded; "+" makes a new window.
 *
 * @module app/switcher
 */
import { byId, h, icons, relativeTime } from './dom.js';
import { describeError, toast } from './feedback.js';
import { DOCUMENT_ACTIVITY, NO_DOCUMENT_TITLE, WORKSPACE_ACTIVITY } from './workspace.js';

/** @typedef {import('./workspace.js').Workspace} Workspace */
/** @typedef {import('../lib/panes-client.js').SessionSummary} SessionSummary */
/** @typedef {import('../lib/panes-client.js').SessionList} SessionList */
/**
 * A listed session with its `subtitle`, which the client's types do not list yet.
 * @typedef {SessionSummary & { subtitle?: string }} ListedSession
 */

const STATE_LABELS = /** @type {Record<string, string>} */ ({
  foregroundActive: 'Active',
  foregroundInactive: 'Visible',
  background: 'In background',
  unattached: 'Opening',
  disconnected: 'Closed',
});

/** @param {Workspace} ws */
export function installSwitcher(ws) {
  const dialog = byId('switcher', HTMLDialogElement);
  /** @type {{ stop: () => void } | null} */
  let watch = null;
  /** @type {SessionList | null} */
  let latest = null;
  /** Sessions being closed, hidden at once while the server confirms. @type {Set<string>} */
  const closing = new Set();

  const grid = h('ul', { class: 'switcher-grid', 'aria-label': 'Windows' });
  const summary = h('p', { class: 'switcher-summary' });
  dialog.replaceChildren(
    h('div', { class: 'dialog-header' },
      h('h2', { id: 'switcher-title' }, 'All Windows'),
      h('button', { type: 'button', class: 'icon-button', 'aria-label': 'Close', html: icons.close, onclick: () => dialog.close() })),
    summary,
    h('div', { class: 'switcher-body' }, grid),
  );

  const render = () => {
    const own = ws.client.session?.persistentIdentifier;
    const sessions = (latest?.sessions ?? []).filter((s) => !closing.has(s.persistentIdentifier));
    const live = sessions.filter((s) => s.state !== 'disconnected').length;
    summary.textContent = latest
      ? `${sessions.length} ${sessions.length === 1 ? 'window' : 'windows'}, ${live} open · app ${describeAppState(latest.appState)}`
      : 'Loading…';
    grid.replaceChildren(
      ...sessions.map((s) => sessionCard(ws, dialog, s, s.persistentIdentifier === own, close)),
      h('li', {},
        h('button', { type: 'button', class: 'session-new', 'aria-label': 'New Window', onclick: () => ws.newWindow() },
          h('span', { html: icons.plus }), 'New Window')),
    );
  };

  /**
   * @param {SessionSummary} s
   * @param {Element | null} element
   */
  const close = async (s, element) => {
    closing.add(s.persistentIdentifier);
    element?.classList.add('closing');
    try {
      await ws.client.requestDestruction(s.persistentIdentifier, 'standard');
    } catch (error) {
      closing.delete(s.persistentIdentifier);
      toast(describeError(error, 'close that window'));
    }
    setTimeout(render, 200);
  };

  const open = () => {
    if (dialog.open) {
      dialog.close();
      return;
    }
    latest = null;
    render();
    dialog.showModal();
    /** @type {HTMLElement | null} */ (grid.querySelector('.session-new'))?.focus();
    watch = ws.client.watchSessions((list) => {
      const first = latest === null;
      latest = list;
      for (const id of [...closing]) {
        if (!list.sessions.some((s) => s.persistentIdentifier === id)) closing.delete(id);
      }
      const focused = /** @type {HTMLElement | null} */ (document.activeElement)?.closest?.('.session-card')?.getAttribute('data-session');
      render();
      // Keyboard focus starts on this window's card, and stays on its card across updates.
      const keep = first ? ws.client.session?.persistentIdentifier : focused;
      if (keep) /** @type {HTMLElement | null} */ (grid.querySelector(`.session-card[data-session="${CSS.escape(keep)}"] .session-open`))?.focus();
    });
  };
  dialog.addEventListener('panes:open', open);
  dialog.addEventListener('close', () => {
    watch?.stop();
    watch = null;
  });
}

/**
 * A session's card: what tells its window apart, a button that brings it forward, and ×.
 * @param {Workspace} ws
 * @param {HTMLDialogElement} dialog
 * @param {ListedSession} s
 * @param {boolean} current
 * @param {(s: SessionSummary, element: Element | null) => void} close
 */
function sessionCard(ws, dialog, s, current, close) {
  const target = s.targetContentIdentifier ?? null;
  const title = target ? s.title || ws.summaryOf(target)?.title || 'Untitled document' : NO_DOCUMENT_TITLE;
  // This window's own note as typed; the others' as their sessions' subtitles. A server
  // without subtitles still has the note of a window without a document as its snapshot.
  const note = current ? ws.subtitle() : s.subtitle ?? (target ? '' : s.snapshot?.text?.trim() ?? '');
  const preview = target ? s.snapshot?.text ?? '' : '';
  const image = target ? s.snapshot?.image : undefined;
  const state = STATE_LABELS[s.state] ?? s.state;
  const when = relativeTime(s.lastActiveAt);
  return h('li', {
    class: 'session-card',
    // The live window's size class, as its traits reached the server.
    dataset: { session: s.persistentIdentifier, state: s.state, current: String(current), width: s.traits?.width ?? '' },
  },
  h('button', {
    type: 'button', class: 'session-open',
    'aria-label': [title, note && `note: ${note}`, state, current ? 'this window' : `active ${when}`].filter(Boolean).join(', '),
    onclick: () => chooseSession(ws, dialog, s),
  },
  h('div', { class: 'session-titlebar' },
    h('span', { class: 'session-icon', html: target ? icons.document : icons.pages }),
    h('span', { class: 'session-title' }, title)),
  note ? h('div', { class: 'session-note' }, note) : '',
  image
    ? h('img', { class: 'session-snapshot', src: image, alt: '' })
    : h('div', { class: 'session-snapshot', dataset: { empty: String(!preview.trim()) } },
      preview.trim() ? preview : target ? 'Empty document' : 'Nothing open in this window'),
  h('div', { class: 'session-footer' },
    h('span', { class: 'state-dot', dataset: { state: s.state } }),
    h('span', { class: 'session-state' }, state),
    h('span', { style: { flex: '1' } }),
    current ? h('span', { class: 'badge' }, 'This window') : h('span', { class: 'session-time', title: new Date(s.lastActiveAt).toLocaleString() }, when))),
  h('button', {
    type: 'button', class: 'session-close', html: icons.close,
    'aria-label': `Close ${title}`, title: 'Close this window and discard its state',
    onclick: (/** @type {MouseEvent} */ event) => {
      event.stopPropagation();
      close(s, /** @type {HTMLElement} */ (event.currentTarget).closest('.session-card'));
    },
  }));
}

/**
 * Brings the session's window forward, or reopens a closed one in a new tab.
 * @param {Workspace} ws
 * @param {HTMLDialogElement} dialog
 * @param {SessionSummary} s
 */
async function chooseSession(ws, dialog, s) {
  if (s.persistentIdentifier === ws.client.session?.persistentIdentifier) {
    dialog.close();
    return;
  }
  const activity = s.targetContentIdentifier
    ? { activityType: DOCUMENT_ACTIVITY, title: s.title, targetContentIdentifier: s.targetContentIdentifier }
    : { activityType: WORKSPACE_ACTIVITY, title: NO_DOCUMENT_TITLE };
  try {
    const result = await ws.client.requestActivation(activity, { session: s.persistentIdentifier });
    if (result.action === 'open' && result.url) ws.openURL(result.url);
    else toast(`“${s.title || 'That window'}” was brought forward.`);
  } catch (error) {
    toast(describeError(error, 'show that window'));
  }
}

/** @param {string} state */
function describeAppState(state) {
  return { foregroundActive: 'active', foregroundInactive: 'in the foreground', background: 'in the background', notRunning: 'not running' }[state] ?? state;
}
