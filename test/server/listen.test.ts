/**
 * `subscriptions/listen` (2026-07-28): the handler driven through real `RequestContext`s over a recording
 * host, fed by a real event bus and `SubscriptionHub`. Everything the handler emits is checked against the
 * official 2026-07-28 schema.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Observable, type Subscriber } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../lib/core/clock';
import { silentLogger } from '../../lib/core/logger';
import { RequestContext } from '../../lib/core/request-context';
import { McpError, RequestCancelledError } from '../../lib/jsonrpc/errors';
import type { JsonObject, RequestId } from '../../lib/jsonrpc/types';
import type { ServerCapabilities } from '../../lib/protocol/types';
import { InMemoryServerEventBus, LIST_CHANGED_EVENTS } from '../../lib/server/event-bus';
import { listen, ListenStreams, type ListenHost, type SubscriptionsListenResult } from '../../lib/server/listen';
import { ResourceCatalog, type ResourceDefinition, type ResourceTemplateDefinition } from '../../lib/server/resources';
import { SubscriptionHub, type ResourceSubscriber } from '../../lib/server/subscriptions';
import { handlerTable } from '../../lib/core/inbound-requests';
import { SESSION_HANDLERS } from '../../lib/server/handlers';
import { Server, ServerConnection } from '../../lib/server/server';
import { createMemoryPair } from '../../transports/memory';
import { createAjv } from '../helpers/ajv';
import { serverWith, tool } from '../helpers/fixtures';
import { RawPeer } from '../helpers/raw-peer';

const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';

// ---------------------------------------------------------------------------------------------------------
// The official 2026-07-28 schema: each notification by its method's definition, the result as a response.
const ajv = createAjv('2025-11-25');
ajv.addSchema(
  JSON.parse(readFileSync(fileURLToPath(new URL('../schemas/schema-2026-07-28.json', import.meta.url)), 'utf8')),
  'mcp2026',
);
const DEFINITION_OF_METHOD: Record<string, string> = {
  'notifications/subscriptions/acknowledged': 'SubscriptionsAcknowledgedNotification',
  'notifications/tools/list_changed': 'ToolListChangedNotification',
  'notifications/prompts/list_changed': 'PromptListChangedNotification',
  'notifications/resources/list_changed': 'ResourceListChangedNotification',
  'notifications/resources/updated': 'ResourceUpdatedNotification',
};
function schemaProblems(definition: string | undefined, value: unknown): unknown[] {
  if (!definition) return ['no schema definition'];
  const validate = ajv.getSchema(`mcp2026#/$defs/${definition}`)!;
  return validate(value) ? [] : (validate.errors ?? []);
}

/** Every schema problem of what the tests' hosts sent; none may remain after a test. */
const problems: unknown[] = [];
afterEach(() => {
  const found = problems.splice(0);
  expect(found).toEqual([]);
});

// ---------------------------------------------------------------------------------------------------------
interface Sent {
  readonly method: string;
  readonly params: any;
}

/** A connection that records what its requests notify (and schema-checks each notification). */
class RecordingHost implements ListenHost {
  readonly clock = systemClock;
  readonly logger = silentLogger;
  readonly protocolVersion = '2026-07-28';
  readonly peerCapabilities = {};
  readonly supportsProgressMessage = true;
  readonly sent: Sent[] = [];

  constructor(
    readonly capabilities: ServerCapabilities,
    readonly listenStreams: ListenStreams,
  ) {}

  notify(method: string, params?: JsonObject): Promise<void> {
    const message = { jsonrpc: '2.0', method, params };
    problems.push(...schemaProblems(DEFINITION_OF_METHOD[method], message));
    this.sent.push({ method, params });
    return Promise.resolve();
  }

  request(): Promise<JsonObject> {
    return Promise.reject(new Error('not used'));
  }

  log(): Promise<void> {
    return Promise.resolve();
  }

  streamCloser(): undefined {
    return undefined;
  }

  /** The first notification sent. */
  ack(): Sent {
    return this.sent[0]!;
  }

  /** The methods sent, in order. */
  methods(): string[] {
    return this.sent.map((sent) => sent.method);
  }
}

const ALL_DECLARED: ServerCapabilities = {
  tools: { listChanged: true },
  prompts: { listChanged: true },
  resources: { subscribe: true, listChanged: true },
};

const readme: ResourceDefinition = { uri: 'file:///readme.md', name: 'readme', read: () => 'hello' };
const logo: ResourceDefinition = { uri: 'file:///logo.png', name: 'logo', read: () => 'png' };

