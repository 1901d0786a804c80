// @ts-check
/**
 * Preferences observed the way key-value observing works: a callback hears every change of a
 * key or subtree, made anywhere by anyone, in version order. After a reconnect every
 * observation is re-made, and only the values that changed meanwhile are delivered, marked
 * `catchUp` (removed keys with `removed`).
 *
 * @module preferences
 */

/** @typedef {import('./connection.js').Connection} Connection */
/** @typedef {import('../types/panes-client.js').ObserveOptions} ObserveOptions */
/** @typedef {import('../types/panes-client.js').ObservationHandle} ObservationHandle */
/** @typedef {import('../types/panes-client.js').PreferenceChange} PreferenceChange */
/** @typedef {import('../types/panes-client.js').PreferenceDomain} PreferenceDomain */

/**
 * @typedef {object} Observation
 * @property {PreferenceDomain} domain
 * @property {string} keyPath
 * @property {ObserveOptions} options
 * @property {(change: PreferenceChange) => void} callback
 * @property {number | null} serverId its number on the connection it is registered on
 * @property {number} epoch that connection
 * @property {boolean} established the server took it at least once
 * @property {boolean} stopped
 * @property {Map<string, string>} known key path → JSON of the last value delivered
 * @property {Set<string>} locked key paths last delivered as `locked` (managed preferences)
 * @property {() => void} ready
 */

export class Preferences {
  #connection;
  /** @type {Set<Observation>} */
  #observations = new Set();
  /** @type {Map<number, Observation>} server observation id → observation, this connection */
  #byServerId = new Map();
  /** @type {Map<number, PreferenceChange[]>} `initial` events that came before their reply */
  #unclaimedInitial = new Map();

