// @ts-check
/**
 * The sidebar: the workspace's documents (click to open here; a context menu to open in a new
 * window, rename or delete; rows are drag sources, see dragdrop.js), and who you are.
 *
 * @module app/sidebar
 */
import { byId, h, icons, initials, relativeTime } from './dom.js';
import { promptDialog, toast } from './feedback.js';
import { cleanName, colorFor, saveName } from './identity.js';
import { shortcutLabel } from './commands.js';
import { othersIn } from './presence.js';

/** @typedef {import('./workspace.js').Workspace} Workspace */
/** @typedef {import('../lib/documents.js').DocumentSummary} DocumentSummary */

/**
 * Opens the document's context menu at a point.
 * @typedef {(id: string, x: number, y: number) => void} OpenMenu
 */

/** @param {Workspace} ws */
export function installSidebar(ws) {
  const list = byId('document-list');
  const empty = byId('documents-empty');
  const menu = byId('context-menu');
  const openMenu = installContextMenu(ws, menu);
  const render = () => renderDocuments(ws, list, empty, openMenu, render);
  installListEvents(ws, list, openMenu);
  installIdentity(ws);

  ws.onRender(render);
  render();
  setInterval(render, 60_000); // "just now" becomes "2 min ago"
}

/**
 * Draws the document list (in place when the order is unchanged) and its empty state.
 * @param {Workspace} ws
 * @param {HTMLElement} list
 * @param {HTMLElement} empty
 * @param {OpenMenu} openMenu
 * @param {() => void} render this function bound to its arguments, to redraw after a drag
 */
function renderDocuments(ws, list, empty, openMenu, render) {
  const documents = ws.list.sorted();
  const rows = documents.map((d) => documentRow(ws, d, openMenu));
  const existing = /** @type {HTMLElement[]} */ ([...list.children]);
  const sameOrder =
    existing.length === rows.length && existing.every((el, i) => el.dataset.documentId === rows[i].dataset.documentId);
  if (sameOrder) {
    // Update rows in place: a row being dragged, hovered or focused stays the same element.
    existing.forEach((el, i) => {
      for (const name of ['aria-selected', 'aria-label', 'tabindex', 'title']) {
        el.setAttribute(name, rows[i].getAttribute(name) ?? '');
      }
      el.replaceChildren(...rows[i].childNodes);
    });
  } else if (list.querySelector('.dragging')) {
    // Never pull a drag's source out from under it: redraw once the drag ends.
    list.addEventListener('dragend', () => setTimeout(render), { once: true });
  } else {
    const focusedId = /** @type {HTMLElement | null} */ (document.activeElement)?.closest?.('.document-row')?.getAttribute('data-document-id');
    list.replaceChildren(...rows);
    if (focusedId) /** @type {HTMLElement | null} */ (list.querySelector(`[data-document-id="${CSS.escape(focusedId)}"]`))?.focus();
  }
  empty.hidden = documents.length > 0 || ws.list.supported === null;
  if (ws.list.supported === false) {
    empty.replaceChildren(h('strong', {}, 'No documents here yet'), 'This server doesn’t support documents yet.');
  } else {
    empty.replaceChildren(
      h('strong', {}, 'No documents'),
      'Create one with the New Document button, or ',
      h('kbd', {}, shortcutLabel('newDocument')),
      '.',
    );
  }
  byId('new-document').toggleAttribute('disabled', ws.list.supported === false);
}

/**
 * @param {Workspace} ws
 * @param {DocumentSummary} d
 * @param {OpenMenu} openMenu
 */
function documentRow(ws, d, openMenu) {
  const selected = d.id === ws.documentId;
  // Other people, once each however many windows (on any node) they have it open in.
  const me = ws.client.user?.id ?? ws.identity.name;
  const people = othersIn(d, me);
  const label = `${d.title}${people.length ? `, ${people.length} ${people.length === 1 ? 'other person' : 'other people'} here: ${people.map((p) => p.description).join('; ')}` : ''}`;
  return h('li', {
    class: 'document-row',
    role: 'option',
    tabindex: selected || (!ws.documentId && d === ws.list.sorted()[0]) ? '0' : '-1',
    'aria-selected': String(selected),
    'aria-label': label,
    draggable: 'true',
    dataset: { documentId: d.id },
    title: `${d.title} — drag to another window, or to the new-window zone`,
  },
  h('span', { class: 'document-icon', html: icons.document }),
  h('span', { class: 'document-text' },
    h('div', { class: 'document-name' }, d.title),
    h('div', { class: 'document-meta' }, `${relativeTime(d.modifiedAt)} · ${formatLength(d.length)}`)),
  h('span', { class: 'document-people' },
    ...people.slice(0, 4).map((p) => h('span', {
      class: 'dot', style: { background: p.color ?? colorFor(p.name ?? '') }, title: p.description, dataset: { user: p.user },
    }))),
  h('button', {
    type: 'button', class: 'document-more', 'aria-label': `Actions for ${d.title}`, html: icons.more, tabindex: '-1',
    onclick: (/** @type {MouseEvent} */ event) => {
      event.stopPropagation();
      const rect = /** @type {HTMLElement} */ (event.currentTarget).getBoundingClientRect();
      openMenu(d.id, rect.left, rect.bottom + 4);
    },
  }));
}

/**
 * Clicks, keys and the context menu on the list's rows.
 * @param {Workspace} ws
 * @param {HTMLElement} list
 * @param {OpenMenu} openMenu
 */
