// Real sockets with a tap: the frames a client sends are recorded, and a test can hold back or
// drop frames the server sends, or hand the client one the server would not send on demand
// (a garbled frame, a presence at an old revision). The server stays the real one.
import { WebSocket } from './server.mjs';

export class Tap {
  constructor() {
    /** @type {TappedSocket[]} */
    this.sockets = [];
    /** @type {Array<(message: any) => boolean>} incoming frames matching one are dropped */
    this.filters = [];
    /** While true, new sockets fail as an unreachable server's do (close 1006, never open). */
    this.unreachable = false;
    this.createSocket = (/** @type {string} */ url, /** @type {string} */ protocol) => {
      if (this.unreachable) return new UnreachableSocket();
      const socket = new TappedSocket(this, new WebSocket(url, protocol));
      this.sockets.push(socket);
      return socket;
    };
  }

  /** The last socket a client opened. */
  get last() {
    return this.sockets[this.sockets.length - 1];
  }

  /** Every frame the server sent on every socket, oldest first. */
  get received() {
    return this.sockets.flatMap((socket) => socket.received ?? []);
  }

  /** Every request sent on every socket, oldest first; with `type`, only those. */
  sent(type) {
    const all = this.sockets.flatMap((socket) => socket.sent);
    return type ? all.filter((m) => m.type === type) : all;
  }

  /**
   * Drops incoming frames for which `predicate` holds, until the returned function is called.
   * @param {(message: any) => boolean} predicate
   */
  drop(predicate) {
    this.filters.push(predicate);
    return () => {
      this.filters = this.filters.filter((f) => f !== predicate);
    };
  }
}

/** A socket to a server that cannot be reached: it closes (1006) without opening. */
class UnreachableSocket {
  constructor() {
    this.onopen = this.onmessage = this.onclose = this.onerror = null;
    setImmediate(() => this.onclose?.({ code: 1006, reason: '' }));
  }
  send() {
    throw new Error('not open');
  }
  close() {}
}

/** The client's side of one real WebSocket, as `SocketLike`. */
class TappedSocket {
  /**
   * @param {Tap} tap
   * @param {any} real
   */
  constructor(tap, real) {
    this.tap = tap;
    this.real = real;
    /** @type {any[]} */
    this.sent = [];
    /** @type {any[]} every frame the server sent, dropped or not */
    this.received = [];
    /** @type {any[]} */
    this.dropped = [];
    this.onopen = this.onmessage = this.onclose = this.onerror = null;
    real.onopen = (event) => this.onopen?.(event);
    real.onerror = (event) => this.onerror?.(event);
    real.onclose = (event) => this.onclose?.({ code: event.code, reason: event.reason });
    real.onmessage = (event) => {
      const text = typeof event.data === 'string' ? event.data : String(event.data);
      const message = JSON.parse(text);
      this.received.push(message);
      if (this.tap.filters.some((filter) => filter(message))) {
        this.dropped.push(message);
        return;
      }
      this.onmessage?.({ data: text });
    };
  }

  /** @param {string} data */
  send(data) {
    this.sent.push(JSON.parse(data));
    this.real.send(data);
  }

  /**
   * @param {number} [code]
   * @param {string} [reason]
   */
  close(code, reason) {
    this.real.close(code, reason);
  }

  /** Stops reading from the server (pings go unanswered) until `resume()`. `ws` sockets only. */
  pause() {
    this.real._socket.pause();
  }

  resume() {
    this.real._socket.resume();
  }

  /**
   * Hands the client a frame as if the server had sent it.
   * @param {any} message an object (sent as JSON) or a string (sent as it is)
   */
  inject(message) {
    this.onmessage?.({ data: typeof message === 'string' ? message : JSON.stringify(message) });
  }
}