  /**
   * @param {Connection} connection
   * @param {(type: string, listener: (payload: any) => void) => () => void} on the client's subscriptions
   */
  constructor(connection, on) {
    this.#connection = connection;
    on('preferenceChanged', (event) => this.#changed(event));
    connection.onEveryConnection(() => {
      this.#byServerId.clear();
      this.#unclaimedInitial.clear();
      for (const observation of this.#observations) this.#register(observation);
    });
  }

  /**
   * @param {string} keyPath
   * @param {ObserveOptions} options
   * @param {(change: PreferenceChange) => void} callback
   * @param {PreferenceDomain} domain
   * @returns {ObservationHandle}
   */
  observe(keyPath, options, callback, domain) {
    /** @type {() => void} */
    let markReady = () => {};
    /** @type {Promise<void>} */
    const ready = new Promise((resolve) => {
      markReady = () => resolve();
    });
    /** @type {Observation} */
    const observation = {
      domain,
      keyPath,
      options: { new: true, ...options },
      callback,
      serverId: null,
      epoch: 0,
      established: false,
      stopped: false,
      known: new Map(),
      locked: new Set(),
      ready: markReady,
    };
    this.#observations.add(observation);
    if (this.#connection.connected) this.#register(observation);
    return { stop: () => this.#stop(observation), ready };
  }

  /**
   * @param {string} keyPath
   * @param {any} value
   * @param {{ domain?: PreferenceDomain, ifVersion?: number }} options
   */
  set(keyPath, value, options) {
    /** @type {Record<string, any>} */
    const fields = { domain: options.domain ?? 'user', keyPath, value };
    if (options.ifVersion !== undefined) fields.ifVersion = options.ifVersion;
    return this.#connection.request('setPreference', fields);
  }

  /**
   * @param {string} keyPath
   * @param {{ domain?: PreferenceDomain, ifVersion?: number }} options
   */
  remove(keyPath, options) {
    /** @type {Record<string, any>} */
    const fields = { domain: options.domain ?? 'user', keyPath };
    if (options.ifVersion !== undefined) fields.ifVersion = options.ifVersion;
    return this.#connection.request('removePreference', fields);
  }

  /** @param {Observation} observation */
  #register(observation) {
    const connection = this.#connection;
    const epoch = connection.epoch;
    observation.serverId = null;
    // `initial` is always asked for: it seeds what the client knows, so a catch-up after a
    // reconnect can tell what changed; the caller hears it only if it asked.
    const options = ['initial', 'new'];
    if (observation.options.old) options.push('old');
    connection
      .request('observe', { domain: observation.domain, keyPath: observation.keyPath, options }, { queue: false })
      .then((result) => {
        const id = Number(result.observation);
        const initial = this.#unclaimedInitial.get(id) ?? [];
        this.#unclaimedInitial.delete(id);
        if (epoch !== connection.epoch) return;
        if (observation.stopped) {
          connection.request('unobserve', { observation: id }, { queue: false }).catch(() => {});
          return;
        }
        observation.serverId = id;
        observation.epoch = epoch;
        this.#byServerId.set(id, observation);
        this.#deliverInitial(observation, initial);
        observation.established = true;
        observation.ready();
      })
      .catch((error) => {
        if (error.code === 'unknown_type') observation.ready(); // no preferences on this server: nothing to wait for
        // Otherwise re-made with the next connection.
      });
  }

  /**
   * The `initial` events of a (re-)made observation: delivered as they are the first time
   * (if asked for), and as a catch-up of what differs from what was known after a reconnect.
   * @param {Observation} observation
   * @param {PreferenceChange[]} events
   */
  #deliverInitial(observation, events) {
    const catchUp = observation.established;
    const seen = new Set();
    for (const raw of events) {
      const event = withoutWireFields(raw);
      seen.add(event.keyPath);
      const value = event.exists === false ? undefined : event.new;
      const encoded = value === undefined ? '' : JSON.stringify(value);
      const before = observation.known.get(event.keyPath);
      if (encoded === '') observation.known.delete(event.keyPath);
      else observation.known.set(event.keyPath, encoded);
      const wasLocked = observation.locked.has(event.keyPath);
      if (event.locked === true) observation.locked.add(event.keyPath);
      else observation.locked.delete(event.keyPath);
      if (catchUp) {
        // A key the operator locked or unlocked meanwhile (a server restarted with other
        // managed preferences) is news even when its value is the same.
        if ((before ?? '') === encoded && wasLocked === (event.locked === true)) continue;
        /** @type {PreferenceChange} */
        const change = { ...event, initial: false, catchUp: true };
        if (observation.options.old) change.old = before === undefined || before === '' ? undefined : JSON.parse(before);
        if (encoded === '') change.removed = true;
        observation.callback(change);
      } else if (observation.options.initial) {
        observation.callback(event);
      }
    }
    if (!catchUp) return;
    for (const [keyPath, before] of [...observation.known]) {
      if (seen.has(keyPath)) continue;
      observation.known.delete(keyPath);
      observation.locked.delete(keyPath);
      /** @type {PreferenceChange} */
      const change = { domain: observation.domain, keyPath, removed: true, catchUp: true };
      if (observation.options.old) change.old = JSON.parse(before);
      observation.callback(change);
    }
  }

  /** @param {any} event a `preferenceChanged` event */
  #changed(event) {
    const ids = Array.isArray(event.observations) ? event.observations : [];
    if (event.initial) {
      for (const id of ids) {
        const list = this.#unclaimedInitial.get(id) ?? [];
        list.push(event);
        this.#unclaimedInitial.set(id, list);
      }
      return;
    }
    for (const id of ids) {
      const observation = this.#byServerId.get(id);
      if (!observation || observation.stopped) continue;
      const value = 'new' in event ? event.new : undefined;
      if (value === undefined) observation.known.delete(event.keyPath);
      else observation.known.set(event.keyPath, JSON.stringify(value));
      if (event.locked === true) observation.locked.add(event.keyPath);
      else observation.locked.delete(event.keyPath);
      observation.callback(withoutWireFields(event));
    }
  }

  /** @param {Observation} observation */
  #stop(observation) {
    if (observation.stopped) return;
    observation.stopped = true;
    this.#observations.delete(observation);
    if (observation.serverId === null) return;
    this.#byServerId.delete(observation.serverId);
    const connection = this.#connection;
    if (observation.epoch === connection.epoch && connection.connected) {
      connection.request('unobserve', { observation: observation.serverId }, { queue: false }).catch(() => {});
    }
  }
}

/**
 * A change as observers see it: without the frame's `type` and the scene's observation
 * numbers, which mean nothing outside this connection.
 * @param {any} event
 * @returns {PreferenceChange}
 */
function withoutWireFields(event) {
  const { type: _type, observations: _observations, ...change } = event;
  return change;
}