/** A resource whose change stream counts its subscribers and can be made to emit. */
function liveResource(uri: string) {
  const subscribers = new Set<Subscriber<unknown>>();
  const definition: ResourceDefinition = {
    uri,
    name: 'live',
    read: () => 'now',
    updates: new Observable((subscriber) => {
      subscribers.add(subscriber);
      return () => subscribers.delete(subscriber);
    }),
  };
  return {
    definition,
    subscribers,
    emit: (value?: string) => subscribers.forEach((subscriber) => subscriber.next(value)),
  };
}

/** A server's listen plumbing: bus, resource subscriptions and open streams, with one recording host. */
function setUp(
  options: { capabilities?: ServerCapabilities; resources?: ResourceDefinition[]; maxStreams?: number } = {},
) {
  const bus = new InMemoryServerEventBus();
  const catalog = new ResourceCatalog(options.resources ?? [readme, logo], []);
  const hub = new SubscriptionHub(() => catalog, silentLogger, bus);
  const streams = new ListenStreams(bus, () => hub, options.maxStreams);
  const host = new RecordingHost(options.capabilities ?? ALL_DECLARED, streams);
  return { bus, hub, streams, host };
}

interface Listening {
  readonly context: RequestContext<ListenHost>;
  readonly result: Promise<SubscriptionsListenResult>;
}

/** Opens a listen stream with request id `id` and `notifications` as its filter. */
function open(host: RecordingHost, notifications: unknown, id: RequestId = 7): Listening {
  const params = { notifications, _meta: {} } as JsonObject;
  const context = new RequestContext<ListenHost>(host, id, 'subscriptions/listen', params, 0, undefined, undefined);
  return { context, result: listen(context, params) };
}

/** The peer goes away (HTTP: the response stream closed; stdio: `notifications/cancelled`). */
function cancel({ context }: Listening): void {
  context.cancel(new RequestCancelledError('subscriptions/listen'));
}

function thrownBy(fn: () => unknown): McpError {
  try {
    fn();
  } catch (error) {
    return error as McpError;
  }
  throw new Error('expected a throw');
}

// ---------------------------------------------------------------------------------------------------------
describe('subscriptions/listen: the acknowledgement', () => {
  it('is the first notification, carrying the honoured filter', () => {
    const { host } = setUp();
    open(host, { toolsListChanged: true, promptsListChanged: true, resourceSubscriptions: [readme.uri] });
    expect(host.sent[0]).toEqual({
      method: 'notifications/subscriptions/acknowledged',
      params: {
        notifications: { toolsListChanged: true, promptsListChanged: true, resourceSubscriptions: [readme.uri] },
        _meta: { [SUBSCRIPTION_ID]: 7 },
      },
    });
  });

  it('leaves out list changes the server does not declare listChanged for', () => {
    const { host } = setUp({ capabilities: { tools: { listChanged: true }, prompts: {} } });
    open(host, { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true });
    expect(host.ack().params.notifications).toEqual({ toolsListChanged: true });
  });

  it('leaves out resource subscriptions when the server does not declare resources.subscribe', () => {
    const { host } = setUp({ capabilities: { resources: { listChanged: true } } });
    open(host, { resourcesListChanged: true, resourceSubscriptions: [readme.uri] });
    expect(host.ack().params.notifications).toEqual({ resourcesListChanged: true });
  });

  it('leaves out URIs the server does not serve, and names each served URI once', () => {
    const { host, hub } = setUp();
    open(host, { resourceSubscriptions: ['file:///nope', readme.uri, readme.uri] });
    expect(host.ack().params.notifications).toEqual({ resourceSubscriptions: [readme.uri] });
    expect(hub.size).toBe(1);
  });

  it('leaves out what was asked as false', () => {
    const { host } = setUp();
    open(host, { toolsListChanged: false, promptsListChanged: true });
    expect(host.ack().params.notifications).toEqual({ promptsListChanged: true });
  });
});

