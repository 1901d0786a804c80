// @ts-check
/**
 * The history panel: the open document's versions (named ones and the server's checkpoints),
 * newest first. Save the text now under a name, compare two versions (the server's diff, drawn
 * over the older text), restore one (an edit of this window's, which Undo takes back), or open
 * one in a window of its own, read-only, beside this one.
 *
 * @module app/history
 */
import { byId, h, icons, relativeTime } from './dom.js';
import { describeError, promptDialog, toast } from './feedback.js';

/** @typedef {import('./workspace.js').Workspace} Workspace */
/** @typedef {import('../types/panes-client.js').Version} Version */
/** @typedef {import('../types/panes-client.js').Operation} Operation */

/**
 * What a version is called in lists and titles.
 * @param {Version} version
 */
export function versionLabel(version) {
  return version.kind === 'named' ? version.name ?? 'Version' : `Checkpoint at revision ${version.revision}`;
}

/**
 * The difference as runs of kept, deleted and inserted text, for drawing.
 * @param {string} from
 * @param {Operation} operation
 * @returns {Array<{ kind: 'same' | 'deleted' | 'inserted', text: string }>}
 */
export function diffRuns(from, operation) {
  const chars = [...from];
  let at = 0;
  /** @type {Array<{ kind: 'same' | 'deleted' | 'inserted', text: string }>} */
  const runs = [];
  for (const component of operation) {
    if (typeof component === 'string') {
      runs.push({ kind: 'inserted', text: component });
    } else if (component > 0) {
      runs.push({ kind: 'same', text: chars.slice(at, at + component).join('') });
      at += component;
    } else {
      runs.push({ kind: 'deleted', text: chars.slice(at, at - component).join('') });
      at -= component;
    }
  }
  return runs;
}

/** @param {Workspace} ws */
export function installHistory(ws) {
  const dialog = byId('history', HTMLDialogElement);
  /** @type {Version[]} */
  let versions = [];
  /**
   * The versions ticked for comparing, oldest ticked first.
   * @type {string[]}
   */
  let ticked = [];
  const list = h('ul', { class: 'history-list', 'aria-label': 'Versions' });
  const diff = h('div', { class: 'history-diff', hidden: true, dataset: { testid: 'history-diff' } });
  const compare = h('button', { type: 'button', class: 'button', disabled: true, onclick: () => compareTicked() }, 'Compare');
  const save = h('button', { type: 'button', class: 'button primary', onclick: () => saveVersion() }, 'Save Version…');

  dialog.replaceChildren(
    h('div', { class: 'dialog-header' },
      h('h2', { id: 'history-title' }, 'Version History'),
      h('button', { type: 'button', class: 'icon-button', 'aria-label': 'Close', html: icons.close, onclick: () => dialog.close() })),
    h('div', { class: 'history-actions' }, save, compare),
    list,
    diff,
  );

  async function refresh() {
    const id = ws.documentId;
    if (!id) return;
    try {
      versions = await ws.client.listVersions(id);
    } catch (error) {
      toast(describeError(error, 'list the versions'));
      return;
    }
    ticked = ticked.filter((v) => versions.some((version) => version.id === v));
    draw();
  }

  function draw() {
    compare.toggleAttribute('disabled', ticked.length !== 2);
    save.toggleAttribute('disabled', !ws.doc || ws.doc.readOnly);
    if (versions.length === 0) {
      list.replaceChildren(h('li', { class: 'history-empty' }, 'No versions yet. Save one, or keep typing: the server keeps checkpoints as you go.'));
      return;
    }
    list.replaceChildren(...versions.map((version) => versionRow(ws, version, ticked.includes(version.id), (checked) => {
      ticked = ticked.filter((v) => v !== version.id);
      if (checked) ticked = [...ticked, version.id].slice(-2);
      draw();
    }, restore)));
  }

  async function saveVersion() {
    if (await saveNamedVersion(ws, dialog)) await refresh();
  }

  /** @param {Version} version */
  async function restore(version) {
    const doc = ws.doc;
    if (!doc) return;
    try {
      const result = await doc.restoreVersion(version.id);
      toast(result.unchanged ? 'The text is that version already.' : `Restored “${versionLabel(version)}”. Undo takes it back.`);
    } catch (error) {
      toast(describeError(error, 'restore the version'));
    }
    await refresh();
  }

  async function compareTicked() {
    const id = ws.documentId;
    if (!id || ticked.length !== 2) return;
    // Older first, whichever was ticked first.
    const [from, to] = versions.filter((v) => ticked.includes(v.id)).reverse();
    await showComparison(ws, diff, id, from, to);
  }

  dialog.addEventListener('panes:open', () => {
    if (!ws.documentId) return;
    diff.hidden = true;
    ticked = [];
    versions = [];
    draw();
    if (!dialog.open) dialog.showModal();
    refresh();
  });
}

