/**
 * The interop suite, part 5: what only the stateless revision 2026-07-28 has: the era the SDK settles on,
 * the server's identity on every result, the log level each request names in its `_meta`, input_required
 * rounds and subscriptions/listen (see `runInteropSuite` in ./interop.ts). Their handshake-era counterparts
 * are the cases on `initialize`, logging/setLevel, server-to-client requests and resources/subscribe.
 */
import type { Client as SdkV2Client, SubscriptionFilter } from '@modelcontextprotocol/client';
import { filter, firstValueFrom, take, toArray } from 'rxjs';
import { expect } from 'vitest';
import type { Client } from '../../lib/client/client';
import type { ToolDefinition } from '../../lib/server/tools';
import { FORM_SCHEMA } from '../fixtures/interop-our-server';
import { jsonOf } from './content';
import { deferred } from './fixtures';
import { nextEvent } from './wait';
import { cleanups } from './sdk';
import {
  ourClientAgainstSdkPrimitives,
  ourClientAgainstSdkServer,
  sdkClientAgainstOurPrimitives,
  sdkClientAgainstOurServer,
  STATELESS_ERA,
  STATELESS_VERSION,
  type InteropCase,
  type OurPrimitivesServerSetup,
} from './interop';
import { SERVER_INFO_KEY, type SdkClientPeer } from './interop-sdk-client';

const LOG_LEVEL_KEY = 'io.modelcontextprotocol/logLevel';

/** Tools that ask for input twice: both at once in one round, or one round after the other. */
const ASKING_TOOLS: ToolDefinition<any>[] = [
  {
    name: 'ask-both',
    inputSchema: { type: 'object' },
    handler: async (_args, context) => {
      const [form, sampled] = await Promise.all([
        context.elicit({ message: 'Your details?', requestedSchema: FORM_SCHEMA }),
        context.createMessage({
          messages: [{ role: 'user', content: { type: 'text', text: 'Say hi' } }],
          maxTokens: 5,
        }),
      ]);
      return { content: [{ type: 'text', text: JSON.stringify([form, sampled.model]) }] };
    },
  },
  {
    name: 'ask-twice',
    inputSchema: { type: 'object' },
    handler: async (_args, context) => {
      const first = await context.elicit({ message: 'Your details?', requestedSchema: FORM_SCHEMA });
      const roots = await context.listRoots();
      return { content: [{ type: 'text', text: JSON.stringify([first.action, roots.length]) }] };
    },
  },
];

/** The tools/call requests our server received for `tool`. */
const callsOf = ({ received }: OurPrimitivesServerSetup, tool: string) =>
  received.filter((message) => message.method === 'tools/call' && message.params?.name === tool);

/** What `client` sends from now on (`direction: 'out'`), as it goes. */
function sentBy(client: Client): Record<string, any>[] {
  const sent: Record<string, any>[] = [];
  client.trace$.subscribe((event) => event.direction === 'out' && event.message && sent.push(event.message as never));
  return sent;
}

/** What `client` receives from now on (answers, notifications, input requests), as it arrives. */
function answersTo(client: Client): Record<string, any>[] {
  const received: Record<string, any>[] = [];
  client.trace$.subscribe(
    (event) => event.direction === 'in' && event.message && received.push(event.message as never),
  );
  return received;
}

/** Resolves once the server acknowledges our client's next subscriptions/listen. */
const acknowledged = (client: Client) =>
  nextEvent(
    client.trace$,
    (event) =>
      event.direction === 'in' && (event.message as any)?.method === 'notifications/subscriptions/acknowledged',
    'the listen acknowledgement',
  );

/** The SDK v2 client of the run: what these cases check only SDK v2 has. */
const v2 = (sdkClient: SdkClientPeer) => sdkClient.raw as SdkV2Client;

async function listening(sdkClient: SdkClientPeer, filter: SubscriptionFilter) {
  const subscription = await v2(sdkClient).listen(filter);
  cleanups.push(() => subscription.close());
  return subscription;
}

