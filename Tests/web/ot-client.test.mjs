// Tests for web/lib/ot-client.js: the state machine step by step, then several clients and a
// simulated server (the protocol the Swift server implements) under random interleavings,
// lost messages and reconnects, all converging.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { OTClient } from '../../web/lib/ot-client.js';
import { seededRandom } from './support/seeded-random.mjs';
import {
  apply,
  codePointLength,
  diffToOperation,
  normalize,
  transform,
  transformPosition,
} from '../../web/lib/ot.js';

/** A client whose sends are recorded. */
function recordingClient(revision = 0) {
  /** @type {Array<[number, any[], string]>} */
  const sent = [];
  const client = new OTClient({ revision, idPrefix: 's1', send: (r, op, opId) => sent.push([r, op, opId]) });
  return { client, sent };
}

describe('OTClient: keeping and restoring unsent edits, and rebasing them over a difference', () => {
  test('pending() lists the outstanding and buffered edits with the ids they are sent with', () => {
    const { client, sent } = recordingClient(3);
    client.applyClient([1, 'a', 1]);
    client.applyClient([3, 'b']);
    client.applyClient([4, 'c']);
    assert.deepEqual(client.pending(), [
      { op: [1, 'a', 1], opId: 's1:1' },
      { op: [3, 'bc'], opId: 's1:2' },
    ]);
    client.serverAck('s1:1');
    assert.deepEqual(sent.at(-1), [4, [3, 'bc'], 's1:2'], 'the buffer goes with the id it was kept with');
  });

  test('restore() takes kept edits back unsent, and resend() sends the first with its id', () => {
    const { client, sent } = recordingClient(0);
    client.restore(9, [{ op: [2, 'x'], opId: 'old:4' }, { op: [3, 'y'], opId: 'old:5' }, { op: [4, 'z'], opId: 'old:6' }]);
    assert.deepEqual(sent, []);
    assert.equal(client.revision, 9);
    client.resend();
    assert.deepEqual(sent, [[9, [2, 'x'], 'old:4']]);
    assert.deepEqual(client.pending()[1], { op: [3, 'yz'], opId: 'old:5' });
  });

  test('rebase() moves the edits over a difference as over a server operation', () => {
    const { client } = recordingClient(0);
    let text = 'abc';
    client.applyClient([3, '!']);
    text = apply(text, [3, '!']);
    client.applyClient([0, '>', 4].filter((c) => c !== 0));
    text = apply(text, ['>', 4]);
    // The server's text is "abXc" at revision 40.
    const local = client.rebase(40, [2, 'X', 1]);
    assert.equal(apply(text, local), '>abXc!');
    assert.equal(client.revision, 40);
    let server = 'abXc';
    for (const p of client.pending()) server = apply(server, p.op);
    assert.equal(server, '>abXc!', 'the rebased edits give the same text on the server');
  });

  test('dropOutstanding() forgets an edit the server already applied; the buffer goes next', () => {
    const { client } = recordingClient(0);
    client.applyClient([1, 'a']);
    client.applyClient([2, 'b']);
    assert.deepEqual(client.dropOutstanding(), [1, 'a']);
    assert.deepEqual(client.pending(), [{ op: [2, 'b'], opId: 's1:2' }]);
    assert.deepEqual(client.dropOutstanding(), [2, 'b']);
    assert.equal(client.state.name, 'synchronized');
  });
});

