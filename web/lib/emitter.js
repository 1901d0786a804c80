// @ts-check
/**
 * Subscriptions for the library's public classes: `on` and `once` are public, emitting is
 * not. A class extends `EventSource`; the library emits with this module's `emit`, which the
 * package's entry point does not export, so an application cannot fake the client's events.
 *
 * @module emitter
 */

/** @type {(source: EventSource<any>, type: string, payload: any) => void} */
let emitTo = () => {};

/**
 * @template {Record<string, any>} Events  event name → payload type
 */
export class EventSource {
  /** @type {Map<string, Set<(payload: any) => void>>} */
  #listeners = new Map();

  static {
    emitTo = (source, type, payload) => {
      const set = source.#listeners.get(type);
      if (!set) return;
      for (const listener of [...set]) {
        try {
          listener(payload);
        } catch (error) {
          // One listener's fault must not stop the others, nor the library: report it as
          // an uncaught error would be.
          queueMicrotask(() => {
            throw error;
          });
        }
      }
    };
  }

  /**
   * Calls `listener` with every `type` event until the returned function is called.
   * @template {keyof Events & string} K
   * @param {K} type
   * @param {(payload: Events[K]) => void} listener
   * @returns {() => void} unsubscribe
   */
  on(type, listener) {
    let set = this.#listeners.get(type);
    if (!set) {
      set = new Set();
      this.#listeners.set(type, set);
    }
    set.add(listener);
    return () => {
      set?.delete(listener);
    };
  }

  /**
   * Like `on`, for the next event only.
   * @template {keyof Events & string} K
   * @param {K} type
   * @param {(payload: Events[K]) => void} listener
   * @returns {() => void} unsubscribe
   */
  once(type, listener) {
    const off = this.on(type, (payload) => {
      off();
      listener(payload);
    });
    return off;
  }
}

/**
 * Calls every listener of `type` on `source`. A listener that throws does not stop the others.
 * @template {Record<string, any>} Events
 * @template {keyof Events & string} K
 * @param {EventSource<Events>} source
 * @param {K} type
 * @param {Events[K]} payload
 */
export function emit(source, type, payload) {
  emitTo(source, type, payload);
}
