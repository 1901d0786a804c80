// @ts-check
/**
 * A `PanesClient` wired to a browser window: the socket URL from the page's origin, the
 * session in `sessionStorage`, the windows' unsent edits in IndexedDB, a window ticket from the URL (removed once used, so a reload
 * resumes by `sessionStorage`), traits from media queries (and reported again when they
 * change), lifecycle from visibility and focus, a retry at once when the network comes back
 * or the page becomes visible, and the window closed with its dismissal animation when its
 * session is destroyed.
 *
 * @module browser
 */
import { PanesClient } from './panes-client.js';
import { IndexedDBPendingStore } from './pending-store.js';

/** @typedef {import('../types/panes-client.js').Traits} Traits */
/** @typedef {import('../types/panes-client.js').LifecycleState} LifecycleState */
/** @typedef {import('../types/panes-client.js').DismissalAnimation} DismissalAnimation */
/** @typedef {import('../types/panes-client.js').BrowserClientOptions} BrowserClientOptions */

/** The width at or below which a window is `compact` (a phone, or a narrow window). */
export const COMPACT_MAX_WIDTH = 700;

/** How long the window's traits must stay put before they are reported (a drag-resize settles). */
const TRAITS_SETTLE_MS = 150;

/**
 * The `ws:`/`wss:` URL of the server that served the page.
 * @param {Location} [location]
 */