describe('OTClient states', () => {
  test('a local edit while synchronized is sent at once with a prefixed id', () => {
    const { client, sent } = recordingClient(7);
    client.applyClient([1, 'x', 2]);
    assert.deepEqual(sent, [[7, [1, 'x', 2], 's1:1']]);
    assert.equal(client.state.name, 'awaitingConfirm');
    assert.equal(client.outstandingId, 's1:1');
  });

  test('edits while awaiting are buffered and composed, then sent after the ack', () => {
    const { client, sent } = recordingClient(0);
    client.applyClient([1, 'a', 2]); // xyz -> xayz
    client.applyClient([2, 'b', 2]); // -> xabyz
    client.applyClient([3, 'c', 2]); // -> xabcyz
    assert.equal(sent.length, 1);
    assert.equal(client.state.name, 'awaitingWithBuffer');
    client.serverAck();
    assert.equal(client.revision, 1);
    assert.deepEqual(sent[1], [1, [2, 'bc', 2], 's1:2']);
    client.serverAck('s1:2');
    assert.equal(client.state.name, 'synchronized');
    assert.equal(client.revision, 2);
  });

  test('no-op edits are not sent', () => {
    const { client, sent } = recordingClient();
    client.applyClient([5]);
    assert.equal(sent.length, 0);
    assert.equal(client.state.name, 'synchronized');
  });

  test('a server operation while synchronized applies as it is', () => {
    const { client } = recordingClient(3);
    assert.deepEqual(client.applyServer([1, -1]), [1, -1]);
    assert.equal(client.revision, 4);
  });

  test('a server operation is transformed past the outstanding and buffered edits', () => {
    const { client } = recordingClient();
    let text = 'xy';
    const edit = (op) => {
      text = apply(text, op);
      client.applyClient(op);
    };
    edit([1, 'A', 1]); // xAy, outstanding
    edit([3, '!']); // xAy!, buffered
    const local = client.applyServer([1, 'B', 1]); // the server had xBy
    text = apply(text, local);
    // This client's insert is not on the server yet, so it wins the tie, as the server will decide.
    assert.equal(text, 'xABy!');
    assert.deepEqual(client.state, {
      name: 'awaitingWithBuffer',
      outstanding: [1, 'A', 2],
      opId: 's1:1',
      buffer: [4, '!'],
      bufferId: 's1:2', // fixed when the buffer began, so a kept buffer keeps its id
    });
  });

  test('its own operation coming back counts as the acknowledgement', () => {
    const { client } = recordingClient();
    client.applyClient(['a']);
    assert.equal(client.applyServer(['a'], 's1:1'), null);
    assert.equal(client.state.name, 'synchronized');
    assert.equal(client.revision, 1);
  });

  test('a duplicate acknowledgement is ignored, a stray one is an error', () => {
    const { client } = recordingClient();
    assert.equal(client.serverAck('s1:9'), false);
    assert.throws(() => client.serverAck(), /no operation in flight/);
    client.applyClient(['a']);
    assert.equal(client.serverAck('other:1'), false);
    assert.equal(client.serverAck('s1:1'), true);
  });

  test('while disconnected nothing is sent; resend sends the outstanding edit with its id', () => {
    const { client, sent } = recordingClient();
    client.applyClient(['a']);
    client.disconnected();
    client.applyClient([1, 'b']);
    assert.equal(sent.length, 1);
    // Catching up: another user's edit arrived meanwhile.
    assert.deepEqual(client.applyServer(['Z']), [2, 'Z']); // ab -> abZ: this client's text wins the tie
    assert.deepEqual(client.resend(), { revision: 1, op: ['a', 1], opId: 's1:1' });
    assert.deepEqual(sent[1], [1, ['a', 1], 's1:1']);
    client.serverAck();
    assert.deepEqual(sent[2], [2, [1, 'b', 1], 's1:2']);
  });

  test('an acknowledgement during catch-up holds the buffer until resend', () => {
    const { client, sent } = recordingClient();
    client.applyClient(['a']);
    client.applyClient([1, 'b']);
    client.disconnected();
    assert.equal(client.applyServer(['a'], 's1:1'), null); // the server had applied it
    assert.equal(sent.length, 1);
    assert.deepEqual(client.resend(), { revision: 1, op: [1, 'b'], opId: 's1:2' });
    assert.equal(client.resend().opId, 's1:2');
    const { client: idle } = recordingClient();
    assert.equal(idle.resend(), null);
  });

  test('remote selections are moved past unsent edits', () => {
    const { client } = recordingClient();
    client.applyClient(['😀', 3]); // outstanding
    client.applyClient([4, 'xy']); // buffered
    assert.deepEqual(client.transformSelection({ anchor: 1, head: 3 }), { anchor: 2, head: 4 });
    // Text this client inserted exactly at a remote caret goes after that caret.
    assert.deepEqual(client.transformSelection({ anchor: 0, head: 0 }), { anchor: 0, head: 0 });
  });
});

// --- Several clients and a simulated server ---

/** mulberry32 */
function makeRandom(seed) {
  const { int } = seededRandom(seed);
  const pieces = ['a', 'b', ' ', 'é', 'e\u0301', '漢', '😀', '𝒳', '👩\u200d💻'];
  const text = (/** @type {number} */ max) => Array.from({ length: int(max + 1) }, () => pieces[int(pieces.length)]).join('');
  return { int, text };
}

/**
 * The server's side of the protocol, as PanesCore does it: an incoming operation made at
 * revision r is rewritten past every operation applied since, with transform(incoming, applied).
 */
class SimulatedServer {
  /** @param {string} text */
  constructor(text) {
    this.text = text;
    /** @type {Array<{ op: any[], opId: string }>} */
    this.history = [];
    this.seen = new Set();
  }

  /** @returns {any[] | null} the operation as applied, or null for a duplicate */
  receive(revision, op, opId) {
    if (this.seen.has(opId)) return null;
    let rewritten = op;
    for (const entry of this.history.slice(revision)) rewritten = transform(rewritten, entry.op)[0];
    this.text = apply(this.text, rewritten);
    this.history.push({ op: rewritten, opId });
    this.seen.add(opId);
    return rewritten;
  }
}

