// @ts-check
/**
 * Every action of the workspace as a command with a keyboard shortcut, listed in the help
 * overlay the way a Mac app's menu bar lists every command. Buttons name their command in
 * `data-command` and show its name and shortcut in their tooltip (tooltip.js).
 *
 * Shortcuts use Alt because browsers keep Ctrl/⌘+N, W and T for themselves; on a Mac they
 * use Control-Option (⌃⌥), since Option alone types characters (⌥S is ß). Keys are matched by
 * `event.code`, so they work on any keyboard layout.
 *
 * @module app/commands
 */
import { byId, h, icons } from './dom.js';

/** @typedef {import('./workspace.js').Workspace} Workspace */

/**
 * @typedef {object} Command
 * @property {string} id
 * @property {string} title
 * @property {string} group
 * @property {{ code: string, shift?: boolean, label: string, primary?: boolean }} [key] with Alt, or with
 *   `primary` with Ctrl (⌘ on a Mac), as the platform's own Undo and Redo
 * @property {(ws: Workspace) => void} run
 * @property {(ws: Workspace) => boolean} [enabled]
 */

/** @type {Command[]} */
export const COMMANDS = [
  { id: 'newDocument', title: 'New Document', group: 'File', key: { code: 'KeyN', label: 'N' }, run: (ws) => ws.createDocument() },
  { id: 'newWindow', title: 'New Window', group: 'File', key: { code: 'KeyN', shift: true, label: 'N' }, run: (ws) => ws.newWindow() },
  {
    id: 'openInNewWindow', title: 'Open Document in New Window', group: 'File', key: { code: 'KeyO', shift: true, label: 'O' },
    run: (ws) => ws.documentId && ws.openInNewWindow(ws.documentId), enabled: (ws) => Boolean(ws.documentId),
  },
  {
    id: 'renameDocument', title: 'Rename Document…', group: 'File', key: { code: 'KeyR', label: 'R' },
    run: (ws) => ws.documentId && ws.renameDocument(ws.documentId), enabled: (ws) => Boolean(ws.documentId),
  },
  {
    id: 'deleteDocument', title: 'Delete Document…', group: 'File', key: { code: 'Backspace', shift: true, label: '⌫' },
    run: (ws) => ws.documentId && ws.deleteDocument(ws.documentId), enabled: (ws) => Boolean(ws.documentId),
  },
  {
    id: 'showHistory', title: 'Version History…', group: 'File', key: { code: 'KeyH', label: 'H' },
    run: () => byId('history').dispatchEvent(new Event('panes:open')), enabled: (ws) => Boolean(ws.documentId && ws.binding),
  },
  {
    id: 'undo', title: 'Undo', group: 'Edit', key: { code: 'KeyZ', label: 'Z', primary: true },
    run: (ws) => ws.doc?.undo(), enabled: (ws) => Boolean(ws.doc?.canUndo),
  },
  {
    id: 'redo', title: 'Redo', group: 'Edit', key: { code: 'KeyZ', shift: true, label: 'Z', primary: true },
    run: (ws) => ws.doc?.redo(), enabled: (ws) => Boolean(ws.doc?.canRedo),
  },
  { id: 'closeWindow', title: 'Close Window', group: 'Window', key: { code: 'KeyW', shift: true, label: 'W' }, run: (ws) => ws.closeWindow() },
  { id: 'showSwitcher', title: 'Show All Windows', group: 'Window', key: { code: 'KeyW', label: 'W' }, run: () => byId('switcher').dispatchEvent(new Event('panes:open')) },
  { id: 'toggleSidebar', title: 'Show or Hide Sidebar', group: 'View', key: { code: 'KeyS', label: 'S' }, run: (ws) => ws.toggleSidebar() },
  { id: 'openSettings', title: 'Settings…', group: 'View', key: { code: 'Comma', label: ',' }, run: () => byId('settings').dispatchEvent(new Event('panes:open')) },
  { id: 'previousDocument', title: 'Previous Document', group: 'Go', key: { code: 'ArrowUp', label: '↑' }, run: (ws) => ws.stepDocument(-1) },
  { id: 'nextDocument', title: 'Next Document', group: 'Go', key: { code: 'ArrowDown', label: '↓' }, run: (ws) => ws.stepDocument(1) },
  {
    id: 'back', title: 'Back to Documents', group: 'Go', key: { code: 'BracketLeft', label: '[' },
    run: (ws) => ws.setView('list'), enabled: (ws) => ws.layout === 'compact',
  },
  { id: 'focusNote', title: 'Edit Window Note', group: 'Go', key: { code: 'KeyJ', label: 'J' }, run: (ws) => ws.focusNote() },
  { id: 'showHelp', title: 'Keyboard Shortcuts', group: 'Help', key: { code: 'Slash', label: '/' }, run: () => showHelp() },
];

const isMac = typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent);

