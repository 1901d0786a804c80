// @ts-check
/**
 * Settings: global preferences (word-count bar, theme, editor font size) in a popover, or a
 * sheet at compact width. They live in the server's `user` preference domain and are
 * observed with `initial`, so a change made in any window shows in every window at once —
 * including this one, which applies what the server reports rather than what it sent.
 *
 * A setting the operator locked (the server's managed preferences: its events carry
 * `locked: true`) shows the operator's value, disabled, labelled as managed by the
 * administrator, and is never written: the server would refuse with `preference_locked`.
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

/** @typedef {'showWordCount' | 'fontSize' | 'theme'} PreferenceName */

const MANAGED_LABEL = 'Managed by your administrator';
const FONT_MIN = 11;
const FONT_MAX = 28;

/**
 * What the parts of the settings share: whether the server shares preferences, the settings
 * it locks (as its latest events said), the function that sets one, and the one that draws the
 * controls.
 * @typedef {object} SettingsState
 * @property {boolean} shared
 * @property {Set<PreferenceName>} locked
 * @property {(name: PreferenceName, value: any) => void} set
 * @property {() => void} render
 */

/** @param {Workspace} ws */
export function installSettings(ws) {
  const popover = byId('settings');
  /** @type {SettingsState} */
  const s = { shared: true, locked: new Set(), set: () => {}, render: () => {} };
  s.set = (name, value) => setPreference(ws, s, name, value);

  /** @param {PreferenceChange} change */
  const changed = (change) => preferenceChanged(ws, s, change);
  ws.client.observe('editor', { initial: true }, changed);
  const appearance = ws.client.observe('appearance', { initial: true }, changed);
  appearance.ready.then(() => {
    if (!ws.client.supports('observe')) {
      s.shared = false;
      loadLocal(ws, s);
    }
  });

  s.render = buildControls(ws, s, popover);
  installPopover(ws, popover, byId('open-settings'));
  s.render();
  ws.applyPreferences();
}

/**
 * A value from the server, checked; anything malformed reads as the default.
 * @param {Workspace} ws
 * @param {'showWordCount' | 'fontSize' | 'theme'} name
 * @param {any} value
 */
function accept(ws, name, value) {
  if (name === 'showWordCount') ws.prefs.showWordCount = typeof value === 'boolean' ? value : PREFERENCES.showWordCount.default;
  if (name === 'fontSize') {
    ws.prefs.fontSize = Number.isInteger(value) ? Math.min(Math.max(value, FONT_MIN), FONT_MAX) : PREFERENCES.fontSize.default;
  }
  if (name === 'theme') ws.prefs.theme = ['light', 'dark', 'system'].includes(value) ? value : PREFERENCES.theme.default;
}

/**
 * @param {Workspace} ws
 * @param {SettingsState} s
 * @param {PreferenceChange} change
 */
function preferenceChanged(ws, s, change) {
  const entry = Object.entries(PREFERENCES).find(([, p]) => p.keyPath === change.keyPath);
  if (!entry) return;
  const name = /** @type {PreferenceName} */ (entry[0]);
  if (change.locked === true) s.locked.add(name);
  else s.locked.delete(name);
  accept(ws, name, change.removed || change.exists === false || !('new' in change) ? undefined : change.new);
  ws.applyPreferences();
  s.render();
}

/**
 * Sets a preference for every window; on a server without preferences, for this browser.
 * @param {Workspace} ws
 * @param {SettingsState} s
 * @param {'showWordCount' | 'fontSize' | 'theme'} name
 * @param {any} value
 */
function setPreference(ws, s, name, value) {
  if (s.shared && s.locked.has(name)) {
    s.render(); // undo what the control shows; the operator's value stays
    return;
  }
  accept(ws, name, value);
  ws.applyPreferences();
  s.render();
  if (!s.shared) {
    saveLocal(ws);
    return;
  }
  ws.client.setPreference(PREFERENCES[name].keyPath, value).catch((error) => {
    if (error.code === 'unknown_type') {
      s.shared = false;
      saveLocal(ws);
      s.render();
      return;
    }
    if (error.code === 'preference_locked') {
      // Locked since this window last heard: its observation brings the operator's value.
      s.locked.add(name);
      s.render();
      toast(`That setting is ${MANAGED_LABEL.toLowerCase()}.`);
      return;
    }
    toast(describeError(error, 'change the setting'));
  });
}

/**
 * @param {Workspace} ws
 * @param {SettingsState} s
 */
function loadLocal(ws, s) {
  try {
    const saved = JSON.parse(localStorage.getItem('panes.preferences') ?? '{}');
    for (const name of /** @type {const} */ (['showWordCount', 'fontSize', 'theme'])) {
      if (name in saved) accept(ws, name, saved[name]);
    }
  } catch {
    /* nothing saved */
  }
  ws.applyPreferences();
  s.render();
}

/** @param {Workspace} ws */
function saveLocal(ws) {
  try {
    localStorage.setItem('panes.preferences', JSON.stringify(ws.prefs));
  } catch {
    /* private mode */
  }
}

