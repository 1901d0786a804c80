// @ts-check
/**
 * Telling people what is going on: the connection banner, toasts, friendly error messages,
 * confirmation and text prompts, and the screen of a window whose session was closed.
 *
 * @module app/feedback
 */
import { byId, h } from './dom.js';

/** @typedef {import('../lib/errors.js').PanesError} PanesError */
/** @typedef {import('../panes-client.js').PanesClient} PanesClient */
/** @typedef {import('../lib/panes-client.js').StatusChange} StatusChange */

/**
 * A sentence for people, for an error while trying to `action` ("rename the document").
 * @param {any} error a PanesError, or anything thrown
 * @param {string} action
 */
export function describeError(error, action) {
  const code = error?.code ?? '';
  switch (code) {
    case 'disconnected':
    case 'timeout':
      return `Couldn’t ${action}: the connection dropped. Try again once you’re back online.`;
    case 'closed':
      return `Couldn’t ${action}: this window is closed.`;
    case 'unknown_type':
      return `This server can’t ${action} yet.`;
    case 'forbidden':
      // A link that no longer opens the document (revoked, expired, not this workspace's) says so.
      if (error.field === 'link') return `Couldn’t ${action}: ${error.message ?? 'the link does not open it'}.`;
      return `You don’t have permission to ${action} in this workspace.`;
    case 'rate_limited':
      return `Too many changes at once. Wait a moment, then ${action} again.`;
    case 'document_not_found':
      return 'That document no longer exists. Someone may have deleted it.';
    case 'session_not_found':
      return 'That window no longer exists.';
    case 'too_large':
      return `Couldn’t ${action}: it is too large. ${error.message ?? ''}`.trim();
    case 'too_many':
      return `Couldn’t ${action}: a limit was reached. ${error.message ?? ''}`.trim();
    case 'unsupported_activity':
      return 'No kind of window can show that.';
    case 'storage_failed':
    case 'internal_error':
      return `The server couldn’t ${action} just now. Please try again.`;
    default:
      return `Couldn’t ${action}${error?.message ? `: ${error.message}` : '.'}`;
  }
}

/**
 * What to tell a window whose open document was deleted, naming who deleted it (the
 * `documentDeleted` event's `by`).
 * @param {string} title the document's title
 * @param {{ user?: string, name?: string, scene?: string } | undefined} by absent from older servers
 * @param {{ user: string | null, scene: string | null }} self this window's user and scene
 * @returns {string | null} null for this window's own deletion, which its confirmation reports
 */
export function deletionMessage(title, by, self) {
  const quoted = `“${title}”`;
  if (by?.scene && by.scene === self.scene) return null;
  if (by?.user && by.user === self.user) return `You deleted ${quoted} in another window.`;
  if (by?.name) return `${by.name} deleted ${quoted}.`;
  return `${quoted} was deleted, so it was closed here.`;
}

/**
 * Shows a short message at the bottom of the window.
 * @param {string} message
 * @param {{ action?: string, onAction?: () => void, duration?: number }} [options]
 */
export function toast(message, options = {}) {
  const container = byId('toasts');
  const element = h('div', { class: 'toast', dataset: { testid: 'toast' } }, h('span', {}, message));
  if (options.action && options.onAction) {
    const run = options.onAction;
    element.append(
      h('button', {
        type: 'button',
        onclick: () => {
          element.remove();
          run();
        },
      }, options.action),
    );
  }
  container.append(element);
  setTimeout(() => element.remove(), options.duration ?? 5000);
  return element;
}

/**
 * Keeps the banner and the sidebar's connection dot in step with the client's status: a quiet
 * "reconnecting" banner with a countdown and "Retry now", edits kept meanwhile.
 * @param {PanesClient} client
 * @param {{ pendingEdits: () => boolean }} workspace
 */
export function bindConnectionBanner(client, workspace) {
  const banner = byId('banner');
  const text = /** @type {HTMLElement} */ (banner.querySelector('.banner-text'));
  const action = /** @type {HTMLButtonElement} */ (banner.querySelector('.banner-action'));
  const dot = byId('connection-state');
  /** @type {any} */
  let showTimer = null;
  /** @type {any} */
  let countdown = null;
  let lost = false;
  /** @type {StatusChange} */
  let last = { status: 'connecting' };

  const render = () => {
    const change = last;
    dot.dataset.status = change.status;
    const labels = /** @type {Record<string, string>} */ ({
      connecting: 'Connecting', connected: 'Connected', reconnecting: 'Reconnecting', failed: 'Cannot connect',
      closed: 'Closed', destroyed: 'Closed', idle: 'Not connected',
    });
    const session = client.session;
    const detail = change.status === 'connected' && session
      ? ` — window session ${session.persistentIdentifier.slice(0, 8)}…, scene ${client.scene ?? ''}`
      : '';
    dot.setAttribute('aria-label', `${labels[change.status] ?? change.status}${detail}`);
    dot.title = `${labels[change.status] ?? change.status}${detail}`;
    if (change.status === 'reconnecting' || change.status === 'connecting') {
      const seconds = change.retryAt ? Math.max(0, Math.ceil((change.retryAt - Date.now()) / 1000)) : 0;
      const when = seconds > 1 ? `Reconnecting in ${seconds} s…` : 'Reconnecting…';
      const kept = workspace.pendingEdits()
        ? ' Your changes are kept and will be sent when the connection is back.'
        : ' Anything you change is kept and sent once it’s back.';
      text.textContent = lost ? `Connection lost. ${when}${kept}` : 'Connecting to the server…';
      action.hidden = !lost;
      action.textContent = 'Retry now';
      action.onclick = () => client.reconnectNow();
      banner.dataset.kind = 'warning';
    }
  };

  client.on('status', (/** @type {StatusChange} */ change) => {
    last = change;
    clearTimeout(showTimer);
    clearInterval(countdown);
    if (change.status === 'connected') {
      const wasShown = !banner.hidden && lost;
      banner.hidden = true;
      if (wasShown) toast('Connected again. Everything is up to date.');
      render();
      return;
    }
    if (change.status === 'reconnecting' || change.status === 'connecting') {
      if (change.status === 'reconnecting' && client.epoch > 0) lost = true;
      render();
      // A blip shorter than the grace period shows nothing.
      showTimer = setTimeout(() => {
        banner.hidden = false;
        render();
      }, lost ? 700 : 1200);
      countdown = setInterval(render, 1000);
      return;
    }
    if (change.status === 'failed') {
      banner.dataset.kind = 'error';
      banner.hidden = false;
      text.textContent = failureText(change.error);
      action.hidden = false;
      action.textContent = 'Reload';
      action.onclick = () => location.reload();
    }
    render();
  });
  client.on('disconnect', () => {
    lost = true;
  });
}

