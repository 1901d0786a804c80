// Tokens against the real server with `--auth jwt` (lib/connection.js): connecting with a
// token the application signed, `refreshToken` keeping the scene, and a token that expires
// (close 4010): a client whose `auth` is a function gets a new one and resumes its session at
// once; one with a fixed token gives up with `token_expired`.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { once } from 'node:events';
import { join } from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import { clientOf, closeAll, freshWorkspace, next } from './support/helpers.mjs';
import { PanesServer, WebSocket } from './support/server.mjs';
import { Tap } from './support/tap.mjs';

const SECRET = 'a shared secret of at least thirty-two bytes, for the tests only';
const ISSUER = 'https://app.example.test';
const keys = { issuer: ISSUER, audience: 'panes', keys: [{ kid: 'k1', alg: 'HS256', secret: SECRET }] };

/**
 * A token, as an application's backend signs it.
 * @param {{ sub: string, name?: string, workspace: string, seconds: number }} claims
 */
function token({ sub, name, workspace, seconds }) {
  const encode = (/** @type {object} */ value) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const header = encode({ alg: 'HS256', typ: 'JWT', kid: 'k1' });
  const exp = Math.ceil(Date.now() / 1000) + seconds;
  const body = encode({ iss: ISSUER, aud: 'panes', sub, name: name ?? sub, exp, panes: { workspaces: { [workspace]: 'editor' } } });
  const signature = createHmac('sha256', SECRET).update(`${header}.${body}`).digest('base64url');
  return `${header}.${body}.${signature}`;
}

/** @type {PanesServer} */
let server;
before(async () => {
  server = await new PanesServer({
    files: { 'jwt-keys.json': JSON.stringify(keys) },
    args: (data) => ['--auth', 'jwt', '--jwt-keys', join(data, 'jwt-keys.json')],
    settings: { jwtClockSkewMs: 0 },
  }).start();
});
after(() => server.dispose());
afterEach(() => closeAll());

describe('failed authentications', { timeout: 20_000 }, () => {
  test('past the burst an open socket is refused unchecked (rate_limited, close 4012), new ones before their handshake, and the client comes back once allowed', async () => {
    const limited = await new PanesServer({
      files: { 'jwt-keys.json': JSON.stringify(keys) },
      args: (data) => ['--auth', 'jwt', '--jwt-keys', join(data, 'jwt-keys.json')],
      settings: { authFailureBurst: 1, authFailuresPerMinute: 600 },
    }).start();
    try {
      const workspace = freshWorkspace();
      const forged = token({ sub: 'mallory', workspace, seconds: 3600 }).replace(/\.[^.]*$/, '.AAAA');
      const socket = new WebSocket(limited.url, 'panes.v1');
      await once(socket, 'open');
      /** @type {any[]} */
      const replies = [];
      socket.on('message', (data) => replies.push(JSON.parse(String(data))));
      const closed = once(socket, 'close');
      for (const id of [1, 2]) socket.send(JSON.stringify({ type: 'connect', id, protocol: 1, workspace, auth: { token: forged } }));
      const [code] = await closed;
      assert.equal(code, 4012);
      assert.deepEqual(replies.map((r) => r.error?.code), ['unauthenticated', 'rate_limited']);
      assert.equal(replies[1].error.field, 'auth.token');
      assert.ok(replies[1].error.retryAfterMs > 0 && replies[1].error.retryAfterMs <= 100);

      // The address is limited for up to 100 ms: the client's first socket may be turned away
      // before its handshake; it retries, as for a server it cannot reach, and connects.
      const tap = new Tap();
      const client = clientOf(limited, { workspace, auth: { token: token({ sub: 'u_9', workspace, seconds: 3600 }) }, createSocket: tap.createSocket });
      const result = await client.start();
      assert.equal(result.user.id, 'u_9');
    } finally {
      await limited.dispose();
    }
  });
});

describe('tokens', { timeout: 20_000 }, () => {
  test('refreshToken keeps the scene, and later connections use the new token', async () => {
    const workspace = freshWorkspace();
    const tap = new Tap();
    const first = token({ sub: 'u_1', name: 'Ada', workspace, seconds: 3600 });
    const client = clientOf(server, { workspace, auth: { token: first }, createSocket: tap.createSocket });
    const result = await client.start();
    assert.equal(result.user.id, 'u_1');
    assert.equal(typeof result.auth?.expiresAt, 'number');
    const renamed = token({ sub: 'u_1', name: 'Ada L.', workspace, seconds: 7200 });
    const refreshed = await client.refreshToken(renamed);
    assert.equal(refreshed.user.name, 'Ada L.');
    assert.ok((refreshed.auth.expiresAt ?? 0) > (result.auth?.expiresAt ?? 0));
    assert.equal(client.scene, result.scene, 'the same scene');
    client.dropConnection();
    const again = await next(client, 'connect');
    assert.equal(tap.sent('connect').at(-1).auth.token, renamed);
    assert.equal(again.result.session.persistentIdentifier, result.session.persistentIdentifier);
    await assert.rejects(client.refreshToken(token({ sub: 'u_2', workspace, seconds: 60 })), (e) => e.code === 'forbidden');
  });

  test('an expired token closes the scene (4010); a client whose auth is a function gets a new one and resumes at once', async () => {
    const workspace = freshWorkspace();
    let asked = 0;
    const auth = () => {
      asked += 1;
      return { token: token({ sub: 'u_3', workspace, seconds: asked === 1 ? 1 : 3600 }) };
    };
    const client = clientOf(server, { workspace, auth });
    const { session } = await client.start();
    const closed = next(client, 'disconnect');
    const back = next(client, 'connect');
    assert.equal((await closed).code, 4010);
    const event = await back;
    assert.equal(event.sessionChanged, false);
    assert.equal(event.result.session.persistentIdentifier, session.persistentIdentifier);
    assert.equal(asked, 2);
  });

  test('with a fixed token that expired, the client gives up with token_expired', async () => {
    const workspace = freshWorkspace();
    const client = clientOf(server, { workspace, auth: { token: token({ sub: 'u_4', workspace, seconds: 1 }) } });
    await client.start();
    const failed = next(client, 'error');
    assert.equal((await next(client, 'disconnect')).code, 4010);
    const error = await failed;
    assert.equal(error.code, 'token_expired');
    assert.equal(error.action, 'giveUp');
    assert.equal(client.status, 'failed');
  });
});
