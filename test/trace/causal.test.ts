/**
 * Causal traces (issue 27, item 1): a request made for another request names it in its trace event's `cause`.
 * A server's elicitation during a call serves that call; a hub's upstream request is forwarded for the
 * downstream request that caused it, whether that came on a handshake-era session or as a stateless request
 * over HTTP (whose events carry an `x…` id of their own).
 */
import { describe, expect, it } from 'vitest';
import { Client } from '../../lib/client/client';
import { Hub } from '../../lib/compose/hub';
import { defineServer } from '../../lib/server/definition';
import { Server } from '../../lib/server/server';
import { formatTraceEvent } from '../../lib/trace/format';
import { createMemoryPair } from '../../transports/memory';
import { createMcpHttpHandler } from '../../transports/http/endpoint';
import { StreamableHttpClientTransport } from '../../transports/http/streamable-client';
import { cleanups, listenHttp } from '../helpers/http';
import { askName } from '../helpers/fixtures';
import { text } from '../helpers/content';
import { traceRecording } from '../helpers/trace-recording';

const definition = defineServer({
  name: 'causal',
  version: '1.0.0',
  tools: [
    { name: 'echo', inputSchema: { type: 'object' }, handler: (args) => text(JSON.stringify(args)) },
    {
      name: 'greet',
      inputSchema: { type: 'object' },
      handler: async (_args, ctx) => text(`Hello, ${String((await askName(ctx)).name)}`),
    },
  ],
});

const { events, recording } = traceRecording();

const requestsOut = (method: string) =>
  events.filter((event) => event.kind === 'request' && event.direction === 'out' && event.method === method);
const requestIn = (method: string, role: 'client' | 'server') =>
  events.find(
    (event) => event.kind === 'request' && event.direction === 'in' && event.method === method && event.role === role,
  )!;

describe('causal trace events', () => {
  it('names the call a server-to-client request serves', async () => {
    const runtime = recording();
    const server = new Server(definition, { runtime });
    const [clientSide, serverSide] = createMemoryPair();
    server.connect(serverSide);
    const client = new Client(
      { name: 'c', version: '1' },
      { era: 'handshake', runtime, elicitation: { form: () => ({ action: 'accept', content: { name: 'Ada' } }) } },
    );
    cleanups.push(() => client.close());
    await client.connect(clientSide);
    await client.callTool('greet', {});
    const call = requestIn('tools/call', 'server');
    const [ask] = requestsOut('elicitation/create');
    expect(ask!.cause).toEqual({ connection: call.connection, id: call.id, kind: 'serves' });
    expect(requestsOut('tools/call')[0]!.cause).toBeUndefined();
    expect(formatTraceEvent(ask!)).toContain(
      `request elicitation/create #${ask!.id} (causal) [serves ${call.connection} #${call.id}]`,
    );
  });

  // `handshake` and `modern` over a memory pair; `http`: the stateless revision over HTTP (no connection).
  it.each(['handshake', 'modern', 'http'] as const)(
    'names the downstream request a hub forwards upstream (downstream: %s)',
    async (era) => {
      const runtime = recording();
      const upstream = new Server(definition, { runtime });
      const hub = new Hub({
        runtime,
        upstreams: [{ name: 'up', source: { kind: 'in-process', server: upstream, direct: false } }],
      });
      cleanups.push(() => hub.close());
      await hub.start();
      const client = new Client({ name: 'down', version: '1' }, { era: era === 'http' ? 'modern' : era });
      cleanups.push(() => client.close());
      if (era !== 'http') {
        const [clientSide, hubSide] = createMemoryPair();
        hub.connect(hubSide);
        await client.connect(clientSide);
      } else {
        const handler = createMcpHttpHandler(hub.server);
        cleanups.push(() => handler.close());
        const { origin } = await listenHttp(handler);
        await client.connect(new StreamableHttpClientTransport(`${origin}/mcp`));
      }
      await client.callTool('echo', { n: 1 });
      const downstream = requestIn('tools/call', 'server');
      const forwarded = requestsOut('tools/call').find((event) => event.upstream === 'up')!;
      expect(forwarded.cause).toEqual({ connection: downstream.connection, id: downstream.id, kind: 'forwarded' });
    },
  );
});
