// @ts-check
/**
 * The workspace window: state and the actions every part of the UI shares (open a document,
 * show or hide the sidebar, make and close windows), and state restoration. The parts that
 * draw are in their own modules: sidebar.js, settings.js, switcher.js, commands.js,
 * dragdrop.js.
 *
 * @module app/workspace
 */
import { DocumentList, DocumentSession, TextBinding, openTicketWindow, ot } from '../panes-client.js';
import { byId, h, icons } from './dom.js';
import { confirmDialog, deletionMessage, describeError, freshWindowURL, promptDialog, toast } from './feedback.js';
import { CaretLabels, peopleIn, renderPeople } from './presence.js';
import { versionLabel } from './history.js';
import { StateSaver } from './restoration.js';
import { LinkTokens } from './links.js';

/** @typedef {import('../panes-client.js').PanesClient} PanesClient */
/** @typedef {import('../lib/panes-client.js').Activity} Activity */
/** @typedef {import('../lib/panes-client.js').ConnectResult} ConnectResult */
/** @typedef {import('../lib/documents.js').DocumentSummary} DocumentSummary */
/** @typedef {import('../lib/ot.js').Selection} Selection */

export const DOCUMENT_ACTIVITY = 'panes.document';
export const WORKSPACE_ACTIVITY = 'panes.workspace';
/** A window showing one version of a document, read-only; its target is `document/version`. */
export const VERSION_ACTIVITY = 'panes.document.version';
/** The switcher's title for a window showing no document. */
export const NO_DOCUMENT_TITLE = 'No document open';

/**
 * @typedef {object} OpenOptions
 * @property {number} [scroll] restore this scroll position
 * @property {Selection | null} [selection] restore this selection (code points)
 * @property {boolean} [focus] focus the editor once open
 * @property {boolean} [showDetail] in compact layout, go to the document (default true)
 */

export class Workspace {
  /**
   * @param {PanesClient} client
   * @param {{ name: string, color: string, workspace: string }} identity
   */
  constructor(client, identity) {
    this.client = client;
    this.identity = identity;
    this.app = byId('app');
    this.editor = byId('editor', HTMLTextAreaElement);
    this.readOnlyBadge = byId('read-only');
    /** Link tokens this window opens documents through (`?open=ID&link=TOKEN`), kept across a reload. */
    this.links = new LinkTokens(identity.workspace);
    this.editorWrap = byId('editor-wrap');
    this.welcome = byId('welcome');
    this.titleInput = byId('document-title', HTMLTextAreaElement);
    this.note = byId('window-note', HTMLTextAreaElement);
    this.participantsList = byId('participants');
    this.wordCount = byId('word-count');

    this.list = new DocumentList(client);
    /** @type {string | null} */
    this.documentId = null;
    /** @type {DocumentSession | null} */
    this.doc = null;
    /** @type {TextBinding | null} */
    this.binding = null;
    /** @type {CaretLabels | null} */
    this.caretLabels = null;
    /** Who deleted each document, from `documentDeleted` (it comes before the session's `deleted`). @type {Map<string, any>} */
    this.deletedBy = new Map();
    /** The switcher title another window gave this one (`sessionRefreshed`), while it shows no document. @type {string | null} */
    this.refreshedTitle = null;
    this.sidebarShown = true;
    /** @type {'regular' | 'compact'} */
    this.layout = 'regular';
    /** @type {'list' | 'detail'} */
    this.view = 'list';
    this.prefs = { showWordCount: false, theme: 'system', fontSize: 15 };
    this.restored = false;
    /** What the document being opened should restore, until it is open. @type {OpenOptions | null} */
    this.opening = null;
    /** This window asked for its own destruction (Close Window). */
    this.closingSelf = false;
    /** The title is flagged: another window asked for this one, and the browser kept focus elsewhere. */
    this.flagged = false;
    /**
     * The version this window shows, read-only, when it is a version's window (it then opens
     * no document).
     * @type {{ document: string, id: string, title: string, text: string } | null}
     */
    this.version = null;
    this.versionView = byId('version-view');
    /** Listeners for state changes the other modules draw (`render`). @type {Set<() => void>} */
    this.renderers = new Set();
    this.saver = new StateSaver(client, () => this.activity(), () => this.summary(), () => this.subtitle());
  }