/** Runs one random session; returns the server and clients at the end. */
function simulate(seed, { clients: count = 3, steps = 80 } = {}) {
  const r = makeRandom(seed);
  const server = new SimulatedServer(r.text(8));
  const peers = Array.from({ length: count }, (_, i) => {
    const peer = {
      name: `p${i}`,
      text: server.text,
      caret: 0,
      online: true,
      /** @type {Array<{ revision: number, op: any[], opId: string }>} */
      outbox: [],
      /** @type {Array<{ type: 'ack' | 'op', op?: any[], opId: string }>} */
      inbox: [],
      client: /** @type {OTClient} */ (/** @type {unknown} */ (null)),
    };
    peer.client = new OTClient({
      revision: 0,
      idPrefix: `session-${i}`,
      send: (revision, op, opId) => {
        assert.ok(peer.online, `${peer.name} sent while offline`);
        peer.outbox.push({ revision, op, opId });
      },
    });
    return peer;
  });

  const applyLocal = (peer, op, own) => {
    peer.text = apply(peer.text, op);
    peer.caret = transformPosition(op, peer.caret, own);
    assert.ok(peer.caret >= 0 && peer.caret <= codePointLength(peer.text), `seed ${seed}: caret out of the text`);
  };
  const edit = (peer) => {
    const points = Array.from(peer.text);
    const at = r.int(points.length + 1);
    const end = at + r.int(Math.min(3, points.length - at) + 1);
    // As a textarea would report it: the whole new text, turned into an operation.
    const after = points.slice(0, at).join('') + r.text(2) + points.slice(end).join('');
    const op = diffToOperation(peer.text, after);
    applyLocal(peer, op, true);
    peer.client.applyClient(op);
  };
  const deliverToServer = (peer) => {
    const message = peer.outbox.shift();
    if (!message) return;
    const applied = server.receive(message.revision, message.op, message.opId);
    for (const other of peers) {
      if (!other.online) continue;
      if (other === peer) other.inbox.push({ type: 'ack', opId: message.opId });
      else if (applied) other.inbox.push({ type: 'op', op: applied, opId: message.opId });
    }
  };
  const deliverToClient = (peer) => {
    const message = peer.inbox.shift();
    if (!message) return;
    if (message.type === 'ack') peer.client.serverAck(message.opId);
    else {
      const local = peer.client.applyServer(message.op, message.opId);
      if (local) applyLocal(peer, local, false);
    }
  };
  const disconnect = (peer) => {
    // Either what was sent reached the server before the drop (and only the ack is lost), or it was lost.
    if (r.int(2) === 0) while (peer.outbox.length > 0) deliverToServer(peer);
    peer.online = false;
    peer.outbox = [];
    peer.inbox = [];
    peer.client.disconnected();
  };
  const reconnect = (peer) => {
    peer.online = true;
    for (const entry of server.history.slice(peer.client.revision)) {
      const local = peer.client.applyServer(entry.op, entry.opId);
      if (local) applyLocal(peer, local, false);
    }
    peer.client.resend();
  };

  for (let step = 0; step < steps; step++) {
    const peer = peers[r.int(peers.length)];
    const action = r.int(10);
    if (!peer.online) {
      if (action < 3) reconnect(peer);
      else if (action < 6) edit(peer);
    } else if (action < 3) edit(peer);
    else if (action < 6) deliverToServer(peer);
    else if (action < 9) deliverToClient(peer);
    else if (r.int(4) === 0) disconnect(peer);
  }
  // Let everything settle.
  for (const peer of peers) if (!peer.online) reconnect(peer);
  while (peers.some((p) => p.outbox.length > 0 || p.inbox.length > 0)) {
    const busy = peers.filter((p) => p.outbox.length > 0 || p.inbox.length > 0);
    const peer = busy[r.int(busy.length)];
    if (peer.outbox.length > 0 && (peer.inbox.length === 0 || r.int(2) === 0)) deliverToServer(peer);
    else deliverToClient(peer);
  }
  return { server, peers };
}

describe('clients and a server under random interleavings', () => {
  test('every client converges on the server text', () => {
    let edits = 0;
    for (let seed = 0; seed < 300; seed++) {
      const { server, peers } = simulate(seed, { clients: 2 + (seed % 3) });
      edits += server.history.length;
      for (const peer of peers) {
        const why = `seed ${seed}: ${peer.name}`;
        assert.equal(peer.text, server.text, why);
        assert.equal(peer.client.state.name, 'synchronized', why);
        assert.equal(peer.client.revision, server.history.length, why);
      }
    }
    assert.ok(edits > 3000, `only ${edits} edits reached the server`);
  });

  test('long sessions with many clients converge', () => {
    for (let seed = 1000; seed < 1010; seed++) {
      const { server, peers } = simulate(seed, { clients: 6, steps: 1500 });
      for (const peer of peers) assert.equal(peer.text, server.text, `seed ${seed}: ${peer.name}`);
    }
  });

  test('normalized operations from diffs are what the server stores', () => {
    const { server } = simulate(42);
    for (const entry of server.history) assert.deepEqual(normalize(entry.op), entry.op);
  });
});
