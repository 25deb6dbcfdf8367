/**
 * The interop suite, part 3: resources (lists, reads, subscriptions, list changes),
 * for both directions (see `runInteropSuite` in ./interop.ts).
 */
import { McpServer as SdkV2McpServer } from '@modelcontextprotocol/server';
import { McpServer as SdkV1McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { filter, firstValueFrom, take, toArray } from 'rxjs';
import { expect } from 'vitest';
import { CapabilityNotSupportedError, McpError } from '../../lib/jsonrpc/errors';
import { isAtLeast } from '../../lib/protocol/versions';
import { deferred } from './fixtures';
import {
  BOTH_ERAS,
  HANDSHAKE_ERA,
  ourClientAgainst,
  ourClientAgainstSdkPrimitives,
  sdkClientAgainstOurPrimitives,
  type InteropCase,
  type InteropRun,
  type OurPrimitivesServerSetup,
  type SdkMcpServer,
} from './interop';

/** `mcp` with one resource, recording the methods of the requests it has no handler for in `received`. */
function plainSdkServer<T>(mcp: T, received: string[]): T {
  const server = mcp as unknown as SdkMcpServer & {
    server: { fallbackRequestHandler?: (request: { method: string }) => Promise<object> };
  };
  server.registerResource('readme', 'docs://readme', {}, async (uri) => ({ contents: [{ uri: uri.href, text: 'x' }] }));
  server.server.fallbackRequestHandler = async (request) => (received.push(request.method), {});
  return mcp;
}

/** Records the resources/updated the SDK client hears; `next(uri)` resolves when one for `uri` arrives. */
function watchUpdates({ sdkClient }: OurPrimitivesServerSetup) {
  const updates: string[] = [];
  let waiting: { uri: string; resolve: () => void } | undefined;
  sdkClient.onNotification('notifications/resources/updated', (params: { uri: string }) => {
    updates.push(params.uri);
    if (params.uri === waiting?.uri) waiting.resolve();
  });
  const next = (uri: string) => {
    const arrived = deferred();
    waiting = { uri, resolve: arrived.resolve };
    return arrived.promise;
  };
  return { updates, next };
}

/**
 * The cache hints our server, and SDK v2's, add to a resources/read result in 2026-07-28 (none in the
 * handshake era); our client passes them on.
 */
const readHints = (run: InteropRun) => (run.era === 'stateless' ? { ttlMs: 0, cacheScope: 'private' } : {});

export const RESOURCE_CASES: InteropCase[] = [
  {
    title: 'lists resources with the fields this revision carries',
    eras: BOTH_ERAS,
    server: async (run) => {
      const { sdkClient } = await sdkClientAgainstOurPrimitives(run);
      const modern = isAtLeast(run.version, '2025-06-18');
      const { resources, nextCursor } = await sdkClient.listResources();
      expect(nextCursor).toBeUndefined();
      expect(resources).toEqual([
        {
          uri: 'docs://readme',
          name: 'readme',
          ...(modern && { title: 'Read me' }),
          description: 'What this is',
          mimeType: 'text/markdown',
          annotations: { audience: ['user'], priority: 0.5 },
        },
        { uri: 'docs://logo', name: 'logo', mimeType: 'image/png' },
        { uri: 'docs://bundle', name: 'bundle' },
        { uri: 'docs://counter', name: 'counter', mimeType: 'text/plain' },
      ]);
    },
    client: async (run) => {
      const { client } = await ourClientAgainstSdkPrimitives(run);
      // A template's list callback included.
      expect(await client.listResources()).toEqual([
        {
          uri: 'docs://readme',
          name: 'readme',
          title: 'Read me',
          description: 'What this is',
          mimeType: 'text/markdown',
        },
        { uri: 'docs://logo', name: 'logo', mimeType: 'image/png' },
        { uri: 'notes://alpha', name: 'alpha', title: 'Note', description: 'A note by id', mimeType: 'text/plain' },
      ]);
      expect(await client.resourceList.get()).toHaveLength(3);
    },
  },
  {
    title: 'lists resource templates with the fields this revision carries',
    eras: BOTH_ERAS,
    server: async (run) => {
      const { sdkClient } = await sdkClientAgainstOurPrimitives(run);
      const modern = isAtLeast(run.version, '2025-06-18');
      expect((await sdkClient.listResourceTemplates()).resourceTemplates).toEqual([
        {
          uriTemplate: 'notes://{id}{?format}',
          name: 'note',
          ...(modern && { title: 'Note' }),
          description: 'A note by id',
          mimeType: 'text/plain',
        },
      ]);
    },
    client: async (run) => {
      const { client } = await ourClientAgainstSdkPrimitives(run);
      expect(await client.listResourceTemplates()).toEqual([
        {
          uriTemplate: 'notes://{id}',
          name: 'note',
          title: 'Note',
          description: 'A note by id',
          mimeType: 'text/plain',
        },
      ]);
    },
  },
  {
    title: 'reads a text resource',
    eras: BOTH_ERAS,
    server: async (run) => {
      const { sdkClient, sdkErrors } = await sdkClientAgainstOurPrimitives(run);
      expect(await sdkClient.readResource({ uri: 'docs://readme' })).toEqual({
        contents: [{ uri: 'docs://readme', mimeType: 'text/markdown', text: '# Readme' }],
        ...readHints(run),
      });
      expect(sdkErrors).toEqual([]);
    },
    client: async (run) => {
      const { client, sdkErrors } = await ourClientAgainstSdkPrimitives(run);
      expect(await client.readResource('docs://readme')).toEqual({
        contents: [{ uri: 'docs://readme', mimeType: 'text/markdown', text: '# SDK readme' }],

        ...readHints(run),
      });
      expect(sdkErrors).toEqual([]);
    },
  },
  {
    title: 'reads a blob resource',
    eras: BOTH_ERAS,
    server: async (run) => {
      const { sdkClient } = await sdkClientAgainstOurPrimitives(run);
      expect(await sdkClient.readResource({ uri: 'docs://logo' })).toEqual({
        contents: [{ uri: 'docs://logo', mimeType: 'image/png', blob: 'iVBORw0KGgo=' }],
        ...readHints(run),
      });
    },
    client: async (run) => {
      const { client } = await ourClientAgainstSdkPrimitives(run);
      expect(await client.readResource('docs://logo')).toEqual({
        contents: [{ uri: 'docs://logo', mimeType: 'image/png', blob: 'iVBORw0KGgo=' }],

        ...readHints(run),
      });
    },
  },
  {
    title: 'reads a resource of several contents',
    eras: BOTH_ERAS,
    server: async (run) => {
      const { sdkClient } = await sdkClientAgainstOurPrimitives(run);
      expect(await sdkClient.readResource({ uri: 'docs://bundle' })).toEqual({
        contents: [
          { uri: 'docs://bundle/a', mimeType: 'text/plain', text: 'A' },
          { uri: 'docs://bundle/b', mimeType: 'application/octet-stream', blob: 'Qg==' },
        ],
        ...readHints(run),
      });
    },
  },
  {
    title: 'reads a URI of a resource template',
    eras: BOTH_ERAS,
    server: async (run) => {
      const { sdkClient } = await sdkClientAgainstOurPrimitives(run);
      const uri = 'notes://beta?format=md';
      expect(await sdkClient.readResource({ uri })).toEqual({
        contents: [{ uri, mimeType: 'text/plain', text: `note beta as md for sdk-client (${uri})` }],
        ...readHints(run),
      });
    },
    client: async (run) => {
      const { client } = await ourClientAgainstSdkPrimitives(run);
      expect(await client.readResource('notes://beta')).toEqual({
        contents: [{ uri: 'notes://beta', text: 'note beta' }],

        ...readHints(run),
      });
    },
  },
  {
    title: 'answers an unknown resource URI with an error the client throws as McpError',
    eras: BOTH_ERAS,
    server: async (run) => {
      const { sdkClient, sent } = await sdkClientAgainstOurPrimitives(run);
      const failure = await sdkClient.readResource({ uri: 'docs://nope' }).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(sdkClient.ProtocolError);
      expect(failure).toMatchObject({ data: { uri: 'docs://nope' } });
      expect((failure as Error).message).toMatch(/Resource not found: docs:\/\/nope/);
      // The spec's -32002 in the handshake era, -32602 in 2026-07-28 (SDK v2 reads both as -32602), the URI in data.
      expect(sent.find((message) => message.error)?.error).toMatchObject({
        code: run.era === 'handshake' ? -32002 : -32602,
        data: { uri: 'docs://nope' },
      });
    },
    client: async (run) => {
      const { client, sdkErrors } = await ourClientAgainstSdkPrimitives(run);
      const failure = await client.readResource('docs://nope').catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(McpError);
      // The SDK McpServer answers an unknown resource with -32602, not the spec's -32002.
      expect(failure).toMatchObject({ code: -32602, message: expect.stringMatching(/docs:\/\/nope/) });
      expect(sdkErrors).toEqual([]);
    },
  },
  {
    title: 'refuses a subscription to an unknown URI with -32002',
    eras: HANDSHAKE_ERA,
    server: async (run) => {
      const { sdkClient, sent } = await sdkClientAgainstOurPrimitives(run);
      await expect(sdkClient.subscribeResource({ uri: 'docs://nope' })).rejects.toBeInstanceOf(sdkClient.ProtocolError);
      // SDK v2 reads -32002 as -32602: the code is checked on the wire.
      expect(sent.find((message) => message.error)?.error).toMatchObject({ code: -32002 });
    },
  },
  {
    title: 'sends resources/updated for the subscribed URIs only',
    eras: HANDSHAKE_ERA,
    server: async (run) => {
      const setup = await sdkClientAgainstOurPrimitives(run);
      const { sdkClient, server, counterChanges, sdkErrors } = setup;
      const { updates, next } = watchUpdates(setup);
      expect(await sdkClient.subscribeResource({ uri: 'docs://counter' })).toEqual({});
      expect(await sdkClient.subscribeResource({ uri: 'notes://alpha' })).toEqual({}); // a template URI
      expect(server.subscriptions.size).toBe(2);
      // Not subscribed: never sent. Messages arrive in order, so once the next one is here, this one is not coming.
      server.resourceUpdated('docs://readme');
      let arrived = next('docs://counter');
      counterChanges.next(); // the resource's own change stream
      await arrived;
      arrived = next('notes://alpha');
      server.resourceUpdated('notes://alpha');
      await arrived;
      expect(updates).toEqual(['docs://counter', 'notes://alpha']);
      expect(sdkErrors).toEqual([]);
    },
    client: async (run) => {
      const { client, mcp, hooks, sdkErrors } = await ourClientAgainstSdkPrimitives(run);
      const subscribed = firstValueFrom(hooks.subscribeSeen);
      const updates = firstValueFrom(client.subscribeResource('docs://readme').pipe(take(2), toArray()));
      expect(await subscribed).toBe('docs://readme');
      await mcp.server.sendResourceUpdated({ uri: 'docs://logo' }); // another resource: not for this subscriber
      await mcp.server.sendResourceUpdated({ uri: 'docs://readme' });
      await mcp.server.sendResourceUpdated({ uri: 'docs://readme' });
      expect(await updates).toEqual([{ uri: 'docs://readme' }, { uri: 'docs://readme' }]);
      expect(hooks.subscribed).toEqual(['docs://readme']);
      expect(sdkErrors).toEqual([]);
    },
  },
  {
    title: 'stops the updates of a URI after unsubscribe',
    eras: HANDSHAKE_ERA,
    server: async (run) => {
      const setup = await sdkClientAgainstOurPrimitives(run);
      const { sdkClient, server, counterChanges, sent } = setup;
      const { updates, next } = watchUpdates(setup);
      await sdkClient.subscribeResource({ uri: 'docs://counter' });
      await sdkClient.subscribeResource({ uri: 'notes://alpha' });
      expect(await sdkClient.unsubscribeResource({ uri: 'docs://counter' })).toEqual({});
      expect(server.subscriptions.size).toBe(1);
      counterChanges.next();
      server.resourceUpdated('docs://counter');
      const arrived = next('notes://alpha');
      server.resourceUpdated('notes://alpha');
      await arrived;
      expect(updates).toEqual(['notes://alpha']);
      expect(sent.filter((message) => message.method === 'notifications/resources/updated')).toHaveLength(1);
    },
    client: async (run) => {
      const { client, mcp, hooks } = await ourClientAgainstSdkPrimitives(run);
      const subscribed = firstValueFrom(hooks.subscribeSeen);
      const updates = firstValueFrom(client.subscribeResource('docs://readme').pipe(take(2), toArray()));
      await subscribed;
      const unsubscribed = firstValueFrom(hooks.unsubscribeSeen);
      await mcp.server.sendResourceUpdated({ uri: 'docs://readme' });
      await mcp.server.sendResourceUpdated({ uri: 'docs://readme' });
      await updates;
      // The last subscriber went away (take(2) completed): resources/unsubscribe.
      expect(await unsubscribed).toBe('docs://readme');
      expect(hooks.unsubscribed).toEqual(['docs://readme']);
    },
  },
  {
    title: 'subscribes to a URI of a resource template',
    eras: HANDSHAKE_ERA,
    client: async (run) => {
      const { client, mcp, hooks } = await ourClientAgainstSdkPrimitives(run);
      const subscribed = firstValueFrom(hooks.subscribeSeen);
      const note = firstValueFrom(client.subscribeResource('notes://beta'));
      expect(await subscribed).toBe('notes://beta');
      await mcp.server.sendResourceUpdated({ uri: 'notes://beta' });
      expect(await note).toEqual({ uri: 'notes://beta' });
    },
  },
  {
    title: 'refuses locally to subscribe when the server does not declare resources.subscribe',
    eras: HANDSHAKE_ERA,
    client: async (run) => {
      // McpServer alone declares resources with listChanged only.
      const received: string[] = [];
      const info = { name: 'plain-sdk-server', version: '1.0.0' };
      const { client } = await ourClientAgainst(run, {
        v1: () => plainSdkServer(new SdkV1McpServer(info), received),
        v2: () => plainSdkServer(new SdkV2McpServer(info), received),
      });
      expect(client.serverCapabilities).toEqual({ resources: { listChanged: true } });
      const failure = await firstValueFrom(client.subscribeResource('docs://readme')).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(CapabilityNotSupportedError);
      expect(await client.readResource('docs://readme')).toEqual({ contents: [{ uri: 'docs://readme', text: 'x' }] });
      expect(received).toEqual([]); // resources/subscribe never went out
    },
  },
  {
    title: 'announces resource and prompt list changes, after which the new lists are served',
    eras: HANDSHAKE_ERA,
    server: async (run) => {
      const { sdkClient, server } = await sdkClientAgainstOurPrimitives(run);
      const resourcesChanged = deferred();
      const promptsChanged = deferred();
      sdkClient.onNotification('notifications/resources/list_changed', () => resourcesChanged.resolve());
      sdkClient.onNotification('notifications/prompts/list_changed', () => promptsChanged.resolve());
      server.update((definition) =>
        definition
          .withResources({ uri: 'docs://late', name: 'late', read: () => 'late' })
          .withPrompts({ name: 'late', get: () => [] }),
      );
      await Promise.all([resourcesChanged.promise, promptsChanged.promise]);
      expect((await sdkClient.listResources()).resources.map((resource) => resource.uri)).toContain('docs://late');
      expect((await sdkClient.listPrompts()).prompts.map((prompt) => prompt.name)).toEqual([
        'summarize',
        'hello',
        'late',
      ]);
      expect(await sdkClient.readResource({ uri: 'docs://late' })).toEqual({
        contents: [{ uri: 'docs://late', text: 'late' }],
      });
    },
    client: async (run) => {
      const { client, mcp } = await ourClientAgainstSdkPrimitives(run);
      const changes = firstValueFrom(
        client.notifications$.pipe(
          filter((notification) => notification.method.endsWith('/list_changed')),
          take(2),
          toArray(),
        ),
      );
      mcp.registerResource('late', 'docs://late', {}, async (uri) => ({ contents: [{ uri: uri.href, text: 'late' }] }));
      mcp.registerPrompt('late', { description: 'Added later' }, () => ({ messages: [] }));
      expect((await changes).map((notification) => notification.method)).toEqual([
        'notifications/resources/list_changed',
        'notifications/prompts/list_changed',
      ]);
    },
  },
  {
    title: 'refreshes its resource and prompt caches on list_changed',
    eras: BOTH_ERAS,
    client: async (run) => {
      const { client, mcp } = await ourClientAgainstSdkPrimitives(run);
      const resourceLists: string[][] = [];
      const promptLists: string[][] = [];
      const firstResources = deferred();
      const secondResources = deferred();
      const firstPrompts = deferred();
      const secondPrompts = deferred();
      const subscriptions = [
        client.resourceList.changes$.subscribe({
          next: (list) => {
            resourceLists.push(list.map((resource) => resource.uri));
            (resourceLists.length === 1 ? firstResources : secondResources).resolve();
          },
          error: () => undefined,
        }),
        client.promptList.changes$.subscribe({
          next: (list) => {
            promptLists.push(list.map((prompt) => prompt.name));
            (promptLists.length === 1 ? firstPrompts : secondPrompts).resolve();
          },
          error: () => undefined,
        }),
      ];
      await Promise.all([firstResources.promise, firstPrompts.promise]);
      mcp.registerResource('late', 'docs://late', {}, async (uri) => ({ contents: [{ uri: uri.href, text: 'late' }] }));
      mcp.registerPrompt('late', { description: 'Added later' }, () => ({ messages: [] }));
      await Promise.all([secondResources.promise, secondPrompts.promise]);
      subscriptions.forEach((subscription) => subscription.unsubscribe());
      expect(resourceLists).toEqual([
        ['docs://readme', 'docs://logo', 'notes://alpha'],
        ['docs://readme', 'docs://logo', 'docs://late', 'notes://alpha'],
      ]);
      expect(promptLists).toEqual([['review'], ['review', 'late']]);
    },
  },
];
