/**
 * `subscriptions/listen` as an Observable (lib/client/listen.ts): what it sends, which notifications it
 * passes on (those naming its request's id as subscription id), how it ends, and that unsubscribing cancels
 * the request. First against a scripted host, then a `Client` against a raw server over a memory pair (the
 * request id reaches the stream through `SendOptions.onId`).
 */
import { readFileSync } from 'node:fs';
import { Subject, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { Client } from '../../lib/client/client';
import {
  acknowledgedFilter,
  listen,
  LISTEN_ACKNOWLEDGED,
  type ListenFilter,
  type ListenHost,
  type ListenRequestOptions,
} from '../../lib/client/listen';
import { ConnectionClosedError, McpError, PeerError, type ClosedConnectionReason } from '../../lib/jsonrpc/errors';
import type { JsonObject, JsonRpcNotification, RequestId } from '../../lib/jsonrpc/types';
import { META } from '../../lib/protocol/modern';
import { createMemoryPair } from '../../transports/memory';
import { createAjv } from '../helpers/ajv';
import { RawPeer } from '../helpers/raw-peer';

const SCHEMA_ID = 'schema-2026-07-28';
const ajv = createAjv('2025-11-25');
ajv.addSchema(
  JSON.parse(readFileSync(new URL('../schemas/schema-2026-07-28.json', import.meta.url), 'utf8')),
  SCHEMA_ID,
);

const tagged = (method: string, subscriptionId: RequestId, params: JsonObject = {}): JsonRpcNotification => ({
  jsonrpc: '2.0',
  method,
  params: { ...params, _meta: { [META.subscriptionId]: subscriptionId } },
});
const ack = (id: RequestId, notifications: JsonObject = { toolsListChanged: true }) =>
  tagged(LISTEN_ACKNOWLEDGED, id, { notifications });
const toolsChanged = (id: RequestId) => tagged('notifications/tools/list_changed', id);

/** A host whose requests the test settles; ids count from 1. */
function scriptedHost() {
  const notifications = new Subject<JsonRpcNotification>();
  let endConnection!: (reason: ClosedConnectionReason) => void;
  const closed = new Promise<ClosedConnectionReason>((resolve) => (endConnection = resolve));
  const requests: {
    id: RequestId;
    method: string;
    params: JsonObject;
    options: ListenRequestOptions;
    resolve: (result: JsonObject) => void;
    reject: (error: unknown) => void;
  }[] = [];
  let nextId = 1;
  const host: ListenHost = {
    notifications$: notifications,
    closed,
    request: (method, params, options) =>
      new Promise((resolve, reject) => {
        const id = nextId++;
        options.onId(id);
        requests.push({ id, method, params, options, resolve, reject });
      }),
  };
  return { host, notifications, requests, endConnection };
}

/** Subscribes and records what the stream does. */
function record(stream: Observable<JsonRpcNotification>) {
  const seen: JsonRpcNotification[] = [];
  const outcome: { completed: boolean; error?: unknown } = { completed: false };
  const subscription = stream.subscribe({
    next: (notification) => seen.push(notification),
    complete: () => (outcome.completed = true),
    error: (error) => (outcome.error = error),
  });
  return { seen, outcome, subscription };
}

const settle = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

describe('listen (scripted host)', () => {
  it('sends nothing until subscribed', () => {
    const { host, requests } = scriptedHost();
    listen(host, { toolsListChanged: true });
    expect(requests).toEqual([]);
  });

  it('sends subscriptions/listen with the kinds asked for, and only those', () => {
    const { host, requests } = scriptedHost();
    record(listen(host, { toolsListChanged: true, resourceSubscriptions: ['file:///a'] }));
    expect([requests[0]!.method, requests[0]!.params]).toEqual([
      'subscriptions/listen',
      { notifications: { toolsListChanged: true, resourceSubscriptions: ['file:///a'] } },
    ]);
  });

  it('waits for the stream for as long as it is wanted (no request timeout)', () => {
    const { host, requests } = scriptedHost();
    record(listen(host, { promptsListChanged: true }));
    expect(requests[0]!.options.timeout).toBe(0);
  });

  it('sends params that are valid SubscriptionsListenRequestParams once the envelope is on', () => {
    const { host, requests } = scriptedHost();
    const filter: ListenFilter = {
      toolsListChanged: true,
      promptsListChanged: false,
      resourcesListChanged: true,
      resourceSubscriptions: ['file:///a', 'file:///b'],
    };
    record(listen(host, filter));
    const params = {
      ...requests[0]!.params,
      _meta: {
        [META.protocolVersion]: '2026-07-28',
        [META.clientCapabilities]: {},
        [META.clientInfo]: { name: 'c', version: '1' },
      },
    };
    const validate = ajv.getSchema(`${SCHEMA_ID}#/$defs/SubscriptionsListenRequestParams`)!;
    expect([validate(params), validate.errors ?? []]).toEqual([true, []]);
  });

  it("passes on the stream's notifications, the acknowledgement first", () => {
    const { host, notifications, requests } = scriptedHost();
    const { seen } = record(listen(host, { toolsListChanged: true }));
    const id = requests[0]!.id;
    notifications.next(ack(id));
    notifications.next(toolsChanged(id));
    expect(seen).toEqual([ack(id), toolsChanged(id)]);
  });

  it('ignores notifications of other streams and notifications that name no stream', () => {
    const { host, notifications, requests } = scriptedHost();
    const { seen } = record(listen(host, { toolsListChanged: true }));
    notifications.next(toolsChanged((requests[0]!.id as number) + 100));
    notifications.next(toolsChanged(String(requests[0]!.id)));
    notifications.next({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    expect(seen).toEqual([]);
  });

  it('gives each subscriber its own stream', () => {
    const { host, notifications, requests } = scriptedHost();
    const stream = listen(host, { toolsListChanged: true });
    const first = record(stream);
    const second = record(stream);
    notifications.next(toolsChanged(requests[1]!.id));
    expect([requests.length, first.seen.length, second.seen.length]).toEqual([2, 0, 1]);
  });

  it('completes when the server ends the stream with a result', async () => {
    const { host, requests } = scriptedHost();
    const { outcome } = record(listen(host, { toolsListChanged: true }));
    requests[0]!.resolve({ resultType: 'complete', _meta: { [META.subscriptionId]: requests[0]!.id } });
    await settle();
    expect(outcome).toEqual({ completed: true });
  });

  it("errors with the server's error response", async () => {
    const { host, requests } = scriptedHost();
    const { outcome } = record(listen(host, { toolsListChanged: true }));
    const refusal = new PeerError(-32601, 'Method not found');
    requests[0]!.reject(refusal);
    await settle();
    expect(outcome.error).toBe(refusal);
  });

  it('cancels the listen request when the last subscriber leaves', () => {
    const { host, requests } = scriptedHost();
    record(listen(host, { toolsListChanged: true })).subscription.unsubscribe();
    expect(requests[0]!.options.signal.aborted).toBe(true);
  });

  it('cancels nothing when unsubscribed after the server ended the stream', async () => {
    const { host, requests } = scriptedHost();
    const { subscription } = record(listen(host, { toolsListChanged: true }));
    requests[0]!.resolve({ resultType: 'complete' });
    await settle();
    subscription.unsubscribe();
    expect(requests[0]!.options.signal.aborted).toBe(false);
  });

  it('completes when the client was closed on purpose', async () => {
    const { host, requests, endConnection } = scriptedHost();
    const { outcome } = record(listen(host, { toolsListChanged: true }));
    requests[0]!.reject(new ConnectionClosedError('Connection closed: closed'));
    endConnection({ kind: 'local-close', message: 'closed' });
    await settle();
    expect(outcome).toEqual({ completed: true });
  });

  it('errors with ConnectionClosedError carrying the quit reason when the connection died', async () => {
    const { host, requests, endConnection } = scriptedHost();
    const { outcome } = record(listen(host, { toolsListChanged: true }));
    const reason = { kind: 'transport-closed', message: 'The transport closed' };
    requests[0]!.reject(new ConnectionClosedError('Connection closed: The transport closed'));
    endConnection(reason);
    await settle();
    expect([
      outcome.error instanceof ConnectionClosedError,
      (outcome.error as ConnectionClosedError).quitReason,
    ]).toEqual([true, reason]);
  });
});

describe('acknowledgedFilter', () => {
  it('reads the kinds the server agreed to honour', () => {
    expect(acknowledgedFilter(ack(1, { toolsListChanged: true }))).toEqual({ toolsListChanged: true });
  });

  it('reads nothing from another notification', () => {
    expect(acknowledgedFilter(toolsChanged(1))).toBeUndefined();
  });
});

describe('listen on a Client', () => {
  async function connected() {
    const [clientSide, serverSide] = createMemoryPair();
    const server = new RawPeer(serverSide);
    const client = new Client({ name: 'c', version: '1' });
    const connecting = client.connect(clientSide);
    const initialize = await server.next();
    await server.send({
      jsonrpc: '2.0',
      id: initialize.id,
      result: { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 'raw', version: '1' } },
    });
    await connecting;
    await server.next(); // notifications/initialized
    return { client, server };
  }

  it('hears the notifications naming its request id', async () => {
    const { client, server } = await connected();
    const seen: JsonRpcNotification[] = [];
    const subscription = listen(client, { toolsListChanged: true }).subscribe((notification) =>
      seen.push(notification),
    );
    const request = await server.next();
    await server.send(ack(request.id));
    await server.send(toolsChanged(request.id + 1));
    await server.send(toolsChanged(request.id));
    await server.drain();
    expect(seen.map((notification) => notification.method)).toEqual([
      LISTEN_ACKNOWLEDGED,
      'notifications/tools/list_changed',
    ]);
    subscription.unsubscribe();
    await client.close();
  });

  it('sends notifications/cancelled for its request on unsubscribe', async () => {
    const { client, server } = await connected();
    const subscription = listen(client, { resourcesListChanged: true }).subscribe();
    const request = await server.next();
    subscription.unsubscribe();
    const cancelled = await server.next();
    expect([cancelled.method, cancelled.params.requestId]).toEqual(['notifications/cancelled', request.id]);
    await client.close();
  });

  it('errors with the McpError the server answers', async () => {
    const { client, server } = await connected();
    const failure = new Promise<unknown>((resolve) =>
      listen(client, { toolsListChanged: true }).subscribe({ error: resolve }),
    );
    const request = await server.next();
    await server.send({ jsonrpc: '2.0', id: request.id, error: { code: -32601, message: 'Method not found' } });
    const error = await failure;
    expect([error instanceof McpError, (error as McpError).code]).toEqual([true, -32601]);
    await client.close();
  });

  it('completes when the client closes', async () => {
    const { client, server } = await connected();
    const done = new Promise<string>((resolve) =>
      listen(client, { toolsListChanged: true }).subscribe({
        complete: () => resolve('completed'),
        error: () => resolve('errored'),
      }),
    );
    await server.next();
    await client.close();
    expect(await done).toBe('completed');
  });
});