describe('subscriptions/listen: what the stream carries', () => {
  it('sends each list change the filter asks for, in the order published', () => {
    const { host, bus } = setUp();
    open(host, { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true });
    bus.publish(LIST_CHANGED_EVENTS.tools);
    bus.publish(LIST_CHANGED_EVENTS.prompts);
    bus.publish(LIST_CHANGED_EVENTS.resources);
    expect(host.methods()).toEqual([
      'notifications/subscriptions/acknowledged',
      'notifications/tools/list_changed',
      'notifications/prompts/list_changed',
      'notifications/resources/list_changed',
    ]);
  });

  it('sends no list change the filter did not ask for', () => {
    const { host, bus } = setUp();
    open(host, { promptsListChanged: true });
    bus.publish(LIST_CHANGED_EVENTS.tools);
    bus.publish(LIST_CHANGED_EVENTS.resources);
    expect(host.methods()).toEqual(['notifications/subscriptions/acknowledged']);
  });

  it('sends no list change the server does not declare, even when asked', () => {
    const { host, bus } = setUp({ capabilities: { tools: {} } });
    open(host, { toolsListChanged: true });
    bus.publish(LIST_CHANGED_EVENTS.tools);
    expect(host.methods()).toEqual(['notifications/subscriptions/acknowledged']);
  });

  it('tags every notification with the listen request id as its subscriptionId', () => {
    const { host, bus, hub } = setUp();
    open(host, { toolsListChanged: true, resourceSubscriptions: [readme.uri] }, 'listen-a');
    bus.publish(LIST_CHANGED_EVENTS.tools);
    hub.publish(readme.uri);
    expect(host.sent).toHaveLength(3);
    for (const { params } of host.sent) expect(params._meta).toEqual({ [SUBSCRIPTION_ID]: 'listen-a' });
  });

  it('tags each stream with its own id when several are open', () => {
    const { host, bus } = setUp();
    open(host, { toolsListChanged: true }, 1);
    open(host, { toolsListChanged: true }, 2);
    bus.publish(LIST_CHANGED_EVENTS.tools);
    const ids = host.sent
      .filter((sent) => sent.method === 'notifications/tools/list_changed')
      .map((sent) => sent.params._meta[SUBSCRIPTION_ID]);
    expect(ids).toEqual([1, 2]);
  });

  it('sends resource updates for the subscribed URIs only', () => {
    const { host, hub } = setUp();
    open(host, { resourceSubscriptions: [readme.uri] });
    hub.publish(logo.uri);
    hub.publish(readme.uri);
    expect(host.sent.slice(1)).toEqual([
      { method: 'notifications/resources/updated', params: { uri: readme.uri, _meta: { [SUBSCRIPTION_ID]: 7 } } },
    ]);
  });

  it('names the changed sub-resource of a subscribed URI', () => {
    const { host, hub } = setUp();
    open(host, { resourceSubscriptions: [readme.uri] });
    hub.publish(readme.uri, 'file:///readme.md#intro');
    expect(host.sent[1]!.params.uri).toBe('file:///readme.md#intro');
  });

  it("forwards what a resource's own change stream emits", () => {
    const live = liveResource('file:///live.txt');
    const { host } = setUp({ resources: [live.definition] });
    open(host, { resourceSubscriptions: [live.definition.uri] });
    live.emit();
    expect(host.sent[1]).toMatchObject({
      method: 'notifications/resources/updated',
      params: { uri: live.definition.uri },
    });
  });
});

