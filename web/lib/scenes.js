// @ts-check
/**
 * Scenes and sessions: this scene's lifecycle reports, its session's restoration activity
 * and `userInfo`, the switcher's list of sessions, and the window requests (activation,
 * refresh, destruction).
 *
 * @module scenes
 */

/** @typedef {import('./connection.js').Connection} Connection */
/** @typedef {import('../types/panes-client.js').Activity} Activity */
/** @typedef {import('../types/panes-client.js').LifecycleState} LifecycleState */
/** @typedef {import('../types/panes-client.js').SessionList} SessionList */
/** @typedef {import('../types/panes-client.js').RefreshUpdate} RefreshUpdate */

export class Scenes {
  #connection;
  #on;
  #lifecycleInFlight = false;
  #lifecycleDirty = false;

  /**
   * @param {Connection} connection
   * @param {(type: string, listener: (payload: any) => void) => () => void} on the client's subscriptions
   */
  constructor(connection, on) {
    this.#connection = connection;
    this.#on = on;
    connection.onEveryConnection(() => {
      const sent = connection.lifecycleSent;
      const current = connection.lifecycle;
      // `connect` carried the state; report again only if it changed since.
      if (sent && sent.visible === current.visible && sent.focused === current.focused) this.#lifecycleDirty = false;
      if (this.#lifecycleDirty) this.#flushLifecycle();
    });
  }

  /**
   * Reports visibility and focus; only the latest state is sent, one report at a time.
   * While disconnected the next `connect` carries it.
   * @param {LifecycleState} state
   */
  setLifecycle(state) {
    const current = this.#connection.lifecycle;
    if (state.visible === current.visible && state.focused === current.focused) return;
    this.#connection.lifecycle = { visible: state.visible, focused: state.focused };
    this.#lifecycleDirty = true;
    this.#flushLifecycle();
  }

  #flushLifecycle() {
    const connection = this.#connection;
    if (this.#lifecycleInFlight || !connection.connected) return;
    this.#lifecycleDirty = false;
    this.#lifecycleInFlight = true;
    connection
      .request('lifecycle', { ...connection.lifecycle }, { queue: false })
      .catch(() => {
        this.#lifecycleDirty = true; // resent on the next connection
      })
      .finally(() => {
        this.#lifecycleInFlight = false;
        if (this.#lifecycleDirty && connection.connected) this.#flushLifecycle();
      });
  }

  /** @param {Activity | null} activity */
  updateActivity(activity) {
    return this.#connection.request('updateActivity', { activity });
  }

  /**
   * @param {Record<string, any>} userInfo
   * @param {{ merge?: boolean }} options
   */
  setUserInfo(userInfo, options) {
    return this.#connection.request('setUserInfo', { userInfo, mode: options.merge ? 'merge' : 'replace' });
  }

  listSessions() {
    return this.#connection.request('listSessions', { watch: false });
  }

  /**
   * The session list now and whenever it changes; re-read after every reconnect.
   * @param {(list: SessionList) => void} callback
   */
  watchSessions(callback) {
    const connection = this.#connection;
    let stopped = false;
    const offEvent = this.#on('sessionsChanged', (/** @type {SessionList} */ list) => {
      if (!stopped) callback(list);
    });
    const offHook = connection.onEveryConnection(() => {
      connection
        .request('listSessions', { watch: true }, { queue: false })
        .then((list) => {
          if (!stopped) callback(list);
        })
        .catch(() => {});
    });
    return {
      stop: () => {
        if (stopped) return;
        stopped = true;
        offEvent();
        offHook();
        if (connection.connected) connection.request('listSessions', { watch: false }, { queue: false }).catch(() => {});
      },
    };
  }

  /**
   * @param {string} session
   * @param {string} animation
   */
  requestDestruction(session, animation) {
    return this.#connection.request('requestDestruction', { session, animation });
  }

  /**
   * @param {Activity} activity
   * @param {{ session?: string }} options
   */
  requestActivation(activity, options) {
    /** @type {Record<string, any>} */
    const fields = { activity };
    if (options.session) fields.session = options.session;
    return this.#connection.request('requestActivation', fields);
  }

  /** @param {RefreshUpdate} update */
  requestRefresh(update) {
    return this.#connection.request('requestRefresh', update);
  }
}
