// @ts-check
/**
 * A small typed event emitter: `on` returns the function that unsubscribes.
 *
 * @module emitter
 */

/**
 * @template {Record<string, any>} Events  event name → payload type
 */
export class Emitter {
  constructor() {
    /** @type {Map<keyof Events, Set<(payload: any) => void>>} */
    this.listeners = new Map();
  }

  /**
   * Calls `listener` with every `type` event until the returned function is called.
   * @template {keyof Events} K
   * @param {K} type
   * @param {(payload: Events[K]) => void} listener
   * @returns {() => void} unsubscribe
   */
  on(type, listener) {
    let set = this.listeners.get(type);
    if (!set) {
      set = new Set();
      this.listeners.set(type, set);
    }
    set.add(listener);
    return () => {
      set?.delete(listener);
    };
  }

  /**
   * Like `on`, for the next event only.
   * @template {keyof Events} K
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

  /**
   * Calls every listener of `type`. A listener that throws does not stop the others; the error
   * is reported asynchronously, as an uncaught error would be.
   * @template {keyof Events} K
   * @param {K} type
   * @param {Events[K]} payload
   */
  emit(type, payload) {
    const set = this.listeners.get(type);
    if (!set) return;
    for (const listener of [...set]) {
      try {
        listener(payload);
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }
}
