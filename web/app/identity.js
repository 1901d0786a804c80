// @ts-check
/**
 * Who is using this browser, and in which workspace: a display name picked once and kept in
 * `localStorage` (shared by every tab of this origin; `?name=` overrides and stores it), a
 * colour derived from it for presence, and the workspace from `?workspace=`. With a server that
 * authenticates (`--auth tokens` or `jwt`), `?token=` is sent instead of the name (kept for
 * this tab in `sessionStorage`, so a reload keeps it).
 *
 * @module app/identity
 */

const NAME_KEY = 'panes.name';
const TOKEN_KEY = 'panes.token';

/** Presence colours: distinct, readable with white text, fine in both themes. */
export const PALETTE = ['#0a84ff', '#ff375f', '#30b0c7', '#ff9f0a', '#af52de', '#34c759', '#5e5ce6', '#ff6b22', '#a2845e', '#00a6a6'];

/**
 * A stable colour for a name.
 * @param {string} name
 */
export function colorFor(name) {
  let hash = 2166136261;
  for (const ch of name) {
    hash ^= ch.codePointAt(0) ?? 0;
    hash = Math.imul(hash, 16777619);
  }
  return PALETTE[(hash >>> 0) % PALETTE.length];
}

/** @param {string} name */
export function cleanName(name) {
  return name.replace(/\s+/g, ' ').trim().slice(0, 40);
}

/**
 * @returns {{ name: string, color: string, workspace: string, token: string | null }}
 */
export function loadIdentity() {
  const params = new URL(location.href).searchParams;
  let name = cleanName(params.get('name') ?? '');
  try {
    if (name) localStorage.setItem(NAME_KEY, name);
    else name = cleanName(localStorage.getItem(NAME_KEY) ?? '');
    if (!name) {
      name = `Guest-${String(Math.floor(1000 + Math.random() * 9000))}`;
      localStorage.setItem(NAME_KEY, name);
    }
  } catch {
    name ||= 'Guest';
  }
  const workspace = (params.get('workspace') ?? 'default').replace(/[^A-Za-z0-9._-]/g, '').slice(0, 64) || 'default';
  let token = params.get('token');
  try {
    if (token) sessionStorage.setItem(TOKEN_KEY, token);
    else token = sessionStorage.getItem(TOKEN_KEY);
  } catch {
    /* private mode: the token lasts for this page only */
  }
  return { name, color: colorFor(name), workspace, token };
}

/**
 * Remembers a new display name for the next connection (and the other tabs' next reload).
 * @param {string} name
 */
export function saveName(name) {
  try {
    localStorage.setItem(NAME_KEY, name);
  } catch {
    /* private mode: the name lasts for this page only */
  }
}
