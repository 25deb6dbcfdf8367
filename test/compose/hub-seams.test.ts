/**
 * The seams the hub is built on, each through a real hop: the hub follows its downstream connections
 * through their events (a new log level, roots that changed) and cancels each forwarded call through its
 * downstream request's `onCancel`. Upstreams run in process over their memory connection (`direct: false`),
 * so the upstream sees real messages; each test waits on the upstream's own events, not on wall time.
 */
import { concat, filter, firstValueFrom, from, NEVER, ReplaySubject, Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { Hub } from '../../lib/compose/hub';
import type { UpstreamOptions } from '../../lib/compose/upstream';
import { CallsInFlight } from '../../lib/compose/upstream-calls';
import { systemClock } from '../../lib/core/clock';
import { silentLogger } from '../../lib/core/logger';
import { RequestContext, type RequestHost } from '../../lib/core/request-context';
import type { Transport } from '../../lib/core/transport';
import { ConnectionClosedError, RequestCancelledError } from '../../lib/jsonrpc/errors';
import type { InboundFrame } from '../../lib/jsonrpc/types';
import type { LoggingLevel } from '../../lib/protocol/types';
import type { ServerContext } from '../../lib/server/context';
import { Server, type ServerConnection } from '../../lib/server/server';
import { serverWith, tool } from '../helpers/fixtures';
import { cleanups, within } from '../helpers/http';
import { connectToHub } from '../helpers/hub';
import { validateEmitted } from '../helpers/pair';
import { firstText, text } from '../helpers/content';

/** An upstream server that reports what its connections hear, through the `onConnection` seam of `Server`. */
class WatchedServer extends Server {
  /** Each level a connection was told (`logging/setLevel`), once applied. */
  readonly levels$ = new ReplaySubject<LoggingLevel>();
  /** Each `notifications/roots/list_changed` a connection received. */
  readonly rootsChanged$ = new Subject<void>();
  /** Each tool call's signal, as the upstream's handler sees it. */
  readonly calls$ = new ReplaySubject<AbortSignal>();

  constructor() {
    super(
      serverWith([
        tool('roots', async (_args, context) => text(JSON.stringify((await context.listRoots()).map((r) => r.uri)))),
        tool('wait', async (_args, context) => {
          this.calls$.next(context.signal);
          await new Promise((resolve) => context.signal.addEventListener('abort', resolve));
          return text('stopped');
        }),
      ]),
    );
  }

  protected override onConnection(connection: ServerConnection): void {
    connection.events.on('logLevelChanged', (level) => this.levels$.next(level));
    connection.notifications$
      .pipe(filter((message) => message.method === 'notifications/roots/list_changed'))
      .subscribe(() => this.rootsChanged$.next());
  }
}

async function startHub(upstream: Partial<UpstreamOptions> & { server: Server }) {
  const { server, ...options } = upstream;
  const hub = new Hub({
    logger: silentLogger,
    upstreams: [{ name: 'up', source: { kind: 'in-process', server, direct: false }, ...options }],
    onUpstreamClient: (_name, client) => validateEmitted(client),
  });
  cleanups.push(() => hub.close());
  await hub.start();
  return hub;
}

describe('the log level, from the downstream connections’ events', () => {
  it('asks the upstream for the default level once a client connects', async () => {
    const upstream = new WatchedServer();
    const hub = await startHub({ server: upstream });
    await connectToHub(hub);
    expect(await within(firstValueFrom(upstream.levels$), 'the upstream to be told a level')).toBe('info');
  });

  it('asks the upstream for a more verbose level as soon as a client sets it', async () => {
    const upstream = new WatchedServer();
    const hub = await startHub({ server: upstream });
    const client = await connectToHub(hub);
    const debug = firstValueFrom(upstream.levels$.pipe(filter((level) => level === 'debug')));
    await client.setLoggingLevel('debug');
    expect(await within(debug, 'the upstream to be told debug')).toBe('debug');
  });
});

describe('roots, from the downstream connections’ events', () => {
  it('offers a per-client instance its own client’s new roots', async () => {
    const upstream = new WatchedServer();
    const hub = await startHub({ server: upstream, instance: 'per-client' });
    const client = await connectToHub(hub, { roots: [{ uri: 'file:///work/first' }] });
    expect(firstText(await client.callTool('roots'))).toBe('["file:///work/first"]');
    const told = firstValueFrom(upstream.rootsChanged$);
    await client.setRoots([{ uri: 'file:///work/second' }]);
    await within(told, 'the instance to hear that the roots changed');
    expect(firstText(await client.callTool('roots'))).toBe('["file:///work/second"]');
  });
});

describe('cancellation, through onCancel', () => {
  it('aborts the upstream handler’s signal when the downstream client cancels its call', async () => {
    const upstream = new WatchedServer();
    const hub = await startHub({ server: upstream });
    const client = await connectToHub(hub);
    const abort = new AbortController();
    const call = client.callTool('wait', {}, { signal: abort.signal }).catch((error: Error) => error);
    const signal = await within(firstValueFrom(upstream.calls$), 'the call to reach the upstream');
    const aborted = new Promise((resolve) => signal.addEventListener('abort', resolve));
    abort.abort();
    expect(await call).toBeInstanceOf(RequestCancelledError);
    await within(aborted, 'the upstream handler to be cancelled');
    expect(signal.reason).toBeInstanceOf(RequestCancelledError);
  });

  it('aborts the upstream handler’s signal when the downstream connection closes', async () => {
    const upstream = new WatchedServer();
    const hub = await startHub({ server: upstream });
    const client = await connectToHub(hub);
    const call = client.callTool('wait').catch((error: Error) => error);
    const signal = await within(firstValueFrom(upstream.calls$), 'the call to reach the upstream');
    const aborted = new Promise((resolve) => signal.addEventListener('abort', resolve));
    await client.close();
    expect(await call).toBeInstanceOf(ConnectionClosedError);
    await within(aborted, 'the upstream handler to be cancelled');
    expect(hub.upstream('up')!.client!.pendingRequestCount).toBe(0);
  });

  it('never lets a finished call’s downstream request abort the next call’s upstream request', () => {
    const calls = new CallsInFlight(systemClock);
    const [first, second] = [contextFor(1), contextFor(2)];
    const firstCancel = calls.cancelWith(first);
    calls.begin(first);
    calls.end(first, firstCancel);
    const secondCancel = calls.cancelWith(second);
    calls.begin(second);
    first.cancel(new RequestCancelledError('tools/call', 'late'));
    expect(secondCancel.signal.aborted).toBe(false);
  });
});

describe('Server.onConnection', () => {
  it('shows a subclass each connection before the connection reads its first message', async () => {
    const heard: string[] = [];
    class Watching extends Server {
      protected override onConnection(connection: ServerConnection): void {
        connection.events.on('rootsChanged', () => heard.push('rootsChanged'));
      }
    }
    // Delivers the handshake synchronously, on subscription: a listener added after `connect` would miss it.
    const transport: Transport = {
      messages: concat(from(HANDSHAKE), NEVER),
      send: async () => undefined,
      close: async () => undefined,
    };
    const connection = new Watching(serverWith([tool('echo')])).connect(transport);
    cleanups.push(() => connection.close());
    expect(heard).toEqual(['rootsChanged']);
  });
});

const HANDSHAKE: InboundFrame[] = [
  {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: {
      protocolVersion: '2025-06-18',
      capabilities: { roots: {} },
      clientInfo: { name: 'raw', version: '1' },
    },
  },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
];

/** A downstream request's context on a connection that does nothing (the bookkeeping alone is tested). */
function contextFor(id: number): ServerContext {
  const host = {
    clock: systemClock,
    logger: silentLogger,
    protocolVersion: '2025-06-18',
    peerCapabilities: {},
    supportsProgressMessage: true,
  } as unknown as RequestHost;
  return new RequestContext(host, id, 'tools/call', {}, 0, undefined, undefined) as unknown as ServerContext;
}