/**
 * Builds the popover's controls; returns the function that draws them from the state.
 * @param {Workspace} ws
 * @param {SettingsState} s
 * @param {HTMLElement} popover
 */
function buildControls(ws, s, popover) {
  const wordCount = h('input', {
    type: 'checkbox', id: 'pref-word-count', role: 'switch',
    onchange: () => s.set('showWordCount', wordCount.checked),
  });
  const themeButtons = ['light', 'dark', 'system'].map((theme) =>
    h('button', {
      type: 'button', dataset: { theme }, 'aria-pressed': 'false',
      onclick: () => s.set('theme', theme),
    }, theme[0].toUpperCase() + theme.slice(1)));
  const fontOutput = h('output', { id: 'pref-font-size', 'aria-live': 'polite' });
  const smaller = h('button', { type: 'button', 'aria-label': 'Smaller text', onclick: () => s.set('fontSize', ws.prefs.fontSize - 1) }, '−');
  const larger = h('button', { type: 'button', 'aria-label': 'Larger text', onclick: () => s.set('fontSize', ws.prefs.fontSize + 1) }, '+');
  const note = h('p', { class: 'settings-note', style: { margin: '8px 16px 0', fontSize: '12px', color: 'var(--secondary)' } });
  /** Each setting's "managed" label, shown while the setting is locked. */
  const managed = {
    showWordCount: h('small', { class: 'settings-managed', id: 'pref-word-count-managed', hidden: true }, MANAGED_LABEL),
    theme: h('small', { class: 'settings-managed', id: 'pref-theme-managed', hidden: true }, MANAGED_LABEL),
    fontSize: h('small', { class: 'settings-managed', id: 'pref-font-size-managed', hidden: true }, MANAGED_LABEL),
  };

  popover.replaceChildren(
    h('div', { class: 'settings-header' },
      h('h2', { id: 'settings-title' }, 'Settings'),
      h('button', { type: 'button', class: 'button done', onclick: () => popover.hidePopover() }, 'Done')),
    h('div', { class: 'settings-section' },
      h('label', { class: 'settings-row', for: 'pref-word-count', dataset: { preference: 'showWordCount' } },
        h('span', {}, 'Word count bar'),
        h('span', { class: 'switch' }, wordCount),
        managed.showWordCount),
      h('div', { class: 'settings-row', role: 'group', 'aria-label': 'Theme', 'aria-describedby': 'pref-theme-managed', dataset: { preference: 'theme' } },
        h('span', {}, 'Theme'),
        h('div', { class: 'segmented' }, ...themeButtons),
        managed.theme),
      h('div', { class: 'settings-row', role: 'group', 'aria-label': 'Editor font size', 'aria-describedby': 'pref-font-size-managed', dataset: { preference: 'fontSize' } },
        h('span', {}, 'Font size'),
        h('div', { class: 'stepper' }, smaller, fontOutput, larger),
        managed.fontSize)),
    note,
  );

  return () => {
    const isLocked = (/** @type {PreferenceName} */ name) => s.shared && s.locked.has(name);
    for (const [name, element] of Object.entries(managed)) {
      const on = isLocked(/** @type {PreferenceName} */ (name));
      element.hidden = !on;
      element.closest('.settings-row')?.toggleAttribute('data-locked', on);
    }
    wordCount.checked = ws.prefs.showWordCount;
    wordCount.disabled = isLocked('showWordCount');
    if (isLocked('showWordCount')) wordCount.setAttribute('aria-describedby', 'pref-word-count-managed');
    else wordCount.removeAttribute('aria-describedby');
    for (const b of themeButtons) {
      b.setAttribute('aria-pressed', String(b.dataset.theme === ws.prefs.theme));
      b.disabled = isLocked('theme');
    }
    fontOutput.textContent = `${ws.prefs.fontSize} px`; // applied in CSS pixels (Workspace.applyPreferences)
    smaller.disabled = isLocked('fontSize') || ws.prefs.fontSize <= FONT_MIN;
    larger.disabled = isLocked('fontSize') || ws.prefs.fontSize >= FONT_MAX;
    note.textContent = s.shared
      ? 'Settings apply to all your windows at once.'
      : 'This server doesn’t share settings yet; they apply to this browser only.';
  };
}

/**
 * Opening and closing the popover from the gear button.
 * @param {Workspace} ws
 * @param {HTMLElement} popover
 * @param {HTMLElement} button
 */
function installPopover(ws, popover, button) {
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
    // The first control that can be changed (a locked one is disabled and cannot take focus).
    /** @type {HTMLElement | null} */ (popover.querySelector('input:not(:disabled), .settings-section button:not(:disabled)'))?.focus();
  };
  popover.addEventListener('panes:open', open);
  popover.addEventListener('toggle', (event) => {
    const isOpen = /** @type {ToggleEvent} */ (event).newState === 'open';
    button.setAttribute('aria-expanded', String(isOpen));
  });
}