function installListEvents(ws, list, openMenu) {
  list.addEventListener('click', (event) => {
    const target = /** @type {HTMLElement} */ (event.target).closest('.document-row');
    if (!target || !(target instanceof HTMLElement)) return;
    ws.openDocument(target.dataset.documentId ?? '');
  });
  list.addEventListener('keydown', (event) => {
    const target = /** @type {HTMLElement} */ (event.target).closest('.document-row');
    if (!(target instanceof HTMLElement)) return;
    const rows = [...list.querySelectorAll('.document-row')];
    const index = rows.indexOf(target);
    if (event.key === 'Enter' || event.key === ' ') {
      event.preventDefault();
      ws.openDocument(target.dataset.documentId ?? '', { focus: event.key === 'Enter' });
    } else if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      const next = /** @type {HTMLElement | undefined} */ (rows[index + (event.key === 'ArrowDown' ? 1 : -1)]);
      next?.focus();
    } else if (event.key === 'ContextMenu' || (event.shiftKey && event.key === 'F10')) {
      event.preventDefault();
      const rect = target.getBoundingClientRect();
      openMenu(target.dataset.documentId ?? '', rect.left + 24, rect.bottom);
    }
  });
  list.addEventListener('contextmenu', (event) => {
    const target = /** @type {HTMLElement} */ (event.target).closest('.document-row');
    if (!(target instanceof HTMLElement)) return;
    event.preventDefault();
    openMenu(target.dataset.documentId ?? '', event.clientX, event.clientY);
  });
}

/**
 * The document's context menu, as on a Mac: every item names its shortcut.
 * @param {Workspace} ws
 * @param {HTMLElement} menu
 * @returns {OpenMenu}
 */
function installContextMenu(ws, menu) {
  menu.addEventListener('keydown', (event) => {
    const items = /** @type {HTMLElement[]} */ ([...menu.querySelectorAll('[role="menuitem"]')]);
    const index = items.indexOf(/** @type {HTMLElement} */ (document.activeElement));
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      const step = event.key === 'ArrowDown' ? 1 : -1;
      items[(index + step + items.length) % items.length]?.focus();
    }
  });
  return (id, x, y) => openMenu(ws, menu, id, x, y);
}

/**
 * @param {Workspace} ws
 * @param {HTMLElement} menu
 * @param {string} id
 * @param {number} x
 * @param {number} y
 */
function openMenu(ws, menu, id, x, y) {
  const summary = ws.summaryOf(id);
  if (!summary) return;
  /** @type {Array<[string, string, () => void, string?]>} */
  const items = [
    ['Open', '', () => ws.openDocument(id, { focus: true })],
    ['Open in New Window', shortcutLabel('openInNewWindow'), () => ws.openInNewWindow(id)],
    ['Rename…', shortcutLabel('renameDocument'), () => ws.renameDocument(id)],
    ['Delete…', shortcutLabel('deleteDocument'), () => ws.deleteDocument(id), 'danger'],
  ];
  menu.replaceChildren(
    ...items.flatMap(([label, keys, run, kind], index) => {
      const item = h('button', {
        type: 'button', role: 'menuitem', class: kind ?? '', tabindex: '-1',
        onclick: () => {
          menu.hidePopover();
          run();
        },
      }, h('span', {}, label), keys ? h('kbd', {}, keys) : '');
      return index === 3 ? [h('hr', {}), item] : [item];
    }),
  );
  menu.dataset.documentId = id;
  menu.showPopover();
  const width = menu.offsetWidth;
  const height = menu.offsetHeight;
  menu.style.left = `${Math.min(x, window.innerWidth - width - 8)}px`;
  menu.style.top = `${Math.min(y, window.innerHeight - height - 8)}px`;
  /** @type {HTMLElement | null} */ (menu.querySelector('[role="menuitem"]'))?.focus();
}

/**
 * Who you are: click to change the display name (used from the next connection on).
 * @param {Workspace} ws
 */
function installIdentity(ws) {
  const identity = byId('identity');
  const renderIdentity = () => {
    const avatar = /** @type {HTMLElement} */ (identity.querySelector('.avatar'));
    avatar.textContent = initials(ws.identity.name);
    avatar.style.setProperty('--avatar', ws.identity.color);
    /** @type {HTMLElement} */ (identity.querySelector('.identity-name')).textContent = ws.identity.name;
    identity.title = `You are ${ws.identity.name}. Click to change your name.`;
  };
  identity.addEventListener('click', async () => {
    const name = await promptDialog({
      title: 'Your Name',
      message: 'Others see this name next to your cursor. It is used by every Panes window in this browser.',
      value: ws.identity.name,
      confirm: 'Save',
    });
    const cleaned = cleanName(name ?? '');
    if (!cleaned || cleaned === ws.identity.name) return;
    saveName(cleaned);
    ws.identity.name = cleaned;
    ws.identity.color = colorFor(cleaned);
    if (ws.doc) {
      ws.doc.name = cleaned;
      ws.doc.color = ws.identity.color;
    }
    renderIdentity();
    toast('Name saved. Reload this window to sign in with it.', { action: 'Reload', onAction: () => location.reload() });
  });
  renderIdentity();
}

/** @param {number} length code points */
function formatLength(length) {
  if (!length) return 'Empty';
  if (length < 1000) return `${length} characters`;
  return `${(length / 1000).toFixed(length < 10000 ? 1 : 0)}k characters`;
}
