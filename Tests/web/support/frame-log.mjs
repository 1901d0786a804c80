// Records every text message the tests' sockets to the real server send and receive, when
// PANES_FRAME_LOG names a folder, for scripts/check_frames.py to validate against
// PROTOCOL.schema.json. One file per test process (`js-PID.jsonl`), one JSON line per message:
// {"direction": "sent"|"received", "connection": "js-PID-3", "test": "file: test name", "text": "…"}.
// The shipped client knows nothing of this: the tests hand it a recording WebSocket class.
import { appendFileSync, mkdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { beforeEach } from 'node:test';

const folder = process.env.PANES_FRAME_LOG || null;
const file = basename(process.argv[1] ?? 'node');
let currentTest = file;
let connections = 0;
/** @type {string[]} */
let buffered = [];

if (folder) {
  mkdirSync(folder, { recursive: true });
  // A hook at the top of the module applies to every test of the file that imports it.
  beforeEach((t) => {
    currentTest = `${file}: ${t.name}`;
  });
  process.on('exit', flush);
}

function flush() {
  if (!folder || buffered.length === 0) return;
  appendFileSync(join(folder, `js-${process.pid}.jsonl`), buffered.join(''));
  buffered = [];
}

/**
 * `WebSocket` itself when nothing is recorded; else a subclass that records each text message
 * its sockets send and receive, named after the test that opened the socket.
 * @template {new (...args: any[]) => any} T
 * @param {T} WebSocket
 * @returns {T}
 */
export function recording(WebSocket) {
  if (!folder) return WebSocket;
  // @ts-ignore: a subclass with the same constructor
  return class RecordingWebSocket extends WebSocket {
    /** @param {any[]} args */
    constructor(...args) {
      super(...args);
      connections += 1;
      const connection = `js-${process.pid}-${connections}`;
      const test = currentTest;
      /** @param {'sent' | 'received'} direction @param {string} text */
      this.recordFrame = (direction, text) => {
        buffered.push(`${JSON.stringify({ connection, direction, test, text })}\n`);
        if (buffered.length >= 500) flush();
      };
      this.addEventListener('message', (/** @type {{ data: any }} */ event) => {
        if (typeof event.data === 'string') this.recordFrame('received', event.data);
      });
    }

    /** @param {any} data @param {any[]} rest */
    send(data, ...rest) {
      if (typeof data === 'string') this.recordFrame('sent', data);
      return super.send(data, ...rest);
    }
  };
}