export const STATELESS_CASES: InteropCase[] = [
  {
    title: 'settles on the stateless revision 2026-07-28',
    eras: STATELESS_ERA,
    server: async (run) => {
      const { sdkClient, sdkErrors } = await sdkClientAgainstOurServer(run);
      expect([v2(sdkClient).getProtocolEra(), v2(sdkClient).getNegotiatedProtocolVersion()]).toEqual([
        'modern',
        STATELESS_VERSION,
      ]);
      expect(sdkErrors).toEqual([]);
    },
    client: async (run) => {
      const { client, sdkErrors } = await ourClientAgainstSdkServer(run);
      expect([client.connectedEra, client.protocolVersion]).toEqual(['modern', STATELESS_VERSION]);
      const sent = sentBy(client);
      await client.listTools();
      expect(sent.map((message) => message.method)).toEqual(['tools/list']); // nothing before it but the discovery: no initialize, no ping
      expect(sdkErrors).toEqual([]);
    },
  },
  {
    title: 'names the server in the _meta of every result',
    eras: STATELESS_ERA,
    server: async (run) => {
      const { sdkClient } = await sdkClientAgainstOurServer(run);
      const results = [
        await v2(sdkClient).listTools(),
        await v2(sdkClient).callTool({ name: 'echo', arguments: { text: 'hi' } }),
      ];
      for (const result of results) {
        expect(result._meta?.[SERVER_INFO_KEY]).toEqual({ name: 'switchboard-server', version: '1.2.3' });
      }
    },
    client: async (run) => {
      const { client } = await ourClientAgainstSdkServer(run);
      const answers = answersTo(client);
      await client.listTools();
      await client.callTool('echo', { text: 'hi' });
      expect(answers.map((message) => message.result?._meta?.[SERVER_INFO_KEY])).toEqual([
        { name: 'sdk-server', version: '2.0.0' },
        { name: 'sdk-server', version: '2.0.0' },
      ]);
      expect(client.serverInfo).toEqual({ name: 'sdk-server', version: '2.0.0' });
    },
  },
  {
    title: 'sends the log messages at or above the level the request names in its _meta',
    eras: STATELESS_ERA,
    server: async (run) => {
      const { sdkClient } = await sdkClientAgainstOurPrimitives(run);
      const logged: unknown[] = [];
      sdkClient.onNotification('notifications/message', (params) => logged.push([params.level, params.data]));
      const result = await sdkClient.callTool({ name: 'log', arguments: {}, _meta: { [LOG_LEVEL_KEY]: 'warning' } });
      expect(result.content).toEqual([{ type: 'text', text: 'logged' }]);
      expect(logged).toEqual([
        ['warning', { step: 2 }],
        ['error', 'last'],
      ]);
    },
    client: async (run) => {
      const { client } = await ourClientAgainstSdkPrimitives(run);
      await client.setLoggingLevel('warning');
      const sent = sentBy(client);
      const logs = firstValueFrom(client.logs$.pipe(take(2), toArray()));
      expect(await client.callTool('log', {})).toEqual({ content: [{ type: 'text', text: 'logged' }] });
      expect(await logs).toEqual([
        { level: 'warning', logger: 'sdk', data: { step: 2 } },
        { level: 'error', data: 'last' },
      ]);
      expect(sent.find((message) => message.method === 'tools/call')?.params._meta[LOG_LEVEL_KEY]).toBe('warning');
    },
  },
  {
    title: 'sends no log message when the request names no level',
    eras: STATELESS_ERA,
    server: async (run) => {
      const { sdkClient, sent } = await sdkClientAgainstOurPrimitives(run);
      const result = await sdkClient.callTool({ name: 'log', arguments: {} });
      expect(result.content).toEqual([{ type: 'text', text: 'logged' }]);
      expect(sent.filter((message) => message.method === 'notifications/message')).toEqual([]);
    },
    client: async (run) => {
      const { client } = await ourClientAgainstSdkPrimitives(run);
      const sent = sentBy(client);
      const messages = answersTo(client);
      expect(await client.callTool('log', {})).toEqual({ content: [{ type: 'text', text: 'logged' }] });
      expect(sent.find((message) => message.method === 'tools/call')?.params._meta[LOG_LEVEL_KEY]).toBeUndefined();
      expect(messages.filter((message) => message.method === 'notifications/message')).toEqual([]);
    },
  },
  {
    title: 'retries the call once the input is gathered: two tools/call requests, each with its own id',
    eras: STATELESS_ERA,
    server: async (run) => {
      const setup = await sdkClientAgainstOurPrimitives(run);
      expect(jsonOf(await setup.sdkClient.callTool({ name: 'ask', arguments: {} }))).toEqual({
        action: 'accept',
        content: { name: 'Ada' },
      });
      const legs = callsOf(setup, 'ask');
      expect(legs).toHaveLength(2);
      expect(new Set(legs.map((leg) => leg.id)).size).toBe(2);
      // No server-to-client request in this revision: the first answer is an input_required result.
      expect(setup.sent.filter((message) => message.method === 'elicitation/create')).toEqual([]);
      expect(setup.sent.find((message) => message.id === legs[0]!.id)?.result).toMatchObject({
        resultType: 'input_required',
      });
    },
    client: async (run) => {
      const { client, seen } = await ourClientAgainstSdkPrimitives(run);
      const sent = sentBy(client);
      const answers = answersTo(client);
      // Our client fills in the defaults of the requested schema, in either era ('elicits a form through the client').
      expect(jsonOf(await client.callTool('ask', {}))).toEqual({
        action: 'accept',
        content: { name: 'Ada', age: 42, newsletter: false },
      });
      const legs = sent.filter((message) => message.method === 'tools/call');
      expect(legs).toHaveLength(2);
      expect(new Set(legs.map((leg) => leg.id)).size).toBe(2);
      expect(answers.find((message) => message.id === legs[0]!.id)?.result).toMatchObject({
        resultType: 'input_required',
      });
      expect(answers.filter((message) => message.method === 'elicitation/create')).toEqual([]);
      expect(seen.form).toHaveLength(1);
    },
  },
  {
    title: 'answers two input requests of one round, then retries once',
    eras: STATELESS_ERA,
    server: async (run) => {
      const setup = await sdkClientAgainstOurPrimitives(run, { tools: ASKING_TOOLS });
      const result = await setup.sdkClient.callTool({ name: 'ask-both', arguments: {} });
      expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual([
        { action: 'accept', content: { name: 'Ada' } },
        'sdk-model',
      ]);
      expect([setup.asked.elicitation.length, setup.asked.sampling.length, callsOf(setup, 'ask-both').length]).toEqual([
        1, 1, 2,
      ]);
    },
  },
  {
    title: 'goes through two rounds, echoing the requestState each time',
    eras: STATELESS_ERA,
    server: async (run) => {
      const setup = await sdkClientAgainstOurPrimitives(run, { tools: ASKING_TOOLS });
      const result = await setup.sdkClient.callTool({ name: 'ask-twice', arguments: {} });
      expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(['accept', 1]);
      expect(callsOf(setup, 'ask-twice').map((leg) => leg.params.requestState !== undefined)).toEqual([
        false,
        true,
        true,
      ]);
    },
  },
  {
    title: 'acknowledges subscriptions/listen with the filter it honours',
    eras: STATELESS_ERA,
    server: async (run) => {
      const { sdkClient } = await sdkClientAgainstOurPrimitives(run);
      const subscription = await listening(sdkClient, {
        toolsListChanged: true,
        resourceSubscriptions: ['docs://readme'],
      });
      expect(subscription.honoredFilter).toEqual({ toolsListChanged: true, resourceSubscriptions: ['docs://readme'] });
    },
    client: async (run) => {
      const { client } = await ourClientAgainstSdkPrimitives(run);
      const sent = sentBy(client);
      const ack = acknowledged(client);
      const updates = client.subscribeResource('docs://readme').subscribe();
      cleanups.push(() => updates.unsubscribe());
      const acknowledgement = (await ack).message as Record<string, any>;
      const listen = sent.find((message) => message.method === 'subscriptions/listen')!;
      expect(listen.params.notifications).toEqual({ resourceSubscriptions: ['docs://readme'] });
      expect(acknowledgement.params.notifications).toEqual({ resourceSubscriptions: ['docs://readme'] });
    },
  },
  {
    title: 'delivers a tool list change on the listen stream, after which the new list has the tool',
    eras: STATELESS_ERA,
    server: async (run) => {
      const { sdkClient, server } = await sdkClientAgainstOurServer(run);
      const changed = deferred();
      sdkClient.onNotification('notifications/tools/list_changed', () => changed.resolve());
      await listening(sdkClient, { toolsListChanged: true });
      server.update((definition) =>
        definition.withTools({ name: 'late', inputSchema: { type: 'object' }, handler: () => ({ content: [] }) }),
      );
      await changed.promise;
      const { tools } = await v2(sdkClient).listTools({}, { cacheMode: 'refresh' });
      expect(tools.map((tool) => tool.name)).toContain('late');
    },
    client: async (run) => {
      const { client, mcp } = await ourClientAgainstSdkServer(run);
      const ack = acknowledged(client);
      const changed = firstValueFrom(
        client.notifications$.pipe(filter((note) => note.method === 'notifications/tools/list_changed')),
      );
      await ack;
      mcp.registerTool('late', { description: 'Added later' }, async () => ({ content: [] }));
      await changed;
      expect((await client.listTools()).map((tool) => tool.name)).toContain('late');
    },
  },
  {
    title: 'delivers the updates of the resources the listen names, and only those',
    eras: STATELESS_ERA,
    server: async (run) => {
      const { sdkClient, server, counterChanges } = await sdkClientAgainstOurPrimitives(run);
      const updates: string[] = [];
      const alpha = deferred();
      sdkClient.onNotification('notifications/resources/updated', ({ uri }: { uri: string }) => {
        updates.push(uri);
        if (uri === 'notes://alpha') alpha.resolve();
      });
      await listening(sdkClient, { resourceSubscriptions: ['docs://counter', 'notes://alpha'] });
      server.resourceUpdated('docs://readme'); // not named: never sent
      counterChanges.next(); // the resource's own change stream
      server.resourceUpdated('notes://alpha');
      await alpha.promise;
      expect(updates).toEqual(['docs://counter', 'notes://alpha']);
    },
    client: async (run) => {
      const { client, mcp } = await ourClientAgainstSdkPrimitives(run);
      const ack = acknowledged(client);
      const updates = firstValueFrom(client.subscribeResource('docs://readme').pipe(take(2), toArray()));
      await ack;
      await mcp.server.sendResourceUpdated({ uri: 'docs://logo' }); // not named: not for this subscriber
      await mcp.server.sendResourceUpdated({ uri: 'docs://readme' });
      await mcp.server.sendResourceUpdated({ uri: 'docs://readme' });
      // Each carries the id of its listen stream in _meta.
      expect((await updates).map(({ uri }) => uri)).toEqual(['docs://readme', 'docs://readme']);
    },
  },
];
