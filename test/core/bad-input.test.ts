import { describe, expect, it } from 'vitest';
import { Server } from '../../lib/server/server';
import { createMemoryPair } from '../../transports/memory';
import { validateEmitted } from '../helpers/pair';
import { RawPeer } from '../helpers/raw-peer';
import { serverWith, tool } from '../helpers/fixtures';
import { json } from '../helpers/content';

const definition = serverWith([tool('echo', json)]);

/** A server behind a JSON wire with a 2 KiB frame limit, and an initialized raw client. */
async function setup() {
  const [peerSide, serverSide] = createMemoryPair({ codec: 'json', maxMessageBytes: 2048 });
  const server = new Server(definition);
  const connection = server.connect(serverSide);
  validateEmitted(connection);
  const peer = new RawPeer(peerSide);
  await peer.initialize();
  return { peer, connection, server };
}

/** After each bad input the connection still works. */
async function stillWorks(peer: RawPeer) {
  expect(await peer.request('ping', undefined, 'after')).toEqual({ jsonrpc: '2.0', id: 'after', result: {} });
  expect((await peer.request('tools/call', { name: 'echo', arguments: { ok: 1 } })).result.content[0].text).toBe(
    '{"ok":1}',
  );
}

const idless = (code: number, message: string | RegExp) => ({
  jsonrpc: '2.0',
  error: { code, message: typeof message === 'string' ? message : expect.stringMatching(message) },
});

describe('bad input', () => {
  it('malformed JSON gets -32700 without an id', async () => {
    const { peer } = await setup();
    await peer.sendRaw('{"jsonrpc":"2.0","id":1,"method":"ping"');
    const reply = await peer.next();
    expect(reply).toEqual(idless(-32700, /^Parse error: /));
    expect(reply).not.toHaveProperty('id');
    await stillWorks(peer);
  });

  it('a value that is not an object gets -32600 without an id', async () => {
    const { peer } = await setup();
    for (const raw of ['42', '"ping"', 'null', 'true']) {
      await peer.sendRaw(raw);
      expect(await peer.next()).toEqual(idless(-32600, /^Invalid Request: expected a JSON object/));
    }
    await stillWorks(peer);
  });

  it('a wrong jsonrpc version gets -32600 with the id when it can be read', async () => {
    const { peer } = await setup();
    await peer.send({ jsonrpc: '1.0', id: 5, method: 'ping' });
    expect(await peer.next()).toEqual({
      jsonrpc: '2.0',
      id: 5,
      error: { code: -32600, message: 'Invalid Request: "jsonrpc" must be "2.0", got "1.0"' },
    });
    await peer.send({ id: 6, method: 'ping' });
    expect(await peer.next()).toMatchObject({ id: 6, error: { code: -32600 } });
    await stillWorks(peer);
  });

  it('a null id gets -32600 without an id; a broken response gets no reply at all', async () => {
    const { peer } = await setup();
    await peer.send({ jsonrpc: '2.0', id: null, method: 'ping' });
    expect(await peer.next()).toEqual(idless(-32600, 'Invalid Request: "id" must be a string or a number, got null'));
    // JSON-RPC forbids answering a response; answering would let two broken peers ping-pong errors.
    for (const response of [
      { jsonrpc: '2.0', result: {} },
      { jsonrpc: '1.0', id: 3, result: {} },
      { jsonrpc: '2.0', id: 4, result: {}, error: { code: 1, message: 'm' } },
      { jsonrpc: '2.0', id: 5, error: { code: 'x' } },
    ]) {
      await peer.send(response);
    }
    expect(await peer.drain()).toEqual([]);
    await stillWorks(peer);
  });

  it('a request without an id is a notification: an unknown one is ignored, no reply', async () => {
    const { peer } = await setup();
    await peer.send({ jsonrpc: '2.0', method: 'tools/list' });
    await peer.send({ jsonrpc: '2.0', method: 'notifications/whatever', params: { x: 1 } });
    expect(await peer.drain()).toEqual([]);
    await stillWorks(peer);
  });

  it('params of the wrong type get -32602', async () => {
    const { peer } = await setup();
    for (const params of [[1, 2], 'x', 7, null]) {
      await peer.send({ jsonrpc: '2.0', id: 'p', method: 'tools/list', params });
      expect(await peer.next()).toEqual({
        jsonrpc: '2.0',
        id: 'p',
        error: { code: -32602, message: 'Invalid params: "params" must be an object' },
      });
    }
    expect((await peer.request('tools/call', { name: ['echo'] })).error.code).toBe(-32602);
    await stillWorks(peer);
  });

  it('an unknown method gets -32601', async () => {
    const { peer } = await setup();
    expect(await peer.request('tools/explode', {}, 'u')).toEqual({
      jsonrpc: '2.0',
      id: 'u',
      error: { code: -32601, message: 'Method not found: tools/explode' },
    });
    expect((await peer.request('__proto__')).error.code).toBe(-32601);
    expect((await peer.request('toString')).error.code).toBe(-32601);
    await stillWorks(peer);
  });

  it('an oversized message gets -32600 without an id and is never parsed', async () => {
    const { peer } = await setup();
    await peer.sendRaw(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 'big',
        method: 'tools/call',
        params: { name: 'echo', arguments: { blob: 'x'.repeat(5000) } },
      }),
    );
    expect(await peer.next()).toEqual(idless(-32600, 'Message too large: the limit is 2048 bytes'));
    await stillWorks(peer);
  });

  it('a malformed error response and a response to nothing are ignored', async () => {
    const { peer, connection } = await setup();
    await peer.send({ jsonrpc: '2.0', id: 77, result: {} });
    await peer.send({ jsonrpc: '2.0', id: 78, error: { code: -1, message: 'no such request' } });
    await peer.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'nothing' } });
    await peer.send({
      jsonrpc: '2.0',
      method: 'notifications/progress',
      params: { progressToken: 'nothing', progress: 1 },
    });
    await peer.send({ jsonrpc: '2.0', method: 'notifications/cancelled' });
    expect(await peer.drain()).toEqual([]);
    expect(connection.state).toBe('ready');
    await stillWorks(peer);
  });

  it('a burst of garbage leaves no record behind', async () => {
    const { peer, connection } = await setup();
    for (let i = 0; i < 200; i++) {
      await peer.sendRaw(i % 2 ? '{' : '[]');
    }
    const replies = [];
    for (let i = 0; i < 200; i++) replies.push(await peer.next());
    expect(replies.every((reply) => reply.error && !('id' in reply))).toBe(true);
    expect(connection.activeHandlerCount).toBe(0);
    expect(connection.pendingRequestCount).toBe(0);
    await stillWorks(peer);
  });
});
