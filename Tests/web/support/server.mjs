// The real `panes` binary for the JavaScript tests: started on port 0 with a fresh data folder,
// its port read from the banner line on stdout (as Tests/browser/conftest.py and
// Tests/PanesServerTests/ServerProcess.swift do), stopped after the tests.
//
// The binary is $PANES_BINARY, default .build/debug/panes under the repository root. A missing
// binary fails the tests: it never turns into skips.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { recording } from './frame-log.mjs';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
export const BINARY = process.env.PANES_BINARY ?? join(ROOT, '.build/debug/panes');

/**
 * The WebSocket the tests use: `ws` (Debian's node-ws; scripts/test sets
 * NODE_PATH=/usr/share/nodejs), whose sockets a test can pause; Node's global one otherwise.
 * With PANES_FRAME_LOG set, it records every message (support/frame-log.mjs).
 */
export const WebSocket = recording(loadWs());

function loadWs() {
  try {
    return createRequire(import.meta.url)('ws');
  } catch {
    if (globalThis.WebSocket) return globalThis.WebSocket;
    throw new Error("no WebSocket: install Debian's node-ws and set NODE_PATH=/usr/share/nodejs (scripts/test does)");
  }
}

/** Every server started and not yet stopped, killed if the test process exits first. */
const running = new Set();
process.on('exit', () => {
  for (const server of running) server.child?.kill('SIGKILL');
});

export class PanesServer {
  /**
   * @param {object} [options]
   * @param {Record<string, any>} [options.settings] the configuration file's `settings`
   * @param {Record<string, string>} [options.files] files written into the data folder first (mode 0600)
   * @param {string[] | ((data: string) => string[])} [options.args] more `panes serve` arguments
   *   (a function gets the data folder, to name those files)
   */
  constructor(options = {}) {
    this.data = mkdtempSync(join(tmpdir(), 'panes-js-'));
    for (const [name, content] of Object.entries(options.files ?? {})) writeFileSync(join(this.data, name), content, { mode: 0o600 });
    const extra = typeof options.args === 'function' ? options.args(this.data) : options.args ?? [];
    this.args = ['serve', '--port', '0', '--data', this.data, '--log-level', 'warning', ...extra];
    if (options.settings) {
      const file = join(this.data, 'config.json');
      writeFileSync(file, JSON.stringify({ settings: options.settings }));
      this.args.push('--config', file);
    }
    this.port = 0;
    this.child = null;
    this.log = '';
  }

  /** `ws://127.0.0.1:PORT/ws` */
  get url() {
    return `ws://127.0.0.1:${this.port}/ws`;
  }

  /** Starts the server (again on the same port and data folder, after a stop). */
  async start() {
    const args = [...this.args];
    if (this.port) args[args.indexOf('--port') + 1] = String(this.port);
    const child = spawn(BINARY, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    running.add(this);
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk) => {
      this.log += chunk;
    });
    child.stdout.setEncoding('utf8');
    let banner = '';
    const port = await new Promise((resolvePort, reject) => {
      const onData = (/** @type {string} */ chunk) => {
        banner += chunk;
        const match = /listening on http:\/\/[\d.]+:(\d+)/.exec(banner);
        if (match && banner.includes('\n')) {
          child.stdout.off('data', onData);
          child.stdout.resume(); // keep draining so the server never blocks on a full pipe
          resolvePort(Number(match[1]));
        }
      };
      child.stdout.on('data', onData);
      child.once('error', (error) => reject(new Error(`cannot run ${BINARY} (build it, or set PANES_BINARY): ${error.message}`)));
      child.once('exit', (code) => reject(new Error(`the server exited (${code}) before listening: ${banner}\n${this.log}`)));
    });
    this.port = port;
    return this;
  }

  /**
   * Stops the server and waits for it to exit: SIGTERM drains it (scenes get `goingAway` and
   * close 1001), SIGKILL is a crash.
   * @param {NodeJS.Signals} [signal]
   */
  async stop(signal = 'SIGTERM') {
    const child = this.child;
    if (!child) return;
    this.child = null;
    running.delete(this);
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
  }

  /** Stops the server for good and removes its data folder. */
  async dispose() {
    await this.stop();
    rmSync(this.data, { recursive: true, force: true });
  }
}

/**
 * A started server; `dispose()` it after the tests.
 * @param {ConstructorParameters<typeof PanesServer>[0]} [options]
 */
export function startServer(options) {
  return new PanesServer(options).start();
}
