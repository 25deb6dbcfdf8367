/**
 * Nothing ends silently in the stateless revision's trace (issue 27, item 1): a request whose requester
 * closes its stream shows the cancel that is (a `notifications/cancelled` event naming it) and, once its
 * handler stops, the answer withheld; a notification POSTed on its own (mcp-remote sends
 * `notifications/cancelled`) is answered 202 and shows in the trace as ignored, with why.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Runtime } from '../../lib/core/runtime';
import { META } from '../../lib/protocol/modern';
import { defineServer } from '../../lib/server/definition';
import { Server } from '../../lib/server/server';
import type { TraceEvent } from '../../lib/trace/types';
import { createMcpHttpHandler } from '../../transports/http/endpoint';
import { cleanups, listenHttp } from '../helpers/http';
import { mirroredHeaders, MODERN_VERSION, postModern } from '../helpers/modern-http';
import { eventually } from '../helpers/wait';
import { deferred } from '../helpers/fixtures';

const ENVELOPE = {
  [META.protocolVersion]: MODERN_VERSION,
  [META.clientCapabilities]: {},
  [META.clientInfo]: { name: 'raw', version: '1' },
};

let events: TraceEvent[] = [];
afterEach(() => {
  events = [];
});

async function tracedEndpoint() {
  const runtime = new Runtime();
  const subscription = runtime.trace$.subscribe((event) => events.push(event));
  cleanups.push(() => subscription.unsubscribe());
  const started = deferred();
  const stopped = deferred();
  const server = new Server(
    defineServer({
      name: 'ends',
      version: '1.0.0',
      tools: [
        {
          name: 'hang',
          inputSchema: { type: 'object' },
          handler: (_args, ctx) =>
            new Promise((_resolve, reject) => {
              started.resolve();
              ctx.signal.addEventListener('abort', () => {
                reject(ctx.signal.reason);
                stopped.resolve();
              });
            }),
        },
      ],
    }),
    { runtime },
  );
  const handler = createMcpHttpHandler(server);
  cleanups.push(() => handler.close());
  const { origin } = await listenHttp(handler);
  return { url: `${origin}/mcp`, started: started.promise, stopped: stopped.promise };
}

describe('the end of every stateless request shows in the trace', () => {
  it('traces a request cancelled by closing its stream as cancelled, then its answer withheld', async () => {
    const { url, started, stopped } = await tracedEndpoint();
    const abort = new AbortController();
    const params = { name: 'hang', arguments: {}, _meta: ENVELOPE };
    const posted = postModern(
      url,
      { jsonrpc: '2.0', id: 7, method: 'tools/call', params },
      mirroredHeaders('tools/call', params),
      abort.signal,
    ).catch(() => undefined);
    await started;
    abort.abort();
    await posted;
    await stopped;
    const request = events.find((event) => event.kind === 'request' && event.method === 'tools/call')!;
    await eventually(() => events.some((event) => event.kind === 'ignored'), 'the withheld answer in the trace');
    const mine = events.filter((event) => event.connection === request.connection);
    expect(mine.map((event) => [event.kind, event.direction, event.method])).toEqual([
      ['request', 'in', 'tools/call'],
      ['notification', 'in', 'notifications/cancelled'],
      ['ignored', 'out', 'tools/call'],
    ]);
    expect(mine[1]!.message).toMatchObject({ params: { requestId: 7 } });
    expect(mine[1]!.reason).toContain('closed the request');
  });

  it('traces a notifications/cancelled POSTed on its own, which nothing acts on, and answers it 202', async () => {
    const { url } = await tracedEndpoint();
    const notification = {
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 3, reason: 'gave up', _meta: ENVELOPE },
    };
    const response = await postModern(url, notification, { 'mcp-method': 'notifications/cancelled' });
    expect(response.status).toBe(202);
    const [event] = events.filter((seen) => seen.method === 'notifications/cancelled');
    expect(event).toMatchObject({ kind: 'notification', direction: 'in', message: notification });
    expect(event!.reason).toContain('cancelled by closing its stream');
  });
});
