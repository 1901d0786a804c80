// The package as people adopt it: `npm pack` of web/, installed offline into an empty Node
// project (from the tarball, and by path), whose copy of the shipped example then runs against
// the real server: connect as a user with two windows, observe and set a preference, create
// and edit a document, drag it between the windows. Also: only the entry point is importable.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { CLIENT_VERSION } from '../../web/panes-client.js';
import { freshWorkspace } from './support/helpers.mjs';
import { PanesServer, ROOT } from './support/server.mjs';

const run = promisify(execFile);
const WEB = join(ROOT, 'web');
/** npm without the network: the registry is never asked, nothing is downloaded. */
const NPM_OFFLINE = ['--offline', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'];
const env = { ...process.env, NODE_PATH: process.env.NODE_PATH ?? '/usr/share/nodejs' };

/** @type {PanesServer} */
let server;
let scratch = '';
let tarball = '';
before(async () => {
  server = await new PanesServer().start();
  scratch = mkdtempSync(join(tmpdir(), 'panes-package-'));
  const { stdout } = await run('npm', ['pack', '--pack-destination', scratch, ...NPM_OFFLINE], { cwd: WEB, env });
  tarball = join(scratch, stdout.trim().split('\n').at(-1) ?? '');
});
after(async () => {
  await server.dispose();
  rmSync(scratch, { recursive: true, force: true });
});

/**
 * An empty project with the package installed from `source`.
 * @param {string} source
 */
async function project(source) {
  const dir = mkdtempSync(join(scratch, 'project-'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  await run('npm', ['install', ...NPM_OFFLINE, source], { cwd: dir, env });
  return dir;
}

const EXPECTED = [
  'connected: 2 windows of Ada, sessions differ: true',
  'preference: editor.fontSize = 18 (set in the right window, heard in the left)',
  'document: "Hello, world" at revision 1 in both windows',
  'drag: Notes dropped on the right window; the left saw dropped',
];

describe('the package', { timeout: 120_000 }, () => {
  test('the tarball holds the entry point, the modules, the types and the example, and nothing else', async () => {
    const { stdout } = await run('tar', ['-tzf', tarball]);
    const files = stdout.trim().split('\n').map((f) => f.replace(/^package\//, '')).sort();
    assert.ok(files.includes('panes-client.js'));
    assert.ok(files.includes('types/panes-client.d.ts'));
    assert.ok(files.includes('examples/socket-test.mjs'));
    assert.ok(files.includes('lib/connection.js'));
    assert.deepEqual(files.filter((f) => !/^(lib\/[\w-]+\.js|panes-client\.js|package\.json|README\.md|types\/panes-client\.d\.ts|examples\/socket-test\.mjs)$/.test(f)), []);
    const manifest = JSON.parse(readFileSync(join(WEB, 'package.json'), 'utf8'));
    assert.equal(CLIENT_VERSION, `${manifest.name}/${manifest.version}`, 'the client reports the package version');
  });

  for (const [kind, source] of [
    ['tarball', () => tarball],
    ['folder', () => WEB],
  ]) {
    test(`installed from the ${kind} into an empty project, its example runs against the real server`, async () => {
      const dir = await project(source());
      copyFileSync(join(dir, 'node_modules/panes-client/examples/socket-test.mjs'), join(dir, 'socket-test.mjs'));
      const { stdout } = await run('node', ['socket-test.mjs', server.url, freshWorkspace(kind)], { cwd: dir, env, timeout: 30_000 });
      assert.deepEqual(stdout.trim().split('\n'), EXPECTED);
    });
  }

  test("with Node's own WebSocket (no `ws`), and with only the entry point importable", async (t) => {
    const probe = await run('node', ['--experimental-websocket', '-e', 'process.stdout.write(typeof WebSocket)']).catch(() => ({ stdout: '' }));
    if (probe.stdout !== 'function') return t.skip(`this Node (${process.version}) has no WebSocket of its own`);
    const dir = await project(tarball);
    copyFileSync(join(dir, 'node_modules/panes-client/examples/socket-test.mjs'), join(dir, 'socket-test.mjs'));
    const bare = { ...process.env, NODE_PATH: '' };
    const { stdout } = await run('node', ['--experimental-websocket', '--no-warnings', 'socket-test.mjs', server.url, freshWorkspace('global')], {
      cwd: dir,
      env: bare,
      timeout: 30_000,
    });
    assert.deepEqual(stdout.trim().split('\n'), EXPECTED);
    const internal = run('node', ['--input-type=module', '-e', "await import('panes-client/lib/connection.js')"], { cwd: dir, env: bare });
    await assert.rejects(internal, (e) => /ERR_PACKAGE_PATH_NOT_EXPORTED/.test(String(e.stderr)));
    const { stdout: exported } = await run('node', ['--input-type=module', '-e', "console.log(Object.keys(await import('panes-client')).sort().join(' '))"], {
      cwd: dir,
      env: bare,
    });
    assert.ok(!/\b(Connection|RequestTable|emit|EventSource|OTClient)\b/.test(exported), exported);
  });
});