describe('subscriptions/listen: the end of a stream', () => {
  it('stops following the bus when the requester cancels', () => {
    const { host, bus, streams } = setUp();
    const stream = open(host, { toolsListChanged: true });
    expect(bus.subscriberCount).toBe(1);
    cancel(stream);
    expect(bus.subscriberCount).toBe(0);
    expect(streams.size).toBe(0);
  });

  it('sends nothing once cancelled', () => {
    const { host, bus, hub } = setUp();
    const stream = open(host, { toolsListChanged: true, resourceSubscriptions: [readme.uri] });
    cancel(stream);
    bus.publish(LIST_CHANGED_EVENTS.tools);
    hub.publish(readme.uri);
    expect(host.methods()).toEqual(['notifications/subscriptions/acknowledged']);
  });

  it("follows a resource's change stream only while a stream wants it", () => {
    const live = liveResource('file:///live.txt');
    const { host, hub } = setUp({ resources: [live.definition] });
    const stream = open(host, { resourceSubscriptions: [live.definition.uri] });
    expect(live.subscribers.size).toBe(1);
    cancel(stream);
    expect(live.subscribers.size).toBe(0);
    expect(hub.size).toBe(0);
  });

  it('shares one follow of a change stream between a legacy subscriber and listen streams', () => {
    const live = liveResource('file:///live.txt');
    const { host, hub } = setUp({ resources: [live.definition] });
    const legacy = legacySubscriber();
    hub.subscribe(legacy, live.definition.uri);
    const first = open(host, { resourceSubscriptions: [live.definition.uri] }, 1);
    const second = open(host, { resourceSubscriptions: [live.definition.uri] }, 2);
    cancel(first);
    cancel(second);
    expect(live.subscribers.size).toBe(1);
    hub.unsubscribe(legacy, live.definition.uri);
    expect(live.subscribers.size).toBe(0);
  });

  it('tells a legacy subscriber and a listen stream of the same change', () => {
    const live = liveResource('file:///live.txt');
    const { host, hub } = setUp({ resources: [live.definition] });
    const legacy = legacySubscriber();
    hub.subscribe(legacy, live.definition.uri);
    open(host, { resourceSubscriptions: [live.definition.uri] });
    live.emit();
    expect(legacy.sent).toEqual([{ method: 'notifications/resources/updated', params: { uri: live.definition.uri } }]);
    expect(host.methods()).toEqual(['notifications/subscriptions/acknowledged', 'notifications/resources/updated']);
  });

  it('answers the complete result, tagged with the subscription id, when the server closes the streams', async () => {
    const { host, streams } = setUp();
    const stream = open(host, { toolsListChanged: true }, 'listen-b');
    void streams.close();
    const result = await stream.result;
    expect(result).toEqual({ resultType: 'complete', _meta: { [SUBSCRIPTION_ID]: 'listen-b' } });
    problems.push(...schemaProblems('SubscriptionsListenResultResponse', { jsonrpc: '2.0', id: 'listen-b', result }));
  });

  it('stops following the bus and the resources when the server closes the streams', () => {
    const live = liveResource('file:///live.txt');
    const { host, bus, hub, streams } = setUp({ resources: [live.definition] });
    open(host, { toolsListChanged: true, resourceSubscriptions: [live.definition.uri] }, 1);
    open(host, { promptsListChanged: true }, 2);
    void streams.close();
    expect([bus.subscriberCount, hub.size, live.subscribers.size, streams.size]).toEqual([0, 0, 0, 0]);
  });

  it('stays pending while neither side ends it', async () => {
    const { host } = setUp();
    const stream = open(host, { toolsListChanged: true });
    const outcome = await Promise.race([stream.result, new Promise((resolve) => setImmediate(resolve, 'pending'))]);
    expect(outcome).toBe('pending');
    cancel(stream);
  });
});

describe('subscriptions/listen: a change stream that cannot be followed', () => {
  function failingTemplateServer() {
    const bus = new InMemoryServerEventBus();
    const failing: ResourceTemplateDefinition = {
      uriTemplate: 'notes://{id}',
      name: 'notes',
      read: () => 'note',
      updates: () => {
        throw new Error('no change feed today');
      },
    };
    const catalog = new ResourceCatalog([readme], [failing]);
    const hub = new SubscriptionHub(() => catalog, silentLogger, bus);
    const streams = new ListenStreams(bus, () => hub);
    return { bus, hub, streams, host: new RecordingHost(ALL_DECLARED, streams) };
  }

  it('fails the listen request with the error', () => {
    const { host } = failingTemplateServer();
    const error = thrownBy(() => open(host, { resourceSubscriptions: [readme.uri, 'notes://1'] }));
    expect((error as Error).message).toBe('no change feed today');
  });

  it('leaves nothing open behind', () => {
    const { host, bus, hub, streams } = failingTemplateServer();
    thrownBy(() => open(host, { toolsListChanged: true, resourceSubscriptions: [readme.uri, 'notes://1'] }));
    expect([host.sent.length, bus.subscriberCount, hub.size, streams.size]).toEqual([0, 0, 0, 0]);
  });
});

describe('subscriptions/listen: capacity', () => {
  it('refuses a stream beyond the limit with -32603 naming it', () => {
    const { host } = setUp({ maxStreams: 2 });
    open(host, { toolsListChanged: true }, 1);
    open(host, { toolsListChanged: true }, 2);
    const error = thrownBy(() => open(host, { toolsListChanged: true }, 3));
    expect(error).toBeInstanceOf(McpError);
    expect(error.code).toBe(-32603);
    expect(error.message).toContain('limit 2');
  });

  it('accepts a stream again once one has ended', () => {
    const { host, streams } = setUp({ maxStreams: 1 });
    cancel(open(host, { toolsListChanged: true }, 1));
    open(host, { toolsListChanged: true }, 2);
    expect(streams.size).toBe(1);
  });
});

