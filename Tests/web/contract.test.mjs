// The fake server (support/fake-server.mjs) against the real one: the same frames go to both,
// and the fake's replies must say what the real server's say. Errors match in code, number,
// action and field; results carry nothing the real server does not send, with the same JSON
// types, and the same values where they are not identifiers or times. So the fake cannot
// drift from the server, and timing.test.mjs tests the client against replies that are real.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SUBPROTOCOL } from '../../web/panes-client.js';
import { FakeNetwork } from './support/fake-server.mjs';
import { freshWorkspace } from './support/helpers.mjs';
import { PanesServer, WebSocket } from './support/server.mjs';

/** @type {PanesServer} */
let server;
before(async () => {
  server = await new PanesServer().start();
});
after(() => server.dispose());

/** Sends each frame to the real server over a raw socket, and returns the replies in order. */
async function askReal(frames) {
  const socket = new WebSocket(server.url, SUBPROTOCOL);
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = reject;
  });
  const replies = [];
  for (const frame of frames) {
    const reply = new Promise((resolve) => {
      socket.onmessage = (event) => {
        const message = JSON.parse(String(event.data));
        if (message.type === 'reply' && message.re === frame.id) resolve(message);
      };
    });
    socket.send(JSON.stringify(frame));
    replies.push(await reply);
  }
  socket.close();
  return replies;
}

/** Sends each frame to the fake server over a fake socket, and returns the replies in order. */
async function askFake(frames) {
  const network = new FakeNetwork();
  const socket = network.createSocket('ws://fake/ws', SUBPROTOCOL);
  const received = [];
  socket.onmessage = (event) => received.push(JSON.parse(event.data));
  await network.clock.advance(5);
  const replies = [];
  for (const frame of frames) {
    socket.send(JSON.stringify(frame));
    await network.clock.advance(5);
    replies.push(received.find((m) => m.type === 'reply' && m.re === frame.id));
  }
  return replies;
}

/**
 * Every key of `fake` is in `real`, with the same JSON type, recursively.
 * @param {any} fake
 * @param {any} real
 * @param {string} path
 */
function assertWithin(fake, real, path) {
  const kind = (/** @type {any} */ v) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
  assert.equal(kind(fake), kind(real), `${path}: the fake sends ${kind(fake)}, the server ${kind(real)}`);
  if (kind(fake) === 'object') {
    for (const key of Object.keys(fake)) {
      assert.ok(key in real, `${path}.${key}: the fake sends it, the server does not`);
      assertWithin(fake[key], real[key], `${path}.${key}`);
    }
  } else if (kind(fake) === 'array' && fake.length > 0 && real.length > 0) {
    assertWithin(fake[0], real[0], `${path}[0]`);
  }
}

/** The parts of an error a client acts on. */
const errorOf = (reply) => {
  const { code, number, action, field } = reply.error;
  assert.equal(typeof reply.error.message, 'string');
  return { ok: reply.ok, request: reply.request, code, number, action, field };
};

describe('the fake server says what the real one says', { timeout: 20_000 }, () => {
  test('for each request the fake answers, and for those it does not know', async () => {
    const workspace = freshWorkspace('contract');
    const frames = [
      { type: 'ping', id: 1 },
      {
        type: 'connect',
        id: 2,
        protocol: 1,
        client: 'contract-test',
        workspace,
        auth: { name: 'carol' },
        traits: { width: 'compact', pointer: 'coarse' },
        state: { visible: true, focused: true },
      },
      { type: 'ping', id: 3 },
      { type: 'lifecycle', id: 4, visible: true, focused: false },
      { type: 'lifecycle', id: 5, visible: false, focused: false },
      { type: 'noSuchRequest', id: 6 },
    ];
    const [real, fake] = [await askReal(frames), await askFake(frames)];
    assert.equal(fake.length, real.length);

    // Before connect: not_connected.
    assert.deepEqual(errorOf(fake[0]), errorOf(real[0]));

    // connect: the fake's result is within the server's, and agrees where values are not ids or times.
    assert.equal(real[1].ok, true, JSON.stringify(real[1]));
    assertWithin(fake[1], real[1], 'connect reply');
    const same = (/** @type {any} */ r) => ({
      workspace: r.workspace,
      user: r.user,
      created: r.created,
      restoration: r.restoration,
      traits: r.traits,
      connectionOptions: r.connectionOptions,
      protocol: r.server.protocol,
      session: {
        role: r.session.role,
        configuration: r.session.configuration,
        title: r.session.title,
        userInfo: r.session.userInfo,
        stateRestorationActivity: r.session.stateRestorationActivity,
      },
      forkedFrom: r.forkedFrom ?? null,
    });
    assert.deepEqual(same(fake[1].result), same(real[1].result));
    // What the client reads from it, the fake sends.
    for (const key of ['scene', 'session', 'user', 'restoration', 'connectionOptions', 'server', 'limits']) {
      assert.ok(key in fake[1].result, `the fake's connect result lacks ${key}`);
    }

    // ping and lifecycle.
    for (const i of [2, 3, 4]) {
      assert.equal(real[i].ok, true);
      assertWithin(fake[i], real[i], `${frames[i].type} reply`);
    }
    assert.deepEqual([fake[3].result, fake[4].result], [real[3].result, real[4].result]);

    // A request the fake does not know: unknown_type, as the server says it.
    assert.deepEqual(errorOf(fake[5]), errorOf(real[5]));
  });
});