/**
 * A version's row: a box to tick it for comparing, what it is, Open and Restore.
 * @param {Workspace} ws
 * @param {Version} version
 * @param {boolean} ticked
 * @param {(checked: boolean) => void} tick
 * @param {(version: Version) => void} restore
 */
function versionRow(ws, version, ticked, tick, restore) {
  const box = h('input', {
    type: 'checkbox', checked: ticked, 'aria-label': `Compare ${versionLabel(version)}`,
    onchange: () => tick(/** @type {HTMLInputElement} */ (box).checked),
  });
  return h('li', { class: 'history-row', dataset: { version: version.id, kind: version.kind } },
    box,
    h('div', { class: 'history-what' },
      h('span', { class: 'history-name' }, versionLabel(version)),
      h('span', { class: 'history-meta' }, `${relativeTime(version.createdAt)} · ${version.createdBy} · ${version.length} characters`)),
    h('button', { type: 'button', class: 'button', onclick: () => ws.openVersionInNewWindow(version) }, 'Open'),
    h('button', { type: 'button', class: 'button', disabled: !ws.doc || ws.doc.readOnly, onclick: () => restore(version) }, 'Restore'));
}

/**
 * Asks for a name and saves the text as it is now under it; the panel stays open. False when
 * nothing was asked for (no document) or no name was given, so the list needs no refresh.
 * @param {Workspace} ws
 * @param {HTMLDialogElement} dialog
 * @returns {Promise<boolean>}
 */
async function saveNamedVersion(ws, dialog) {
  const doc = ws.doc;
  if (!doc) return false;
  const name = await promptDialog({ title: 'Save Version', message: 'A name for the text as it is now.', confirm: 'Save', placeholder: 'Before the review' });
  if (!name) {
    if (!dialog.open) dialog.showModal();
    return false;
  }
  try {
    await doc.saveVersion(name);
    toast(`Saved “${name}”.`);
  } catch (error) {
    toast(describeError(error, 'save the version'));
  }
  if (!dialog.open) dialog.showModal();
  return true;
}

/**
 * The server's diff between two versions, drawn over the older text.
 * @param {Workspace} ws
 * @param {HTMLElement} diff
 * @param {string} id
 * @param {Version} from
 * @param {Version} to
 */
async function showComparison(ws, diff, id, from, to) {
  try {
    const [{ operation }, { text }] = await Promise.all([
      ws.client.compareVersions(id, from.id, to.id),
      ws.client.readVersion(id, from.id),
    ]);
    diff.hidden = false;
    diff.replaceChildren(
      h('p', { class: 'history-diff-title' }, `From “${versionLabel(from)}” to “${versionLabel(to)}”`),
      h('pre', { class: 'history-diff-text' },
        ...diffRuns(text, operation).map((run) =>
          run.kind === 'same' ? run.text : h(run.kind === 'inserted' ? 'ins' : 'del', {}, run.text))),
    );
  } catch (error) {
    toast(describeError(error, 'compare the versions'));
  }
}