/**
 * How a command's shortcut is written on this platform: "⌃⌥⇧N" on a Mac, "Alt+Shift+N" elsewhere.
 * @param {string} id
 */
export function shortcutLabel(id) {
  const key = COMMANDS.find((c) => c.id === id)?.key;
  if (!key) return '';
  if (key.primary) return isMac ? `${key.shift ? '⇧' : ''}⌘${key.label}` : `${key.shift ? 'Shift+' : ''}Ctrl+${key.label}${id === 'redo' ? ' or Ctrl+Y' : ''}`;
  if (isMac) return `⌃⌥${key.shift ? '⇧' : ''}${key.label}`;
  return `Alt+${key.shift ? 'Shift+' : ''}${key.label}`;
}

/**
 * Whether a key event has this platform's shortcut modifiers (Shift is matched per command).
 * @param {KeyboardEvent} event
 */
function hasShortcutModifiers(event) {
  return event.altKey && !event.metaKey && event.ctrlKey === isMac;
}

/**
 * The `aria-keyshortcuts` value of a command.
 * @param {Command} command
 */
function ariaShortcut(command) {
  if (!command.key) return '';
  if (command.key.primary) return `${command.key.shift ? 'Shift+' : ''}${isMac ? 'Meta' : 'Control'}+Z`;
  const key = command.key.code.replace(/^Key/, '').replace('Comma', ',').replace('Slash', '/').replace('BracketLeft', '[');
  return `${isMac ? 'Control+' : ''}Alt+${command.key.shift ? 'Shift+' : ''}${key}`;
}

/** @param {Workspace} ws */
export function installCommands(ws) {
  /** @param {string} id */
  const run = (id) => {
    const command = COMMANDS.find((c) => c.id === id);
    if (!command || (command.enabled && !command.enabled(ws))) return false;
    command.run(ws);
    return true;
  };

  window.addEventListener('keydown', (event) => {
    if (event.defaultPrevented || event.isComposing) return;
    // Undo and redo in the editor: Ctrl/⌘+Z, Shift+Ctrl/⌘+Z, Ctrl+Y. The browser's own undo
    // would take back other people's edits too, so the session's replaces it.
    const target = /** @type {HTMLElement} */ (event.target);
    const primary = isMac ? event.metaKey && !event.ctrlKey : event.ctrlKey && !event.metaKey;
    if (primary && !event.altKey && target === ws.editor && (event.code === 'KeyZ' || (event.code === 'KeyY' && !isMac))) {
      event.preventDefault();
      run(event.code === 'KeyY' || event.shiftKey ? 'redo' : 'undo');
      return;
    }
    if (hasShortcutModifiers(event)) {
      const command = COMMANDS.find((c) => c.key && !c.key.primary && c.key.code === event.code && Boolean(c.key.shift) === event.shiftKey);
      if (command) {
        event.preventDefault();
        run(command.id);
      }
      return;
    }
    // "?" outside text fields shows the shortcuts, as in many web apps.
    const typing = target.closest('input, textarea, [contenteditable]');
    if (!typing && event.key === '?' && !event.ctrlKey && !event.metaKey) {
      event.preventDefault();
      showHelp();
    }
  });

  for (const button of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll('[data-command]'))) {
    const command = COMMANDS.find((c) => c.id === button.getAttribute('data-command'));
    if (!command) continue;
    const label = button.getAttribute('aria-label') ?? command.title;
    const keys = shortcutLabel(command.id);
    button.setAttribute('aria-label', label);
    button.dataset.tooltip = keys ? `${label} (${keys})` : label; // see tooltip.js
    if (command.key) button.setAttribute('aria-keyshortcuts', ariaShortcut(command));
    button.addEventListener('click', () => run(command.id));
  }

  const help = byId('help', HTMLDialogElement);
  const groups = [...new Set(COMMANDS.map((c) => c.group))];
  help.replaceChildren(
    h('div', { class: 'dialog-header' },
      h('h2', { id: 'help-title' }, 'Keyboard Shortcuts'),
      h('button', { type: 'button', class: 'icon-button', 'aria-label': 'Close', html: icons.close, onclick: () => help.close() })),
    h('div', { class: 'help-body' },
      ...groups.map((group) =>
        h('section', { class: 'help-group' },
          h('h3', {}, group),
          h('dl', {},
            ...COMMANDS.filter((c) => c.group === group).flatMap((c) => [
              h('dt', {}, c.title),
              h('dd', {}, h('kbd', {}, shortcutLabel(c.id))),
            ])))),
      h('section', { class: 'help-group' },
        h('h3', {}, 'Anywhere'),
        h('dl', {},
          h('dt', {}, 'Close a panel or menu'), h('dd', {}, h('kbd', {}, 'Esc')),
          h('dt', {}, 'Document actions'), h('dd', {}, h('kbd', {}, 'Right-click'))))),
  );
  return run;
}

export function showHelp() {
  const help = byId('help', HTMLDialogElement);
  if (!help.open) help.showModal();
}