export function socketURL(location = window.location) {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${location.host}/ws`;
}

/**
 * The window's size class and pointer.
 * @param {Window} [win]
 * @returns {Traits}
 */
export function currentTraits(win = window) {
  return {
    width: win.matchMedia(`(max-width: ${COMPACT_MAX_WIDTH}px)`).matches ? 'compact' : 'regular',
    pointer: win.matchMedia('(pointer: coarse)').matches ? 'coarse' : 'fine',
  };
}

/**
 * Whether the page is visible and focused.
 * @param {Window} [win]
 * @returns {LifecycleState}
 */
export function currentLifecycle(win = window) {
  const visible = win.document.visibilityState === 'visible';
  return { visible, focused: visible && win.document.hasFocus() };
}

/**
 * Reports visibility and focus changes to the server until the returned function is called,
 * and skips the wait before the next reconnection attempt when the network comes back
 * (`online`) or the page becomes visible: the moments a person looks at the window, or the
 * moments the server most likely became reachable again.
 * @param {PanesClient} client
 * @param {Window} [win]
 * @returns {() => void}
 */
export function bindLifecycle(client, win = window) {
  const report = () => client.setLifecycle(currentLifecycle(win));
  const retry = () => client.reconnectNow();
  const visibility = () => {
    report();
    if (win.document.visibilityState === 'visible') retry();
  };
  const targets = /** @type {Array<[EventTarget, string, () => void]>} */ ([
    [win.document, 'visibilitychange', visibility],
    [win, 'focus', report],
    [win, 'blur', report],
    [win, 'pageshow', visibility],
    [win, 'online', retry],
  ]);
  for (const [target, type, fn] of targets) target.addEventListener(type, fn);
  return () => {
    for (const [target, type, fn] of targets) target.removeEventListener(type, fn);
  };
}

/**
 * Reports the window's traits to the server whenever they change, until the returned function
 * is called: the width crossing `COMPACT_MAX_WIDTH`, the primary pointer changing (a tablet
 * docked or undocked), or the window moving to a display of another pixel ratio (where the
 * other two are read again). Changes are reported once the window has settled for
 * `options.settleMs` (default 150 ms), and `client.setTraits` sends only what differs from
 * what the server has, so a drag-resize within one size class sends nothing. Lay the window
 * out from `client.traits` and `traitsChanged`: the traits the server answered with.
 * @param {PanesClient} client
 * @param {Window} [win]
 * @param {{ settleMs?: number }} [options]
 * @returns {() => void}
 */
export function bindTraits(client, win = window, options = {}) {
  const settleMs = options.settleMs ?? TRAITS_SETTLE_MS;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  let bound = true;
  const report = () => {
    timer = undefined;
    if (bound) client.setTraits(currentTraits(win));
  };
  const schedule = () => {
    if (!bound) return;
    if (timer !== undefined) win.clearTimeout(timer);
    timer = win.setTimeout(report, settleMs);
  };
  const queries = [`(max-width: ${COMPACT_MAX_WIDTH}px)`, '(pointer: coarse)'].map((query) => win.matchMedia(query));
  for (const query of queries) query.addEventListener('change', schedule);
  // A media query on the current ratio changes when the window moves to another display (or
  // the page is zoomed); it is made again for the new ratio each time.
  /** @type {MediaQueryList | null} */
  let ratio = null;
  const watchRatio = () => {
    ratio?.removeEventListener('change', ratioChanged);
    ratio = win.matchMedia(`(resolution: ${win.devicePixelRatio}dppx)`);
    ratio.addEventListener('change', ratioChanged);
  };
  const ratioChanged = () => {
    watchRatio();
    schedule();
  };
  watchRatio();
  // `resize` as well: not every browser tells a media query's listeners of every resize.
  win.addEventListener('resize', schedule);
  schedule(); // the window may have changed since `connect` read its traits
  return () => {
    bound = false;
    if (timer !== undefined) win.clearTimeout(timer);
    for (const query of queries) query.removeEventListener('change', schedule);
    ratio?.removeEventListener('change', ratioChanged);
    win.removeEventListener('resize', schedule);
  };
}

/**
 * The window ticket in the page's URL (`?ticket=`), if any.
 * @param {Location} [location]
 */
export function ticketFromURL(location = window.location) {
  return new URL(location.href).searchParams.get('ticket');
}

/**
 * Removes `?ticket=` from the address bar without reloading, so that a reload (or a duplicated
 * tab) resumes by `sessionStorage` and never replays a used ticket.
 * @param {Window} [win]
 */
export function removeTicketFromURL(win = window) {
  const url = new URL(win.location.href);
  if (!url.searchParams.has('ticket')) return;
  url.searchParams.delete('ticket');
  win.history.replaceState(win.history.state, '', url.pathname + url.search + url.hash);
}

/**
 * Plays a window's dismissal animation (`standard`: fade and shrink; `commit`: slide up, as
 * a sent message; `decline`: shake, then fade, as a discarded draft).
 * @param {HTMLElement} element
 * @param {DismissalAnimation | string} animation
 * @returns {Promise<void>}
 */
export async function playDismissal(element, animation) {
  if (typeof element.animate !== 'function') return;
  const reduce = window.matchMedia?.('(prefers-reduced-motion: reduce)').matches;
  /** @type {Keyframe[]} */
  let frames;
  let duration = 320;
  if (reduce) {
    frames = [{ opacity: 1 }, { opacity: 0 }];
    duration = 150;
  } else if (animation === 'commit') {
    frames = [
      { transform: 'translateY(0)', opacity: 1 },
      { transform: 'translateY(-40%)', opacity: 0 },
    ];
  } else if (animation === 'decline') {
    duration = 520;
    frames = [
      { transform: 'translateX(0)', opacity: 1, offset: 0 },
      { transform: 'translateX(-14px)', offset: 0.15 },
      { transform: 'translateX(12px)', offset: 0.3 },
      { transform: 'translateX(-8px)', offset: 0.45 },
      { transform: 'translateX(4px)', opacity: 1, offset: 0.6 },
      { transform: 'translateX(0) scale(0.96)', opacity: 0, offset: 1 },
    ];
  } else {
    frames = [
      { transform: 'scale(1)', opacity: 1 },
      { transform: 'scale(0.94)', opacity: 0 },
    ];
  }
  const run = element.animate(frames, { duration, easing: 'cubic-bezier(0.2, 0.8, 0.2, 1)', fill: 'forwards' });
  await run.finished.catch(() => {});
}

/**
 * Tries to close the window; resolves true if it went away. Browsers only let scripts close
 * windows that scripts opened.
 * @param {Window} [win]
 * @returns {Promise<boolean>}
 */
export async function closeWindow(win = window) {
  win.close();
  await new Promise((resolve) => setTimeout(resolve, 50));
  return win.closed;
}

/**
 * Opens a window for a ticket URL (`/?ticket=…`) from `requestActivation` or a drop, in the
 * same workspace as this page. Returns null when the browser blocked it.
 * @param {string} url
 * @param {{ workspace?: string, win?: Window }} [options]
 * @returns {Window | null}
 */
export function openTicketWindow(url, options = {}) {
  const win = options.win ?? window;
  const target = new URL(url, win.location.href);
  const here = new URL(win.location.href);
  for (const key of ['workspace', 'name']) {
    const value = here.searchParams.get(key);
    if (value && !target.searchParams.has(key)) target.searchParams.set(key, value);
  }
  if (options.workspace && options.workspace !== 'default') target.searchParams.set('workspace', options.workspace);
  return win.open(target.href, '_blank');
}

/**
 * A client for this browser window, started. See the module comment for what it wires up.
 * @param {BrowserClientOptions} [options]
 * @returns {PanesClient}
 */
export function connectInBrowser(options = {}) {
  const ticket = ticketFromURL();
  const client = new PanesClient({
    storage: safeSessionStorage(),
    pendingStore: safePendingStore(),
    ticket,
    traits: () => currentTraits(),
    lifecycle: currentLifecycle(),
    ...options,
    url: options.url ?? socketURL(),
  });
  client.on('ticketUsed', () => removeTicketFromURL());
  bindLifecycle(client);
  if (options.traits === undefined) bindTraits(client);
  if (options.closeOnDestroy !== false) {
    client.on('destroyed', async (event) => {
      await playDismissal(options.animate ?? document.body, event.animation);
      if (!(await closeWindow())) options.onClosed?.();
    });
  }
  client.start().catch(() => {}); // failures are reported as `error` and `status` events
  return client;
}

/**
 * IndexedDB for the windows' unsent edits, or undefined (kept in memory) where the browser
 * has none or blocks it.
 */
function safePendingStore() {
  try {
    return window.indexedDB ? new IndexedDBPendingStore() : undefined;
  } catch {
    return undefined;
  }
}

/** `sessionStorage`, or null where it is blocked (some privacy modes throw on access). */
function safeSessionStorage() {
  try {
    const storage = window.sessionStorage;
    storage.getItem('panes.probe');
    return storage;
  } catch {
    return null;
  }
}
