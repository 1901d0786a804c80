// @ts-check
/**
 * Window notes for the switcher. A note lives in its window's restoration activity, which
 * `listSessions` does not return; a window showing no document also sends it as its switcher
 * snapshot, but one showing a document cannot (the server keeps that snapshot in step with
 * the document). So each window also keeps its note in this browser's `localStorage`, by
 * session, where the switcher of any other window of this browser reads it.
 *
 * @module app/switcher-notes
 */

/** @param {string} workspace */
const key = (workspace) => `panes.notes.${workspace}`;

/**
 * Every note this browser knows in the workspace, by session.
 * @param {string} workspace
 * @returns {Record<string, string>}
 */
export function knownNotes(workspace) {
  try {
    const notes = JSON.parse(localStorage.getItem(key(workspace)) ?? '{}');
    return notes && typeof notes === 'object' ? notes : {};
  } catch {
    return {};
  }
}

/**
 * @param {string} workspace
 * @param {string} session
 * @param {string} note empty forgets it
 */
export function rememberNote(workspace, session, note) {
  const notes = knownNotes(workspace);
  const text = note.trim().slice(0, 400);
  if ((notes[session] ?? '') === text) return;
  if (text) notes[session] = text;
  else delete notes[session];
  save(workspace, notes);
}

/**
 * Forgets the notes of sessions that no longer exist.
 * @param {string} workspace
 * @param {Set<string>} sessions every session of the user in the workspace
 */
export function forgetOtherNotes(workspace, sessions) {
  const notes = knownNotes(workspace);
  const stale = Object.keys(notes).filter((session) => !sessions.has(session));
  if (stale.length === 0) return;
  for (const session of stale) delete notes[session];
  save(workspace, notes);
}

/**
 * True for a `storage` event about the workspace's notes.
 * @param {StorageEvent} event
 * @param {string} workspace
 */
export function isNotesChange(event, workspace) {
  return event.key === key(workspace);
}

/**
 * @param {string} workspace
 * @param {Record<string, string>} notes
 */
function save(workspace, notes) {
  try {
    if (Object.keys(notes).length) localStorage.setItem(key(workspace), JSON.stringify(notes));
    else localStorage.removeItem(key(workspace));
  } catch {
    /* storage full or blocked: the switcher shows no notes of other windows */
  }
}
