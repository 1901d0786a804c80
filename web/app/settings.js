// @ts-check
/**
 * Settings: global preferences (word-count bar, theme, editor font size) in a popover, or a
 * sheet at compact width. They live in the server's `user` preference domain and are
 * observed with `initial`, so a change made in any window shows in every window at once —
 * including this one, which applies what the server reports rather than what it sent.
 *
 * @module app/settings
 */
import { byId, h } from './dom.js';
import { describeError, toast } from './feedback.js';

/** @typedef {import('./workspace.js').Workspace} Workspace */
/** @typedef {import('../lib/panes-client.js').PreferenceChange} PreferenceChange */

/** The preferences, their key paths and their defaults (registered on the server too). */
export const PREFERENCES = {
  showWordCount: { keyPath: 'editor.showWordCount', default: false },
  fontSize: { keyPath: 'editor.fontSize', default: 15 },
  theme: { keyPath: 'appearance.theme', default: 'system' },
};

const FONT_MIN = 11;
const FONT_MAX = 28;

/** @param {Workspace} ws */
export function installSettings(ws) {
  const popover = byId('settings');
  const button = byId('open-settings');
  let shared = true;

  /**
   * A value from the server, checked; anything malformed reads as the default.
   * @param {'showWordCount' | 'fontSize' | 'theme'} name
   * @param {any} value
   */
  const accept = (name, value) => {
    if (name === 'showWordCount') ws.prefs.showWordCount = typeof value === 'boolean' ? value : PREFERENCES.showWordCount.default;
    if (name === 'fontSize') {
      ws.prefs.fontSize = Number.isInteger(value) ? Math.min(Math.max(value, FONT_MIN), FONT_MAX) : PREFERENCES.fontSize.default;
    }
    if (name === 'theme') ws.prefs.theme = ['light', 'dark', 'system'].includes(value) ? value : PREFERENCES.theme.default;
  };

  /** @param {PreferenceChange} change */
  const changed = (change) => {
    const entry = Object.entries(PREFERENCES).find(([, p]) => p.keyPath === change.keyPath);
    if (!entry) return;
    const name = /** @type {'showWordCount' | 'fontSize' | 'theme'} */ (entry[0]);
    accept(name, change.removed || change.exists === false || !('new' in change) ? undefined : change.new);
    ws.applyPreferences();
    renderControls();
  };

  ws.client.observe('editor', { initial: true }, changed);
  const appearance = ws.client.observe('appearance', { initial: true }, changed);
  appearance.ready.then(() => {
    if (!ws.client.supports('observe')) {
      shared = false;
      loadLocal();
    }
  });

  /**
   * Sets a preference for every window; on a server without preferences, for this browser.
   * @param {'showWordCount' | 'fontSize' | 'theme'} name
   * @param {any} value
   */
  const set = (name, value) => {
    accept(name, value);
    ws.applyPreferences();
    renderControls();
    if (!shared) {
      saveLocal();
      return;
    }
    ws.client.setPreference(PREFERENCES[name].keyPath, value).catch((error) => {
      if (error.code === 'unknown_type') {
        shared = false;
        saveLocal();
        renderControls();
        return;
      }
      toast(describeError(error, 'change the setting'));
    });
  };

  const loadLocal = () => {
    try {
      const saved = JSON.parse(localStorage.getItem('panes.preferences') ?? '{}');
      for (const name of /** @type {const} */ (['showWordCount', 'fontSize', 'theme'])) {
        if (name in saved) accept(name, saved[name]);
      }
    } catch {
      /* nothing saved */
    }
    ws.applyPreferences();
    renderControls();
  };
  const saveLocal = () => {
    try {
      localStorage.setItem('panes.preferences', JSON.stringify(ws.prefs));
    } catch {
      /* private mode */
    }
  };

  const wordCount = h('input', {
    type: 'checkbox', id: 'pref-word-count', role: 'switch',
    onchange: () => set('showWordCount', wordCount.checked),
  });
  const themeButtons = ['light', 'dark', 'system'].map((theme) =>
    h('button', {
      type: 'button', dataset: { theme }, 'aria-pressed': 'false',
      onclick: () => set('theme', theme),
    }, theme[0].toUpperCase() + theme.slice(1)));
  const fontOutput = h('output', { id: 'pref-font-size', 'aria-live': 'polite' });
  const smaller = h('button', { type: 'button', 'aria-label': 'Smaller text', onclick: () => set('fontSize', ws.prefs.fontSize - 1) }, '−');
  const larger = h('button', { type: 'button', 'aria-label': 'Larger text', onclick: () => set('fontSize', ws.prefs.fontSize + 1) }, '+');
  const note = h('p', { class: 'settings-note', style: { margin: '8px 16px 0', fontSize: '12px', color: 'var(--secondary)' } });

  popover.replaceChildren(
    h('div', { class: 'settings-header' },
      h('h2', { id: 'settings-title' }, 'Settings'),
      h('button', { type: 'button', class: 'button done', onclick: () => popover.hidePopover() }, 'Done')),
    h('div', { class: 'settings-section' },
      h('label', { class: 'settings-row', for: 'pref-word-count' },
        h('span', {}, 'Word count bar'),
        h('span', { class: 'switch' }, wordCount)),
      h('div', { class: 'settings-row', role: 'group', 'aria-label': 'Theme' },
        h('span', {}, 'Theme'),
        h('div', { class: 'segmented' }, ...themeButtons)),
      h('div', { class: 'settings-row', role: 'group', 'aria-label': 'Editor font size' },
        h('span', {}, 'Font size'),
        h('div', { class: 'stepper' }, smaller, fontOutput, larger))),
    note,
  );

  const renderControls = () => {
    wordCount.checked = ws.prefs.showWordCount;
    for (const b of themeButtons) b.setAttribute('aria-pressed', String(b.dataset.theme === ws.prefs.theme));
    fontOutput.textContent = `${ws.prefs.fontSize} px`; // applied in CSS pixels (Workspace.applyPreferences)
    smaller.toggleAttribute('disabled', ws.prefs.fontSize <= FONT_MIN);
    larger.toggleAttribute('disabled', ws.prefs.fontSize >= FONT_MAX);
    note.textContent = shared
      ? 'Settings apply to all your windows at once.'
      : 'This server doesn’t share settings yet; they apply to this browser only.';
  };

  // A press on the gear while the popover is open light-dismisses it (at pointerup, before the
  // click): that click must not open it again. Remember the press itself, not a time, so the
  // next click opens it however soon it comes.
  let pressedWhileOpen = false;
  button.addEventListener('pointerdown', () => {
    pressedWhileOpen = popover.matches(':popover-open');
  });
  window.addEventListener('pointerup', () => {
    // The click, if any, is dispatched in this same task; a press that ends elsewhere is forgotten.
    if (pressedWhileOpen) setTimeout(() => {
      pressedWhileOpen = false;
    });
  });
  const open = () => {
    const dismissedByThisPress = pressedWhileOpen;
    pressedWhileOpen = false;
    if (popover.matches(':popover-open')) {
      popover.hidePopover();
      return;
    }
    if (dismissedByThisPress) return;
    const sheet = ws.layout === 'compact';
    popover.classList.toggle('sheet', sheet);
    popover.style.left = popover.style.top = '';
    popover.showPopover();
    if (!sheet) {
      const rect = button.getBoundingClientRect();
      const width = popover.offsetWidth;
      popover.style.left = `${Math.max(8, Math.min(rect.right - width, window.innerWidth - width - 8))}px`;
      popover.style.top = `${rect.bottom + 8}px`;
    }
    wordCount.focus();
  };
  popover.addEventListener('panes:open', open);
  popover.addEventListener('toggle', (event) => {
    const isOpen = /** @type {ToggleEvent} */ (event).newState === 'open';
    button.setAttribute('aria-expanded', String(isOpen));
  });
  renderControls();
  ws.applyPreferences();
}
