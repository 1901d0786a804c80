// @ts-check
/**
 * Saves this window's state where the server keeps it for this session, so a reload, a
 * browser restart with restored tabs, or a server restart brings the window back as it was:
 *
 * - the restoration activity (`updateActivity`): the open document, its scroll position and
 *   selection, the compact view, and the window note; with it, the session's switcher
 *   subtitle, the note's first line, which every window's switcher lists;
 * - `userInfo` (`setUserInfo`, merged): the sidebar shown or hidden;
 * - the switcher entry (`requestRefresh`): title and a text snapshot, for a window without a
 *   document (the server keeps those of a window showing a document in step with it).
 *
 * Saves are debounced and only the latest state is sent, one save at a time. A save that fails
 * because the connection dropped is sent again once it is back.
 *
 * @module app/restoration
 */

/** @typedef {import('../panes-client.js').PanesClient} PanesClient */
/** @typedef {import('../lib/panes-client.js').Activity} Activity */

export class StateSaver {
  /**
   * @param {PanesClient} client
   * @param {() => Activity} currentActivity
   * @param {() => { title: string, snapshot: string } | null} currentSummary null: nothing to refresh
   * @param {() => string} [currentSubtitle] the session's switcher subtitle
   */
  constructor(client, currentActivity, currentSummary, currentSubtitle = () => '') {
    this.client = client;
    this.currentActivity = currentActivity;
    this.currentSummary = currentSummary;
    this.currentSubtitle = currentSubtitle;
    /** Nothing is saved before the window has restored what was saved before. */
    this.enabled = false;
    this.lastSaved = '';
    this.lastRefresh = '';
    /** @type {any} */ this.timer = null;
    /** @type {any} */ this.refreshTimer = null;
    /** @type {Promise<void> | null} */ this.inFlight = null;
    /** @type {Set<() => void>} */ this.waiters = new Set();
    client.on('connect', (/** @type {import('../lib/panes-client.js').ConnectEvent} */ event) => {
      if (event.first) return;
      // Catch up: whatever changed while offline (or all of it, for a replaced session).
      if (event.sessionChanged) this.lastSaved = this.lastRefresh = '';
      this.schedule(0);
    });
  }

  /**
   * Saves soon (after `delay` ms without further calls).
   * @param {number} [delay]
   */
  schedule(delay = 350) {
    if (!this.enabled) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.save();
    }, delay);
    clearTimeout(this.refreshTimer);
    this.refreshTimer = setTimeout(() => this.refresh(), Math.max(delay, 1200));
  }

  /** Saves now (e.g. when the page is being hidden). */
  flush() {
    if (!this.enabled) return;
    clearTimeout(this.timer);
    this.timer = null;
    this.save();
  }

  save() {
    if (this.inFlight || !this.client.connected) {
      this.notify();
      return; // the running save chains another; a reconnect saves again
    }
    const { activity, subtitle } = this.current();
    const encoded = JSON.stringify([activity, subtitle]);
    if (encoded === this.lastSaved) {
      this.notify();
      return;
    }
    // Through `request`: the client's `updateActivity` takes only the activity.
    this.inFlight = this.client
      .request('updateActivity', { activity, subtitle })
      .then(() => {
        this.lastSaved = encoded;
      })
      .catch(() => {
        /* disconnected: saved again on reconnect */
      })
      .finally(() => {
        this.inFlight = null;
        if (this.encodedCurrent() !== this.lastSaved && this.client.connected) this.save();
        else this.notify();
      });
  }

  /** Updates the switcher's title and snapshot when they changed. */
  refresh() {
    const session = this.client.session?.persistentIdentifier;
    if (!session || !this.client.connected || !this.client.supports('requestRefresh')) return;
    const summary = this.currentSummary();
    if (!summary) {
      this.lastRefresh = '';
      return;
    }
    const { title, snapshot } = summary;
    const encoded = JSON.stringify([title, snapshot]);
    if (encoded === this.lastRefresh) return;
    this.lastRefresh = encoded;
    this.client.requestRefresh({ session, title, snapshot: { text: snapshot } }).catch(() => {
      this.lastRefresh = '';
    });
  }

  /** What a save sends now. */
  current() {
    return { activity: this.currentActivity(), subtitle: this.currentSubtitle() };
  }

  encodedCurrent() {
    const { activity, subtitle } = this.current();
    return JSON.stringify([activity, subtitle]);
  }

  /** True when the latest state is on the server. */
  get saved() {
    return !this.timer && !this.inFlight && this.encodedCurrent() === this.lastSaved;
  }

  notify() {
    if (!this.saved) return;
    for (const resolve of [...this.waiters]) resolve();
    this.waiters.clear();
  }

  /**
   * Resolves once everything is saved (tests wait on this before reloading).
   * @returns {Promise<void>}
   */
  whenSaved() {
    if (this.enabled && this.timer) this.flush();
    if (this.saved) return Promise.resolve();
    return new Promise((resolve) => {
      this.waiters.add(resolve);
      if (!this.inFlight && !this.timer) this.save();
    });
  }
}
