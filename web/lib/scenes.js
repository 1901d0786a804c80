// @ts-check
/**
 * Scenes and sessions: this scene's lifecycle and traits reports, its session's restoration
 * activity and `userInfo`, the switcher's list of sessions, and the window requests
 * (activation, refresh, destruction).
 *
 * @module scenes
 */

/** @typedef {import('./connection.js').Connection} Connection */
/** @typedef {import('../types/panes-client.js').Activity} Activity */
/** @typedef {import('../types/panes-client.js').LifecycleState} LifecycleState */
/** @typedef {import('../types/panes-client.js').Traits} Traits */
/** @typedef {import('../types/panes-client.js').SessionList} SessionList */
/** @typedef {import('../types/panes-client.js').RefreshUpdate} RefreshUpdate */

export class Scenes {
  #connection;
  #on;
  #emit;
  #lifecycleInFlight = false;
  #lifecycleDirty = false;
  /** @type {Traits | null} the scene's traits as the server last said, or as set while disconnected */
  #traits = null;
  #traitsInFlight = false;
  #traitsDirty = false;

  /**
   * @param {Connection} connection
   * @param {(type: string, listener: (payload: any) => void) => () => void} on the client's subscriptions
   * @param {(type: string, payload: any) => void} emit delivers an event to the client's subscribers
   */
  constructor(connection, on, emit) {
    this.#connection = connection;
    this.#on = on;
    this.#emit = emit;
    connection.onEveryConnection((event) => {
      const sent = connection.lifecycleSent;
      const current = connection.lifecycle;
      // `connect` carried the state; report again only if it changed since.
      if (sent && sent.visible === current.visible && sent.focused === current.focused) this.#lifecycleDirty = false;
      if (this.#lifecycleDirty) this.#flushLifecycle();
      // `connect` carried the traits too: the server's answer is the scene's traits now. Traits
      // set after that `connect` went out are reported again.
      if (event.result.traits) this.#adoptTraits(event.result.traits);
      this.#traitsDirty = connection.traits !== null && !sameTraits(connection.traits, this.traits);
      if (this.#traitsDirty) this.#flushTraits();
    });
  }

  /**
   * This scene's traits: the server's (from `connect` and `updateTraits`) while connected,
   * the ones set while disconnected, and before the first connection the ones it will report.
   * @returns {Traits}
   */
  get traits() {
    return this.#traits ? { ...this.#traits } : this.#connection.nextTraits();
  }

  /**
   * Reports a change of the window's traits (size class, pointer); fields left out keep
   * their value. Nothing is sent when they are what was last reported; only the latest are
   * sent, one report at a time; while disconnected they apply at once and the next `connect`
   * carries them. `traitsChanged` tells of the traits the server answers with.
   * @param {Partial<Traits>} traits
   */
  setTraits(traits) {
    const connection = this.#connection;
    const reported = connection.traits ?? this.traits;
    const wanted = { width: traits.width ?? reported.width, pointer: traits.pointer ?? reported.pointer };
    if (sameTraits(wanted, reported)) return;
    connection.traits = wanted;
    if (!connection.connected) {
      this.#adoptTraits(wanted); // no server to answer: the next `connect` reports them
      return;
    }
    this.#traitsDirty = true;
    this.#flushTraits();
  }

  #flushTraits() {
    const connection = this.#connection;
    if (this.#traitsInFlight || !connection.connected || !connection.traits) return;
    this.#traitsDirty = false;
    if (this.#traits && sameTraits(connection.traits, this.#traits)) return; // what the server has
    this.#traitsInFlight = true;
    const epoch = connection.epoch;
    const traits = { ...connection.traits };
    connection
      .request('updateTraits', { traits }, { queue: false })
      .then((result) => {
        if (epoch === connection.epoch) this.#adoptTraits(result.traits ?? traits);
      })
      .catch((error) => {
        // A server without `updateTraits` cannot answer: the traits apply here alone. Lost
        // with the connection: the next `connect` carries them.
        if (error.code === 'unknown_type') this.#adoptTraits(traits);
      })
      .finally(() => {
        this.#traitsInFlight = false;
        if (this.#traitsDirty && connection.connected) this.#flushTraits();
      });
  }

  /** @param {Traits} traits */
  #adoptTraits(traits) {
    const previous = this.traits;
    const now = { width: traits.width, pointer: traits.pointer };
    this.#traits = now;
    if (!sameTraits(now, previous)) this.#emit('traitsChanged', { traits: { ...now }, previous });
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

/**
 * @param {Traits} a
 * @param {Traits} b
 */
function sameTraits(a, b) {
  return a.width === b.width && a.pointer === b.pointer;
}
