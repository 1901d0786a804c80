// @ts-check
/**
 * The switcher (App Exposé): every session of this user in the workspace, live or closed,
 * with its title, snapshot and state. Choosing one brings its window forward (or reopens a
 * closed one in a new tab); × closes it — its window plays the dismissal animation and goes
 * away, and its state is discarded; "+" makes a new window.
 *
 * @module app/switcher
 */
import { byId, h, icons, relativeTime } from './dom.js';
import { describeError, toast } from './feedback.js';
import { DOCUMENT_ACTIVITY, WORKSPACE_ACTIVITY } from './workspace.js';

/** @typedef {import('./workspace.js').Workspace} Workspace */
/** @typedef {import('../lib/panes-client.js').SessionSummary} SessionSummary */
/** @typedef {import('../lib/panes-client.js').SessionList} SessionList */

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
      ...sessions.map((s) => card(s, s.persistentIdentifier === own)),
      h('li', {},
        h('button', { type: 'button', class: 'session-new', 'aria-label': 'New Window', onclick: () => ws.newWindow() },
          h('span', { html: icons.plus }), 'New Window')),
    );
  };

  /**
   * @param {SessionSummary} s
   * @param {boolean} current
   */
  const card = (s, current) => {
    const title = s.title || (s.targetContentIdentifier ? 'Document' : 'New Window');
    const snapshot = s.snapshot?.text ?? '';
    const image = s.snapshot?.image;
    return h('li', {
      class: 'session-card',
      dataset: { session: s.persistentIdentifier, state: s.state, current: String(current) },
    },
    h('button', {
      type: 'button', class: 'session-open', 'aria-label': `${title}, ${STATE_LABELS[s.state] ?? s.state}${current ? ', this window' : ''}`,
      onclick: () => choose(s),
    },
    h('div', { class: 'session-titlebar' }, h('span', { class: 'session-title' }, title)),
    image
      ? h('img', { class: 'session-snapshot', src: image, alt: '' })
      : h('div', { class: 'session-snapshot' }, snapshot || (s.targetContentIdentifier ? '' : 'No document open')),
    h('div', { class: 'session-footer' },
      h('span', { class: 'state-dot', dataset: { state: s.state } }),
      h('span', { class: 'session-state' }, STATE_LABELS[s.state] ?? s.state),
      h('span', { style: { flex: '1' } }),
      current ? h('span', { class: 'badge' }, 'This window') : h('span', {}, relativeTime(s.lastActiveAt)))),
    h('button', {
      type: 'button', class: 'session-close', html: icons.close,
      'aria-label': `Close ${title}`, title: 'Close this window and discard its state',
      onclick: (/** @type {MouseEvent} */ event) => {
        event.stopPropagation();
        close(s, /** @type {HTMLElement} */ (event.currentTarget).closest('.session-card'));
      },
    }));
  };

  /** @param {SessionSummary} s */
  const choose = async (s) => {
    if (s.persistentIdentifier === ws.client.session?.persistentIdentifier) {
      dialog.close();
      return;
    }
    const activity = s.targetContentIdentifier
      ? { activityType: DOCUMENT_ACTIVITY, title: s.title, targetContentIdentifier: s.targetContentIdentifier }
      : { activityType: WORKSPACE_ACTIVITY, title: s.title || 'Panes' };
    try {
      const result = await ws.client.requestActivation(activity, { session: s.persistentIdentifier });
      if (result.action === 'open' && result.url) ws.openURL(result.url);
      else toast(`“${s.title || 'That window'}” was brought forward.`);
    } catch (error) {
      toast(describeError(error, 'show that window'));
    }
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

/** @param {string} state */
function describeAppState(state) {
  return { foregroundActive: 'active', foregroundInactive: 'in the foreground', background: 'in the background', notRunning: 'not running' }[state] ?? state;
}