  start() {
    // The layout follows the scene's traits as the server answered them (UIKit's
    // traitCollectionDidChange), so this window and the switcher agree on what it is;
    // `bindTraits` (set up by connectInBrowser) reports the window's. Before the first answer,
    // and while disconnected, they are the window's own.
    const applyLayout = () => this.setLayout(this.client.traits.width);
    this.client.on('traitsChanged', applyLayout);
    applyLayout();

    this.list.on('change', () => this.render());
    this.list.on('unsupported', () => this.render());
    this.list.start();

    this.client.on('connect', (/** @type {import('../lib/panes-client.js').ConnectEvent} */ event) => {
      if (event.first) this.restore(event.result);
      else if (event.sessionChanged) this.pushUserInfo();
    });
    this.client.on('activate', (/** @type {{ activity: Activity }} */ event) => this.activated(event.activity));
    this.client.on('documentsChanged', (/** @type {any} */ event) => {
      if (event.document?.id === this.documentId && event.change === 'renamed') this.renderHeader();
    });

    this.client.on('documentDeleted', (/** @type {any} */ event) => {
      if (typeof event.document === 'string') this.deletedBy.set(event.document, event.by);
    });
    this.client.on('sessionRefreshed', (/** @type {any} */ event) => this.refreshed(event));

    this.note.addEventListener('input', () => this.saver.schedule());
    this.editor.addEventListener('scroll', () => this.saver.schedule(250));
    this.titleInput.addEventListener('change', () => this.commitTitle());
    // A title is one line, even when it wraps (and when a newline is pasted into it).
    this.titleInput.addEventListener('input', () => {
      if (/[\r\n]/.test(this.titleInput.value)) this.titleInput.value = this.titleInput.value.replace(/\s*[\r\n]+\s*/g, ' ');
    });
    this.titleInput.addEventListener('keydown', (event) => {
      if (event.key === 'Enter') {
        event.preventDefault();
        this.commitTitle();
        this.editor.focus();
      } else if (event.key === 'Escape') {
        this.titleInput.value = this.currentTitle();
        this.editor.focus();
      }
    });
    window.addEventListener('pagehide', () => this.saver.flush());
    document.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'hidden') this.saver.flush();
    });
    window.addEventListener('focus', () => this.clearFlag());
    this.render();
  }

  // MARK: Restoration

  /**
   * Brings the window back as it was: from a handed-over activity (a ticket: a drop, "Open in
   * New Window") or, failing that, from the session's restoration activity.
   * @param {ConnectResult} result
   */
  async restore(result) {
    const params = new URL(location.href).searchParams;
    const requested = params.get('open');
    const link = params.get('link');
    if (requested && link) this.links.set(requested, link);
    if (requested) {
      params.delete('open');
      params.delete('link');
      history.replaceState(history.state, '', `${location.pathname}${params.toString() ? `?${params}` : ''}`);
    }
    const handedOver =
      result.connectionOptions?.userActivities?.[0] ??
      (requested ? { activityType: DOCUMENT_ACTIVITY, targetContentIdentifier: requested } : null);
    const stored = result.restoration?.status === 'restored' ? result.session.stateRestorationActivity ?? null : null;
    const activity = handedOver ?? stored;
    const info = activity?.userInfo ?? {};
    const sessionInfo = result.session.userInfo ?? {};
    this.setSidebar(sessionInfo.sidebar !== false, { save: false });
    this.note.value = typeof info.note === 'string' ? info.note : '';
    if (result.forkedFrom) toast('This window is a copy of another one. Changes here stay in this window.');
    // `document_gone` is newer than the client's types.
    const status = /** @type {string | undefined} */ (result.restoration?.status);
    if (status === 'cleanStart') {
      toast('This window started fresh: restoring it failed several times.');
    } else if (status === 'document_gone') {
      toast('The document this window showed was deleted.');
    }
    if (activity?.activityType === VERSION_ACTIVITY && activity.targetContentIdentifier) {
      await this.showVersion(activity);
    } else if (activity?.targetContentIdentifier && activity.activityType !== WORKSPACE_ACTIVITY) {
      const selection = Array.isArray(info.selection) ? { anchor: info.selection[0], head: info.selection[1] } : null;
      await this.openDocument(activity.targetContentIdentifier, {
        scroll: typeof info.scroll === 'number' ? info.scroll : 0,
        selection,
        showDetail: info.view !== 'list',
        focus: Boolean(handedOver),
      });
    } else {
      this.setView('list');
    }
    this.restored = true;
    this.saver.enabled = true;
    this.app.dataset.ready = 'true';
    this.saver.schedule(handedOver ? 0 : 350);
    this.render();
  }

  /** The state restoration activity that describes this window now. @returns {Activity} */
  activity() {
    /** @type {Record<string, any>} */
    const userInfo = { note: this.note.value, view: this.view };
    if (this.version) {
      return {
        activityType: VERSION_ACTIVITY, title: this.version.title,
        targetContentIdentifier: `${this.version.document}/${this.version.id}`, userInfo,
      };
    }
    if (this.documentId) {
      if (this.binding) {
        userInfo.scroll = Math.round(this.editor.scrollTop);
        const selection = this.binding.selection();
        if (selection) userInfo.selection = [selection.anchor, selection.head];
      } else if (this.opening) {
        // Still opening: keep what is being restored.
        userInfo.scroll = this.opening.scroll ?? 0;
        if (this.opening.selection) userInfo.selection = [this.opening.selection.anchor, this.opening.selection.head];
      }
      return {
        activityType: DOCUMENT_ACTIVITY,
        title: this.currentTitle(),
        targetContentIdentifier: this.documentId,
        userInfo,
      };
    }
    return { activityType: WORKSPACE_ACTIVITY, title: this.refreshedTitle ?? NO_DOCUMENT_TITLE, userInfo };
  }

  /** The switcher's subtitle for this window: the first line of its note. */
  subtitle() {
    return (this.note.value.split('\n').find((line) => line.trim()) ?? '').trim().slice(0, 120);
  }

  /**
   * The switcher's title and snapshot for this window, or null when the server keeps them
   * itself (it follows the document a window has open).
   */
  summary() {
    if (this.version) return { title: this.version.title, snapshot: this.version.text.slice(0, 400) };
    if (this.documentId) return null;
    return { title: this.refreshedTitle ?? NO_DOCUMENT_TITLE, snapshot: this.note.value.slice(0, 400) };
  }

  /**
   * Another window refreshed this one's session (`requestRefresh`): take the refresh in, so
   * the next save keeps it instead of overwriting it. A new restoration activity is shown as a
   * restored one would be; a new title is kept while this window shows no document.
   * @param {{ title?: string, snapshot?: { text?: string }, activity?: Activity | null }} event
   */
  refreshed(event) {
    const activity = event.activity;
    if (activity) {
      const info = activity.userInfo ?? {};
      if (typeof info.note === 'string') this.note.value = info.note;
      const target = activity.activityType !== WORKSPACE_ACTIVITY ? activity.targetContentIdentifier : null;
      if (target) {
        const selection = Array.isArray(info.selection) ? { anchor: info.selection[0], head: info.selection[1] } : null;
        this.openDocument(target, { scroll: typeof info.scroll === 'number' ? info.scroll : 0, selection });
      } else if (this.documentId) {
        this.closeDocument({ save: false });
      }
    }
    if (!this.documentId && !activity?.targetContentIdentifier && event.title) {
      this.refreshedTitle = event.title === NO_DOCUMENT_TITLE ? null : event.title;
      // What the server holds now: nothing to send back until this window changes it.
      this.saver.lastRefresh = JSON.stringify([event.title, event.snapshot?.text ?? '']);
    }
    this.saver.schedule();
    this.render();
  }

  pushUserInfo() {
    this.client.setUserInfo({ sidebar: this.sidebarShown }, { merge: true }).catch(() => {});
  }

  /** True when edits are waiting to reach the server. */
  pendingEdits() {
    return Boolean(this.doc && !this.doc.synchronized);
  }

  // MARK: Layout

  /** @param {'regular' | 'compact'} layout */
  setLayout(layout) {
    if (this.layout === layout && this.app.dataset.layout === layout) return;
    this.layout = layout;
    this.app.dataset.layout = layout;
    this.render();
  }

  /** @param {'list' | 'detail'} view */
  setView(view) {
    if (this.view === view) return;
    this.view = view;
    this.app.dataset.view = view;
    this.saver.schedule();
  }

  /**
   * Shows or hides the sidebar (regular layout). Kept per window, in the session's userInfo.
   * @param {boolean} shown
   * @param {{ save?: boolean }} [options]
   */
  setSidebar(shown, options = {}) {
    this.sidebarShown = shown;
    this.app.dataset.sidebar = shown ? 'shown' : 'hidden';
    const toggle = byId('toggle-sidebar');
    toggle.setAttribute('aria-pressed', String(shown));
    if (options.save !== false) {
      this.client.setUserInfo({ sidebar: shown }, { merge: true }).catch((error) => {
        if (error.code !== 'disconnected') toast(describeError(error, 'save the sidebar state'));
      });
    }
  }

  toggleSidebar() {
    if (this.layout === 'compact') {
      this.setView(this.view === 'list' ? 'detail' : 'list');
      return;
    }
    this.setSidebar(!this.sidebarShown);
  }

  /** Puts the caret in the window note (showing the sidebar if needed). */
  focusNote() {
    if (this.layout === 'compact') this.setView('list');
    else if (!this.sidebarShown) this.setSidebar(true);
    this.note.focus();
  }

  // MARK: Documents

  /** @param {string} [id] */
  summaryOf(id = this.documentId ?? '') {
    return this.list.documents.get(id) ?? (this.doc?.id === id ? this.doc.summary : null) ?? null;
  }

  currentTitle() {
    return this.summaryOf()?.title ?? 'Untitled';
  }

  /**
   * Shows a document in this window.
   * @param {string} id
   * @param {OpenOptions} [options]
   */
  async openDocument(id, options = {}) {
    if (options.showDetail !== false) this.setView('detail');
    if (this.documentId === id && this.doc && !this.doc.gone) {
      if (options.focus) this.editor.focus();
      return;
    }
    this.closeDocument({ save: false, keepView: true });
    this.refreshedTitle = null;
    this.documentId = id;
    this.app.dataset.document = id;
    const session = new DocumentSession(this.client, id, { name: this.identity.name, color: this.identity.color,
      link: this.links.get(id) });
    this.doc = session;
    this.opening = options;
    this.render();
    // Saved before the open: the server keeps the opened document in the restoration activity,
    // and finding it already there, leaves this window's note and scroll in it.
    this.saver.flush();
    try {
      await session.open();
    } catch (error) {
      if (this.doc !== session) return;
      this.doc = null;
      this.documentId = null;
      delete this.app.dataset.document;
      const e = /** @type {any} */ (error);
      if (e.field === 'link') this.links.forget(id);
      if (e.code !== 'unknown_type') toast(describeError(e, 'open the document'));
      this.setView('list');
      this.render();
      this.saver.schedule(0);
      return;
    }
    if (this.doc !== session) {
      session.close();
      return;
    }
    this.opening = null;
    this.binding = new TextBinding(session, this.editor, {
      onSelectionChange: () => this.saver.schedule(),
      onChange: (change) => {
        this.renderWordCount();
        if (!change.remote) this.saver.schedule(800);
      },
    });
    this.caretLabels = new CaretLabels(this.editorWrap, session, () => this.self());
    session.on('presence', () => this.renderParticipants());
    session.on('deleted', () => {
      if (this.doc !== session) return;
      // This window's own deletion is confirmed by deleteDocument, once the server has done it.
      const message = deletionMessage(session.summary?.title ?? 'The document', this.deletedBy.get(id),
        { user: this.client.user?.id ?? null, scene: this.client.scene });
      if (message) toast(message);
      this.closeDocument();
    });
    session.on('error', (/** @type {any} */ error) => {
      toast(describeError(error, 'save your change'));
      this.renderAccess();
    });
    session.on('accessChanged', ({ role }) => {
      if (this.doc !== session) return;
      const title = session.summary?.title ?? 'this document';
      if (role === 'none') {
        this.links.forget(id);
        toast(`You no longer have access to “${title}”.`);
        this.closeDocument();
        return;
      }
      toast(role === 'viewer' ? `“${title}” is read-only for you now.` : `You may edit “${title}” now.`);
      this.renderAccess();
    });
    this.render();
    const { selection, scroll } = options;
    if (options.focus) this.editor.focus({ preventScroll: true });
    if (selection) this.binding.select(selection);
    if (scroll) {
      // After layout, so the text is there to scroll.
      await new Promise((resolve) => requestAnimationFrame(resolve));
      this.editor.scrollTop = scroll;
    }
    this.saver.schedule();
  }

  /**
   * Stops showing the current document.
   * @param {{ save?: boolean, keepView?: boolean }} [options]
   */
  closeDocument(options = {}) {
    this.caretLabels?.destroy();
    this.caretLabels = null;
    this.binding?.destroy();
    this.binding = null;
    this.doc?.close();
    this.doc = null;
    this.documentId = null;
    delete this.app.dataset.document;
    if (this.layout === 'compact' && !options.keepView) this.setView('list');
    this.render();
    if (options.save !== false) this.saver.schedule(0);
  }

  async createDocument() {
    if (this.list.supported === false) {
      toast('This server doesn’t have documents yet.');
      return;
    }
    const existing = new Set([...this.list.documents.values()].map((d) => d.title));
    let title = 'Untitled';
    for (let n = 2; existing.has(title); n++) title = `Untitled ${n}`;
    try {
      const result = await this.client.request('createDocument', { title, text: '' });
      const summary = /** @type {DocumentSummary} */ (result.document);
      this.list.documents.set(summary.id, summary);
      this.render();
      await this.openDocument(summary.id);
      this.titleInput.focus();
      this.titleInput.select();
    } catch (error) {
      toast(describeError(error, 'create a document'));
    }
  }

  commitTitle() {
    const id = this.documentId;
    const title = this.titleInput.value.trim();
    if (!id || !title || title === this.currentTitle()) {
      this.titleInput.value = this.currentTitle();
      return;
    }
    this.renameDocument(id, title);
  }

  /**
   * @param {string} id
   * @param {string} [title] asks for one when absent
   */
  async renameDocument(id, title) {
    const current = this.summaryOf(id)?.title ?? '';
    const next = title ?? (await promptDialog({ title: 'Rename Document', value: current, confirm: 'Rename' }));
    if (!next || !next.trim() || next.trim() === current) return;
    try {
      const result = await this.client.request('renameDocument', { document: id, title: next.trim() });
      this.list.documents.set(id, { ...this.summaryOf(id), ...result.document });
      if (this.doc?.id === id) this.doc.summary = { ...this.doc.summary, ...result.document };
      this.render();
      this.saver.schedule();
    } catch (error) {
      this.titleInput.value = this.currentTitle();
      toast(describeError(error, 'rename the document'));
    }
  }

  /** @param {string} id */
  async deleteDocument(id) {
    const title = this.summaryOf(id)?.title ?? 'this document';
    const ok = await confirmDialog({
      title: `Delete “${title}”?`,
      message: 'It is deleted for everyone in this workspace, and windows showing it close it.',
      confirm: 'Delete',
      danger: true,
    });
    if (!ok) return;
    try {
      await this.client.request('deleteDocument', { document: id });
      this.list.documents.delete(id);
      if (this.documentId === id) this.closeDocument();
      this.render();
      toast(`You deleted “${title}”.`);
    } catch (error) {
      toast(describeError(error, 'delete the document'));
    }
  }

  /**
   * Moves to the previous or next document of the list.
   * @param {number} step
   */
  stepDocument(step) {
    const documents = this.list.sorted();
    if (documents.length === 0) return;
    const index = documents.findIndex((d) => d.id === this.documentId);
    const next = documents[Math.min(Math.max(index + step, 0), documents.length - 1)] ?? documents[0];
    this.openDocument(next.id);
  }

  // MARK: Windows

  /**
   * "Open in New Window": the window already showing the document comes forward; otherwise a
   * new window opens on it.
   * @param {string} id
   */
  async openInNewWindow(id) {
    const activity = { activityType: DOCUMENT_ACTIVITY, title: this.summaryOf(id)?.title ?? '', targetContentIdentifier: id };
    try {
      const result = await this.client.requestActivation(activity);
      if (result.action === 'open' && result.url) {
        this.openURL(result.url);
      } else if (result.action === 'activated') {
        if (result.session === this.client.session?.persistentIdentifier) {
          this.openDocument(id);
          this.flash();
        } else {
          toast(`“${activity.title}” is already open in another window; it was brought forward.`);
        }
      }
    } catch (error) {
      if (/** @type {any} */ (error).code === 'unknown_type') {
        // A server without windows: a new tab with its own session, told what to open.
        const url = `${freshWindowURL()}&open=${encodeURIComponent(id)}`;
        if (!window.open(url, '_blank')) this.blocked(url);
        return;
      }
      toast(describeError(error, 'open a new window'));
    }
  }

  /**
   * "Open in New Window" for a version: a read-only window of its own (configuration
   * `version`), beside this one; the window already showing it comes forward instead.
   * @param {import('../types/panes-client.js').Version} version
   */
  async openVersionInNewWindow(version) {
    const title = `${this.summaryOf(version.document)?.title ?? 'Document'} — ${versionLabel(version)}`;
    const activity = { activityType: VERSION_ACTIVITY, title, targetContentIdentifier: `${version.document}/${version.id}` };
    try {
      const result = await this.client.requestActivation(activity);
      if (result.action === 'open' && result.url) this.openURL(result.url);
      else toast(`“${title}” is already open in another window; it was brought forward.`);
    } catch (error) {
      toast(describeError(error, 'open the version in a new window'));
    }
  }

  /**
   * Makes this window a version's: its text, read-only, with what it is above it. The document
   * itself is not opened here: its own window is beside this one.
   * @param {Activity} activity
   */
  async showVersion(activity) {
    const [document, id] = (activity.targetContentIdentifier ?? '').split('/');
    this.setSidebar(false, { save: false });
    this.setView('detail');
    this.app.dataset.version = id;
    try {
      const { version, text } = await this.client.readVersion(document, id);
      const title = `${this.summaryOf(document)?.title ?? activity.title?.split(' — ')[0] ?? 'Document'} — ${versionLabel(version)}`;
      this.version = { document, id, title, text };
      this.versionView.replaceChildren(
        h('p', { class: 'version-banner' },
          `Read-only: “${versionLabel(version)}”, revision ${version.revision}, saved ${new Date(version.createdAt).toLocaleString()} by ${version.createdBy}.`),
        h('textarea', { class: 'editor version-text', readonly: true, 'aria-label': 'Version text', dataset: { testid: 'version-text' } }),
      );
      /** @type {HTMLTextAreaElement} */ (this.versionView.querySelector('textarea')).value = text;
    } catch (error) {
      this.version = { document, id, title: activity.title ?? 'Version', text: '' };
      this.versionView.replaceChildren(h('p', { class: 'version-banner' }, describeError(error, 'read this version')));
    }
    this.render();
  }

  /** A new, empty window ("+", or the New Window shortcut). */
  async newWindow() {
    if (this.client.supports('requestActivation')) {
      try {
        const result = await this.client.requestActivation({ activityType: WORKSPACE_ACTIVITY, title: NO_DOCUMENT_TITLE });
        if (result.action === 'open' && result.url) {
          this.openURL(result.url);
          return;
        }
      } catch (error) {
        if (/** @type {any} */ (error).code !== 'unknown_type') {
          toast(describeError(error, 'open a new window'));
          return;
        }
      }
    }
    // A server without windows: a new tab that starts its own session.
    if (!window.open(freshWindowURL(), '_blank')) this.blocked(freshWindowURL());
  }

  /**
   * Opens a window for a ticket URL; if the browser blocks it, offers a link instead.
   * @param {string} url
   */
  openURL(url) {
    const opened = openTicketWindow(url, { workspace: this.identity.workspace });
    if (!opened) this.blocked(url);
  }

  /** @param {string} url */
  blocked(url) {
    toast('Your browser blocked the new window.', {
      action: 'Open it',
      onAction: () => openTicketWindow(url, { workspace: this.identity.workspace }),
      duration: 15000,
    });
  }

  /** Closes this window: its session is destroyed, and the window closes with the animation. */
  async closeWindow() {
    const session = this.client.session?.persistentIdentifier;
    if (!session) return;
    await this.saver.whenSaved().catch(() => {});
    this.closingSelf = true;
    this.client.requestDestruction(session, 'standard').catch((error) => toast(describeError(error, 'close the window')));
  }

  /**
   * Another window asked for this one (`activate`): show what it asked for, and come forward.
   * Browsers often refuse `focus()`, so the title is flagged and the window flashes too.
   * @param {Activity} activity
   */
  activated(activity) {
    const target = activity?.targetContentIdentifier;
    if (this.version || activity?.activityType === VERSION_ACTIVITY) {
      // A version's window shows its version only; it is brought forward as it is.
    } else if (target && activity.activityType !== WORKSPACE_ACTIVITY && target !== this.documentId) this.openDocument(target);
    else if (target) this.setView('detail');
    window.focus();
    this.flash();
    if (!document.hasFocus()) {
      this.flagged = true;
      this.renderTitle();
    }
  }

  flash() {
    this.app.classList.remove('flash');
    void this.app.offsetWidth; // restart the animation
    this.app.classList.add('flash');
    this.app.dataset.activated = String(Date.now());
    setTimeout(() => this.app.classList.remove('flash'), 1500);
  }

  clearFlag() {
    if (!this.flagged) return;
    this.flagged = false;
    this.renderTitle();
  }

  // MARK: Rendering

  /** @param {() => void} renderer */
  onRender(renderer) {
    this.renderers.add(renderer);
  }

  render() {
    this.renderHeader();
    this.renderParticipants();
    this.renderWordCount();
    this.renderWelcome();
    for (const renderer of this.renderers) renderer();
  }

  renderTitle() {
    if (this.version) {
      document.title = `${this.version.title} — Panes`;
      return;
    }
    const base = this.documentId ? `${this.currentTitle()} — Panes` : this.refreshedTitle ? `${this.refreshedTitle} — Panes` : 'Panes';
    document.title = this.flagged ? `• ${base}` : base;
  }

  renderHeader() {
    this.versionView.hidden = !this.version;
    byId('open-history').hidden = !this.documentId || !this.binding;
    if (this.version) {
      this.titleInput.hidden = true;
      byId('open-in-new-window').hidden = true;
      this.editorWrap.hidden = true;
      this.welcome.hidden = true;
      this.renderTitle();
      return;
    }
    const open = Boolean(this.documentId);
    this.titleInput.hidden = !open;
    if (document.activeElement !== this.titleInput) this.titleInput.value = open ? this.currentTitle() : '';
    byId('open-in-new-window').hidden = !open;
    this.renderAccess();
    this.editorWrap.hidden = !open || !this.binding;
    this.welcome.hidden = open && Boolean(this.binding);
    this.renderTitle();
  }

  /** A viewer's window is read-only: the text cannot be typed in, and says so. */
  renderAccess() {
    const readOnly = Boolean(this.documentId && this.doc?.readOnly);
    this.editor.readOnly = readOnly;
    this.titleInput.readOnly = readOnly;
    this.readOnlyBadge.hidden = !readOnly;
  }

  renderWelcome() {
    if (this.welcome.hidden) return;
    if (this.documentId && !this.binding) {
      this.welcome.replaceChildren(h('p', {}, this.client.connected ? 'Opening…' : 'Opening once the connection is back…'));
      return;
    }
    const supported = this.list.supported !== false;
    this.welcome.replaceChildren(
      h('div', { class: 'welcome-icon', html: icons.pages }),
      h('h2', {}, 'No Document Open'),
      h('p', {}, supported
        ? 'Choose a document in the sidebar, or start a new one. Drag a document out to open it in its own window.'
        : 'This server doesn’t have documents yet. The window note in the sidebar is still kept for this window.'),
      supported
        ? h('button', { type: 'button', class: 'button primary', onclick: () => this.createDocument() }, 'New Document')
        : '',
    );
  }

  /** This person and window, as presence reports them. @returns {import('./presence.js').Self} */
  self() {
    return {
      user: this.client.user?.id ?? this.identity.name,
      name: this.identity.name,
      color: this.identity.color,
      scene: this.client.scene ?? '',
    };
  }

  renderParticipants() {
    renderPeople(this.participantsList, this.doc ? peopleIn(this.doc, this.self()) : [], this.client.scene ?? '');
  }

  renderWordCount() {
    const shown = this.prefs.showWordCount && Boolean(this.binding);
    this.wordCount.hidden = !shown;
    if (!shown) return;
    const text = this.doc?.text ?? '';
    const words = countWords(text);
    const characters = ot.codePointLength(text);
    this.wordCount.replaceChildren(
      h('span', { dataset: { testid: 'words' } }, `${words.toLocaleString()} ${words === 1 ? 'word' : 'words'}`),
      h('span', {}, `${characters.toLocaleString()} ${characters === 1 ? 'character' : 'characters'}`),
    );
  }

  /** Applies preferences to the page. */
  applyPreferences() {
    document.documentElement.dataset.theme = ['light', 'dark'].includes(this.prefs.theme) ? this.prefs.theme : 'system';
    document.documentElement.style.setProperty('--editor-font-size', `${this.prefs.fontSize}px`);
    this.renderWordCount();
    this.binding?.refresh();
  }
}

/** @type {Intl.Segmenter | null} */
const segmenter = typeof Intl !== 'undefined' && 'Segmenter' in Intl ? new Intl.Segmenter(undefined, { granularity: 'word' }) : null;

/**
 * Words in a text, as a word processor counts them.
 * @param {string} text
 */
export function countWords(text) {
  if (!segmenter) return (text.match(/\S+/g) ?? []).length;
  let count = 0;
  for (const segment of segmenter.segment(text)) if (segment.isWordLike) count++;
  return count;
}