/** @param {PanesError | undefined} error */
function failureText(error) {
  switch (error?.code) {
    case 'unauthenticated':
      return 'You’re not signed in to this server. Sign in, then reload.';
    case 'not_a_member':
      return 'You’re not a member of this workspace. Ask its owner to add you.';
    case 'unsupported_protocol':
      return 'This page is out of date for the server. Reload to get the new version.';
    case 'invalid_field':
    case 'missing_field':
      return `The server refused this window: ${error.message}`;
    default:
      return `Can’t connect to Panes: ${error?.message ?? 'unknown error'}`;
  }
}

/**
 * Asks a yes/no question in a small dialog.
 * @param {{ title: string, message: string, confirm: string, danger?: boolean }} options
 * @returns {Promise<boolean>}
 */
export function confirmDialog(options) {
  const dialog = byId('prompt', HTMLDialogElement);
  return new Promise((resolve) => {
    const cancel = h('button', { type: 'button', class: 'button', onclick: () => dialog.close('cancel') }, 'Cancel');
    const ok = h('button', { type: 'button', class: `button ${options.danger ? 'danger' : 'primary'}`, onclick: () => dialog.close('ok') }, options.confirm);
    dialog.replaceChildren(h('h2', {}, options.title), h('p', {}, options.message), h('div', { class: 'prompt-actions' }, cancel, ok));
    dialog.setAttribute('aria-label', options.title);
    dialog.onclose = () => resolve(dialog.returnValue === 'ok');
    dialog.returnValue = '';
    dialog.showModal();
    ok.focus();
  });
}

/**
 * Asks for a line of text.
 * @param {{ title: string, message?: string, value?: string, confirm: string, placeholder?: string }} options
 * @returns {Promise<string | null>}
 */
export function promptDialog(options) {
  const dialog = byId('prompt', HTMLDialogElement);
  return new Promise((resolve) => {
    const input = h('input', { type: 'text', value: options.value ?? '', placeholder: options.placeholder ?? '', 'aria-label': options.title });
    const form = h('form', { method: 'dialog' },
      h('h2', {}, options.title),
      options.message ? h('p', {}, options.message) : null,
      input,
      h('div', { class: 'prompt-actions' },
        h('button', { type: 'button', class: 'button', onclick: () => dialog.close('cancel') }, 'Cancel'),
        h('button', { type: 'submit', class: 'button primary', value: 'ok' }, options.confirm)));
    dialog.replaceChildren(form);
    dialog.setAttribute('aria-label', options.title);
    dialog.returnValue = '';
    dialog.onclose = () => resolve(dialog.returnValue === 'ok' ? input.value : null);
    dialog.showModal();
    input.select();
  });
}

/**
 * Covers the page when the window's session was closed but the browser refused `window.close()`.
 * @param {boolean} [byThisWindow] the window closed itself (Close Window), rather than another
 */
export function showClosedScreen(byThisWindow = false) {
  const screen = byId('closed-screen');
  screen.replaceChildren(
    h('h1', {}, 'This window was closed'),
    h('p', {}, byThisWindow
      ? 'Its state was discarded. The browser keeps tabs it did not open, so close this one yourself.'
      : 'It was closed from another window, and its state was discarded. You can close this tab.'),
    h('button', { type: 'button', class: 'button primary', onclick: () => location.assign(freshWindowURL()) }, 'Open a New Window'),
  );
  screen.hidden = false;
  document.title = 'Closed — Panes';
  const app = byId('app');
  app.inert = true;
  app.getAnimations().forEach((a) => a.cancel());
  app.style.opacity = '0';
}

/** This page's URL for a brand-new window: same workspace and name, no session. */
export function freshWindowURL() {
  const url = new URL(location.href);
  url.searchParams.delete('ticket');
  url.searchParams.set('fresh', '1');
  return url.pathname + url.search;
}