describe('subscriptions/listen: malformed filters', () => {
  const cases: [string, unknown, string][] = [
    ['no filter', undefined, '"notifications" object'],
    ['a filter that is an array', [], '"notifications" object'],
    ['a flag that is not a boolean', { toolsListChanged: 'yes' }, 'notifications.toolsListChanged'],
    ['URIs that are not an array', { resourceSubscriptions: 'file:///readme.md' }, 'resourceSubscriptions'],
    ['a URI that is not a string', { resourceSubscriptions: [readme.uri, 42] }, 'resourceSubscriptions'],
  ];
  for (const [name, notifications, fragment] of cases) {
    it(`answers -32602 to ${name}, naming what is wrong`, () => {
      const { host } = setUp();
      const error = thrownBy(() => open(host, notifications));
      expect([error.code, error.message]).toEqual([-32602, expect.stringContaining(fragment)]);
    });
  }

  it('opens nothing and sends nothing for a malformed filter', () => {
    const { host, bus, streams } = setUp();
    thrownBy(() => open(host, { promptsListChanged: 1 }));
    expect([host.sent.length, bus.subscriberCount, streams.size]).toEqual([0, 0, 0]);
  });
});

describe('InMemoryServerEventBus', () => {
  it('delivers what is published to each observer, synchronously', () => {
    const bus = new InMemoryServerEventBus();
    const heard: string[] = [];
    bus.subscribe({ next: (event) => heard.push(`a:${event.kind}`) });
    bus.subscribe({ next: (event) => heard.push(`b:${event.kind}`) });
    bus.publish(LIST_CHANGED_EVENTS.tools);
    expect(heard).toEqual(['a:toolsListChanged', 'b:toolsListChanged']);
  });

  it('counts its observers until they unsubscribe', () => {
    const bus = new InMemoryServerEventBus();
    const subscription = bus.subscribe({});
    expect(bus.subscriberCount).toBe(1);
    subscription.unsubscribe();
    subscription.unsubscribe();
    expect(bus.subscriberCount).toBe(0);
  });
});

/** A legacy session as the hub sees it, recording what it is told. */
function legacySubscriber(): ResourceSubscriber & { sent: Sent[] } {
  const sent: Sent[] = [];
  return {
    state: 'ready',
    logger: silentLogger,
    sent,
    notify: (method, params) => {
      sent.push({ method, params });
      return Promise.resolve();
    },
  };
}

/** A legacy session that also serves `subscriptions/listen` (as an extension method): the real request path. */
class ListeningConnection extends ServerConnection {
  protected override readonly handlers = handlerTable<any>({ ...SESSION_HANDLERS, 'subscriptions/listen': listen });

  constructor(
    server: Server,
    readonly listenStreams: ListenStreams,
  ) {
    super(server);
  }
}

describe('subscriptions/listen over a connection', () => {
  async function connected() {
    const bus = new InMemoryServerEventBus();
    const server = new Server(serverWith([tool('echo')]));
    const streams = new ListenStreams(bus, () => server.subscriptions);
    const [peerSide, serverSide] = createMemoryPair();
    const connection = new ListeningConnection(server, streams).start(serverSide);
    const peer = new RawPeer(peerSide);
    await peer.initialize();
    await peer.send({
      jsonrpc: '2.0',
      id: 'L1',
      method: 'subscriptions/listen',
      params: { notifications: { toolsListChanged: true } },
    });
    const ack = await peer.next();
    return { bus, streams, connection, peer, ack };
  }

  it('acknowledges, then forwards, on the request stream', async () => {
    const { bus, connection, peer, ack } = await connected();
    bus.publish(LIST_CHANGED_EVENTS.tools);
    const change = await peer.next();
    for (const message of [ack, change])
      problems.push(...schemaProblems(DEFINITION_OF_METHOD[message.method], message));
    expect([ack.method, change.method, change.params._meta[SUBSCRIPTION_ID]]).toEqual([
      'notifications/subscriptions/acknowledged',
      'notifications/tools/list_changed',
      'L1',
    ]);
    await connection.close();
  });

  it('ends the stream on notifications/cancelled, answering nothing', async () => {
    const { bus, streams, connection, peer } = await connected();
    await peer.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'L1' } });
    const after = await peer.drain();
    expect([bus.subscriberCount, streams.size, after]).toEqual([0, 0, []]);
    await connection.close();
  });

  it('answers the complete result when the server closes the streams', async () => {
    const { streams, connection, peer } = await connected();
    await streams.close();
    await connection.close();
    const response = await peer.next();
    problems.push(...schemaProblems('SubscriptionsListenResultResponse', response));
    expect(response).toEqual({
      jsonrpc: '2.0',
      id: 'L1',
      result: { resultType: 'complete', _meta: { [SUBSCRIPTION_ID]: 'L1' } },
    });
    await connection.close();
  });

  it('ends the stream when the connection closes', async () => {
    const { bus, streams, connection } = await connected();
    await connection.close();
    expect([bus.subscriberCount, streams.size]).toEqual([0, 0]);
  });
});
