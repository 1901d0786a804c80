// @ts-check
/**
 * The Panes workspace page: connects this window (a scene) with the client library, then puts
 * the workspace together. `window.panes` exposes the client and workspace for the console and
 * for browser tests.
 *
 * @module app/main
 */
import { connectInBrowser, removeTicketFromURL } from '../panes-client.js';
import { installCommands } from './commands.js';
import { byId, icons } from './dom.js';
import { installDragAndDrop } from './dragdrop.js';
import { installHistory } from './history.js';
import { bindConnectionBanner, showClosedScreen, toast } from './feedback.js';
import { loadIdentity } from './identity.js';
import { installSettings } from './settings.js';
import { installSidebar } from './sidebar.js';
import { installSwitcher } from './switcher.js';
import { installTooltips } from './tooltip.js';
import { Workspace } from './workspace.js';

const identity = loadIdentity();

// `?fresh=1`: a window opened to start its own session. It inherited a copy of its opener's
// sessionStorage, which would otherwise resume (and fork) the opener's session.
const url = new URL(location.href);
if (url.searchParams.has('fresh')) {
  try {
    sessionStorage.removeItem(`panes.session.${identity.workspace}`);
  } catch {
    /* storage blocked */
  }
  url.searchParams.delete('fresh');
  history.replaceState(history.state, '', url.pathname + url.search);
}
if (url.searchParams.has('name')) {
  url.searchParams.delete('name');
  history.replaceState(history.state, '', url.pathname + url.search);
}

for (const [id, icon] of /** @type {const} */ ([
  ['new-document', 'compose'],
  ['toggle-sidebar', 'sidebar'],
  ['open-in-new-window', 'newWindow'],
  ['open-history', 'history'],
  ['open-switcher', 'windows'],
  ['open-settings', 'gear'],
  ['open-help', 'help'],
])) {
  byId(id).innerHTML = icons[icon];
}
byId('back').innerHTML = `${icons.back}<span>Documents</span>`;

const client = connectInBrowser({
  workspace: identity.workspace,
  auth: identity.token ? { token: identity.token } : { name: identity.name },
  animate: byId('app'),
  onClosed: () => showClosedScreen(workspace.closingSelf),
});
client.on('ticketUsed', (/** @type {{ invalid?: boolean }} */ event) => {
  removeTicketFromURL();
  if (event.invalid) toast('That window link had expired, so this window opened on its own.');
});

const workspace = new Workspace(client, identity);
bindConnectionBanner(client, workspace);
installSidebar(workspace);
installCommands(workspace);
installSettings(workspace);
installSwitcher(workspace);
installDragAndDrop(workspace);
installHistory(workspace);
installTooltips();
workspace.start();

Object.defineProperty(window, 'panes', { value: { client, workspace }, configurable: true });
