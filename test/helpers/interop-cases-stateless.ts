/**
 * The interop suite, part 5: what only the stateless revision 2026-07-28 has: the era the SDK settles on,
 * the server's identity on every result, the log level each request names in its `_meta`, input_required
 * rounds and subscriptions/listen (see `runInteropSuite` in ./interop.ts). Their handshake-era counterparts
 * are the cases on `initialize`, logging/setLevel, server-to-client requests and resources/subscribe.
 */
import type { Client as SdkV2Client, SubscriptionFilter } from '@modelcontextprotocol/client';
import { expect } from 'vitest';
import type { ToolDefinition } from '../../lib/server/tools';
import { FORM_SCHEMA } from '../fixtures/interop-our-server';
import { jsonOf } from './content';
import { deferred } from './fixtures';
import { cleanups } from './sdk';
import {
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
  },
];
