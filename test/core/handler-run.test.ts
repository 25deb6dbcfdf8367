/**
 * The one handler run of both eras (lib/core/handler-run.ts), over our own client and server in process:
 * every rule holds the same whether the request came in a handshake-era session or carried the 2026-07-28
 * envelope on a duplex connection. The answer waits for the request's progress notifications, a result
 * that cannot be sent is answered -32603, `notifications/cancelled` and the close reach every request in
 * flight, from one in-flight table.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '../../lib/client/client';
import type { Transport } from '../../lib/core/transport';
import { McpError } from '../../lib/jsonrpc/errors';
import type { JsonRpcMessage } from '../../lib/jsonrpc/types';
import { Server, type ServerConnection } from '../../lib/server/server';
import { createMemoryPair } from '../../transports/memory';
import { deferred, serverWith, tool } from '../helpers/fixtures';
import { eventually } from '../helpers/wait';
import { json } from '../helpers/content';

type Era = 'handshake' | 'modern';
const ERAS: readonly Era[] = ['handshake', 'modern'];

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

let slowStarted = deferred<AbortSignal>();

const definition = serverWith([
  tool('echo', json),
  tool('steps', (_args, ctx) => {
    void ctx.progress(1, 2);
    void ctx.progress(2, 2);
    return { content: [{ type: 'text', text: 'walked' }] };
  }),
  tool('cyclic', () => {
    const self: Record<string, unknown> = {};
    self.self = self;
    return { content: [{ type: 'text', text: 'loop' }], structuredContent: self };
  }),
  tool('slow', (_args, ctx) => {
    slowStarted.resolve(ctx.signal);
    return new Promise(() => undefined);
  }),
]);

/** The server side's sends, in order; the sends of progress notifications wait for `handOver` to resolve. */
interface Recorded {
  readonly sent: JsonRpcMessage[];
  readonly handOver: ReturnType<typeof deferred<void>>;
}

function recording(transport: Transport, recorded: Recorded): Transport {
  return new Proxy(transport, {
    get(target, key) {
      if (key === 'send') {
        return (message: JsonRpcMessage, options?: object) => {
          recorded.sent.push(message);
          const sent = target.send(message, options);
          const progress = (message as { method?: string }).method === 'notifications/progress';
          return progress ? sent.then(() => recorded.handOver.promise) : sent;
        };
      }
      const value = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

async function connect(era: Era) {
  slowStarted = deferred<AbortSignal>();
  const [clientSide, serverSide] = createMemoryPair({ codec: 'json' });
  const recorded: Recorded = { sent: [], handOver: deferred() };
  const server = new Server(definition);
  const connection: ServerConnection = server.connect(recording(serverSide, recorded));
  const client = new Client({ name: 'run-test', version: '1.0.0' }, { era, eraCache: false });
  closers.push(
    () => client.close(),
    () => server.close(),
  );
  await client.connect(clientSide);
  return { client, connection, recorded };
}

describe.each(ERAS)('one handler run, %s era', (era) => {
  it('holds the answer until the last progress notification was handed over', async () => {
    const { client, recorded } = await connect(era);
    const progress: number[] = [];
    const call = client.callTool('steps', {}, { onProgress: ({ progress: value }) => progress.push(value) });
    await eventually(() => recorded.sent.filter(isProgress).length === 2, 'the two progress notifications');
    // The progress sends are not handed over yet: the answer must not have left.
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(recorded.sent.some(isStepsAnswer)).toBe(false);
    recorded.handOver.resolve();
    expect((await call).content).toEqual([{ type: 'text', text: 'walked' }]);
    expect(progress).toEqual([1, 2]);
    const order = recorded.sent.filter((message) => isProgress(message) || isStepsAnswer(message));
    expect(order.map((message) => (isProgress(message) ? 'progress' : 'answer'))).toEqual([
      'progress',
      'progress',
      'answer',
    ]);
  });

  it('answers -32603 when the result cannot be sent (a cycle), and serves on', async () => {
    const { client } = await connect(era);
    const failed = await client.callTool('cyclic', {}).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failed).toBeInstanceOf(McpError);
    expect(failed).toMatchObject({ code: -32603, message: expect.stringMatching(/result could not be sent/) });
    expect((await client.callTool('echo', { after: 1 })).content).toEqual([{ type: 'text', text: '{"after":1}' }]);
  });

  it('counts the request in flight, cancels it on notifications/cancelled and forgets it', async () => {
    const { client, connection } = await connect(era);
    const controller = new AbortController();
    const call = client.callTool('slow', {}, { signal: controller.signal });
    const before = connection.activeHandlerCount; // a stateless client may hold a listen stream open
    const signal = await slowStarted.promise;
    expect(connection.activeHandlerCount).toBe(before + 1);
    controller.abort(new Error('enough'));
    await expect(call).rejects.toThrow();
    await eventually(() => signal.aborted, "the handler's signal to abort");
    expect(connection.activeHandlerCount).toBe(before);
  });
});

function isProgress(message: JsonRpcMessage): boolean {
  return (message as { method?: string }).method === 'notifications/progress';
}

function isStepsAnswer(message: JsonRpcMessage): boolean {
  return 'result' in message && JSON.stringify(message.result).includes('walked');
}
