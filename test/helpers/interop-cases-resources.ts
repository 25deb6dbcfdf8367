/**
 * The interop suite, part 3: resources (lists, reads, subscriptions, list changes), prompts and completion,
 * for both directions (see `runInteropSuite` in ./interop.ts).
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  McpError as SdkMcpError,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { filter, firstValueFrom, take, toArray } from 'rxjs';
import { expect } from 'vitest';
import { CapabilityNotSupportedError, McpError } from '../../lib/jsonrpc/errors';
import { isAtLeast } from '../../lib/protocol/versions';
import { PROMPT_WIRE } from '../fixtures/interop-our-server';
import { deferred } from './fixtures';
import {
  ourClientAgainstSdkPrimitives,
  sdkClientAgainstOurPrimitives,
  type InteropCase,
  type OurPrimitivesServerSetup,
} from './interop';
import { connectOurClient } from './sdk';

/** Records the resources/updated the SDK client hears; `next(uri)` resolves when one for `uri` arrives. */
function watchUpdates({ sdkClient }: OurPrimitivesServerSetup) {
  const updates: string[] = [];
  let waiting: { uri: string; resolve: () => void } | undefined;
  sdkClient.setNotificationHandler(ResourceUpdatedNotificationSchema, ({ params }) => {
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

export const RESOURCE_CASES: InteropCase[] = [
  {
    title: 'lists resources with the fields this revision carries',
    server: async (version) => {
      const { sdkClient } = await sdkClientAgainstOurPrimitives(version);
      const modern = isAtLeast(version, '2025-06-18');
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
    client: async (version) => {
      const { client } = await ourClientAgainstSdkPrimitives(version);
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
    server: async (version) => {
      const { sdkClient } = await sdkClientAgainstOurPrimitives(version);
      const modern = isAtLeast(version, '2025-06-18');
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
    client: async (version) => {
      const { client } = await ourClientAgainstSdkPrimitives(version);
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
    server: async (version) => {
      const { sdkClient, sdkErrors } = await sdkClientAgainstOurPrimitives(version);
      expect(await sdkClient.readResource({ uri: 'docs://readme' })).toEqual({
        contents: [{ uri: 'docs://readme', mimeType: 'text/markdown', text: '# Readme' }],
      });
      expect(sdkErrors).toEqual([]);
    },
    client: async (version) => {
      const { client, sdkErrors } = await ourClientAgainstSdkPrimitives(version);
      expect(await client.readResource('docs://readme')).toEqual({
        contents: [{ uri: 'docs://readme', mimeType: 'text/markdown', text: '# SDK readme' }],
      });
      expect(sdkErrors).toEqual([]);
    },
  },
  {
    title: 'reads a blob resource',
    server: async (version) => {
      const { sdkClient } = await sdkClientAgainstOurPrimitives(version);
      expect(await sdkClient.readResource({ uri: 'docs://logo' })).toEqual({
        contents: [{ uri: 'docs://logo', mimeType: 'image/png', blob: 'iVBORw0KGgo=' }],
      });
    },
    client: async (version) => {
      const { client } = await ourClientAgainstSdkPrimitives(version);
      expect(await client.readResource('docs://logo')).toEqual({
        contents: [{ uri: 'docs://logo', mimeType: 'image/png', blob: 'iVBORw0KGgo=' }],
      });
    },
  },
  {
    title: 'reads a resource of several contents',
    server: async (version) => {
      const { sdkClient } = await sdkClientAgainstOurPrimitives(version);
      expect(await sdkClient.readResource({ uri: 'docs://bundle' })).toEqual({
        contents: [
          { uri: 'docs://bundle/a', mimeType: 'text/plain', text: 'A' },
          { uri: 'docs://bundle/b', mimeType: 'application/octet-stream', blob: 'Qg==' },
        ],
      });
    },
  },
  {
    title: 'reads a URI of a resource template',
    server: async (version) => {
      const { sdkClient } = await sdkClientAgainstOurPrimitives(version);
      const uri = 'notes://beta?format=md';
      expect(await sdkClient.readResource({ uri })).toEqual({
        contents: [{ uri, mimeType: 'text/plain', text: `note beta as md for sdk-client (${uri})` }],
      });
    },
    client: async (version) => {
      const { client } = await ourClientAgainstSdkPrimitives(version);
      expect(await client.readResource('notes://beta')).toEqual({
        contents: [{ uri: 'notes://beta', text: 'note beta' }],
      });
    },
  },
  {
    title: 'answers an unknown resource URI with an error the client throws as McpError',
    server: async (version) => {
      const { sdkClient } = await sdkClientAgainstOurPrimitives(version);
      const failure = await sdkClient.readResource({ uri: 'docs://nope' }).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(SdkMcpError);
      // The spec's -32002, with the URI in data.
      expect(failure).toMatchObject({ code: -32002, data: { uri: 'docs://nope' } });
      expect((failure as Error).message).toMatch(/Resource not found: docs:\/\/nope/);
    },
    client: async (version) => {
      const { client, sdkErrors } = await ourClientAgainstSdkPrimitives(version);
      const failure = await client.readResource('docs://nope').catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(McpError);
      // The SDK McpServer answers an unknown resource with -32602, not the spec's -32002.
      expect(failure).toMatchObject({ code: -32602, message: expect.stringMatching(/docs:\/\/nope not found/) });
      expect(sdkErrors).toEqual([]);
    },
  },
  {
    title: 'refuses a subscription to an unknown URI with -32002',
    server: async (version) => {
      const { sdkClient } = await sdkClientAgainstOurPrimitives(version);
      await expect(sdkClient.subscribeResource({ uri: 'docs://nope' })).rejects.toMatchObject({ code: -32002 });
    },
  },
  {
    title: 'sends resources/updated for the subscribed URIs only',
    server: async (version) => {
      const setup = await sdkClientAgainstOurPrimitives(version);
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
    client: async (version) => {
      const { client, mcp, hooks, sdkErrors } = await ourClientAgainstSdkPrimitives(version);
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
    server: async (version) => {
      const setup = await sdkClientAgainstOurPrimitives(version);
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
    client: async (version) => {
      const { client, mcp, hooks } = await ourClientAgainstSdkPrimitives(version);
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
    client: async (version) => {
      const { client, mcp, hooks } = await ourClientAgainstSdkPrimitives(version);
      const subscribed = firstValueFrom(hooks.subscribeSeen);
      const note = firstValueFrom(client.subscribeResource('notes://beta'));
      expect(await subscribed).toBe('notes://beta');
      await mcp.server.sendResourceUpdated({ uri: 'notes://beta' });
      expect(await note).toEqual({ uri: 'notes://beta' });
    },
  },
  {
    title: 'refuses locally to subscribe when the server does not declare resources.subscribe',
    client: async (version) => {
      // McpServer alone declares resources with listChanged only.
      const mcp = new McpServer({ name: 'plain-sdk-server', version: '1.0.0' });
      mcp.registerResource('readme', 'docs://readme', {}, async (uri) => ({
        contents: [{ uri: uri.href, text: 'x' }],
      }));
      const received: string[] = [];
      mcp.server.fallbackRequestHandler = async (request) => {
        received.push(request.method);
        return {};
      };
      const client = await connectOurClient(mcp, { protocolVersion: version });
      expect(client.serverCapabilities).toEqual({ resources: { listChanged: true } });
      const failure = await firstValueFrom(client.subscribeResource('docs://readme')).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(CapabilityNotSupportedError);
      expect(await client.readResource('docs://readme')).toEqual({ contents: [{ uri: 'docs://readme', text: 'x' }] });
      expect(received).toEqual([]); // resources/subscribe never went out
    },
  },
  {
    title: 'announces resource and prompt list changes, after which the new lists are served',
    server: async (version) => {
      const { sdkClient, server } = await sdkClientAgainstOurPrimitives(version);
      const resourcesChanged = deferred();
      const promptsChanged = deferred();
      sdkClient.setNotificationHandler(ResourceListChangedNotificationSchema, () => resourcesChanged.resolve());
      sdkClient.setNotificationHandler(PromptListChangedNotificationSchema, () => promptsChanged.resolve());
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
    client: async (version) => {
      const { client, mcp } = await ourClientAgainstSdkPrimitives(version);
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
    client: async (version) => {
      const { client, mcp } = await ourClientAgainstSdkPrimitives(version);
      const resourceLists: string[][] = [];
      const promptLists: string[][] = [];
      const firstResources = deferred();
      const secondResources = deferred();
      const firstPrompts = deferred();
      const secondPrompts = deferred();
      const subscriptions = [
        client.resourceList.changes$.subscribe((list) => {
          resourceLists.push(list.map((resource) => resource.uri));
          (resourceLists.length === 1 ? firstResources : secondResources).resolve();
        }),
        client.promptList.changes$.subscribe((list) => {
          promptLists.push(list.map((prompt) => prompt.name));
          (promptLists.length === 1 ? firstPrompts : secondPrompts).resolve();
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

export const PROMPT_CASES: InteropCase[] = [
  {
    title: 'lists prompts with the fields this revision carries',
    server: async (version) => {
      const { sdkClient } = await sdkClientAgainstOurPrimitives(version);
      const { prompts } = await sdkClient.listPrompts();
      const [summarize, hello] = PROMPT_WIRE;
      const { title: _title, ...untitled } = summarize;
      expect(prompts).toEqual([isAtLeast(version, '2025-06-18') ? summarize : untitled, hello]);
    },
    client: async (version) => {
      const { client } = await ourClientAgainstSdkPrimitives(version);
      expect(await client.listPrompts()).toEqual([
        {
          name: 'review',
          title: 'Review',
          description: 'Reviews code',
          arguments: [
            { name: 'language', required: true },
            { name: 'code', description: 'The code', required: true },
          ],
        },
      ]);
    },
  },
  {
    title: 'gets a prompt with arguments',
    server: async (version) => {
      const { sdkClient, sdkErrors } = await sdkClientAgainstOurPrimitives(version);
      expect(await sdkClient.getPrompt({ name: 'summarize', arguments: { id: 'beta', style: 'terse' } })).toEqual({
        messages: [
          { role: 'user', content: { type: 'text', text: 'Summarize note beta in a terse style' } },
          {
            role: 'user',
            content: { type: 'resource', resource: { uri: 'notes://beta', mimeType: 'text/plain', text: 'note beta' } },
          },
          { role: 'assistant', content: { type: 'text', text: 'Here is the summary:' } },
        ],
      });
      expect(sdkErrors).toEqual([]);
    },
    client: async (version) => {
      const { client } = await ourClientAgainstSdkPrimitives(version);
      expect(await client.getPrompt('review', { language: 'python', code: 'print(1)' })).toEqual({
        messages: [{ role: 'user', content: { type: 'text', text: 'Review this python:\nprint(1)' } }],
      });
    },
  },
  {
    title: 'gets a prompt without arguments, with its description',
    server: async (version) => {
      const { sdkClient } = await sdkClientAgainstOurPrimitives(version);
      expect(await sdkClient.getPrompt({ name: 'hello' })).toEqual({
        description: 'A greeting',
        messages: [{ role: 'user', content: { type: 'text', text: 'Hello!' } }],
      });
    },
  },
  {
    title: 'answers a missing required prompt argument with -32602',
    server: async (version) => {
      const { sdkClient } = await sdkClientAgainstOurPrimitives(version);
      const missing = await sdkClient
        .getPrompt({ name: 'summarize', arguments: { style: 'terse' } })
        .catch((error: unknown) => error);
      expect(missing).toBeInstanceOf(SdkMcpError);
      expect(missing).toMatchObject({ code: -32602 });
      expect((missing as Error).message).toMatch(/needs the argument "id"/);
    },
    client: async (version) => {
      const { client } = await ourClientAgainstSdkPrimitives(version);
      const failure = await client.getPrompt('review', { language: 'python' }).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(McpError);
      expect(failure).toMatchObject({ code: -32602 });
    },
  },
  {
    title: 'answers an unknown prompt with -32602',
    server: async (version) => {
      const { sdkClient } = await sdkClientAgainstOurPrimitives(version);
      await expect(sdkClient.getPrompt({ name: 'nope' })).rejects.toMatchObject({ code: -32602 });
    },
    client: async (version) => {
      const { client } = await ourClientAgainstSdkPrimitives(version);
      await expect(client.getPrompt('nope', {})).rejects.toMatchObject({ code: -32602 });
    },
  },
  {
    title: 'completes a prompt argument',
    server: async (version) => {
      const { sdkClient } = await sdkClientAgainstOurPrimitives(version);
      expect(
        await sdkClient.complete({
          ref: { type: 'ref/prompt', name: 'summarize' },
          argument: { name: 'id', value: 'al' },
        }),
      ).toEqual({ completion: { values: ['alpha', 'alpine'] } });
    },
    client: async (version) => {
      const { client } = await ourClientAgainstSdkPrimitives(version);
      expect(
        await client.complete({
          ref: { type: 'ref/prompt', name: 'review' },
          argument: { name: 'language', value: 'ty' },
        }),
      ).toEqual({ values: ['typescript', 'typst'], total: 2, hasMore: false });
    },
  },
  {
    title: 'completes a variable of a resource template',
    server: async (version) => {
      const { sdkClient } = await sdkClientAgainstOurPrimitives(version);
      expect(
        await sdkClient.complete({
          ref: { type: 'ref/resource', uri: 'notes://{id}{?format}' },
          argument: { name: 'id', value: 'g' },
        }),
      ).toEqual({ completion: { values: ['gamma'] } });
    },
    client: async (version) => {
      const { client } = await ourClientAgainstSdkPrimitives(version);
      expect(
        await client.complete({
          ref: { type: 'ref/resource', uri: 'notes://{id}' },
          argument: { name: 'id', value: 'al' },
        }),
      ).toEqual({ values: ['alpha', 'alpine'], total: 2, hasMore: false });
    },
  },
  {
    title: 'completes to nothing when nothing matches or the argument has no completer',
    server: async (version) => {
      const { sdkClient } = await sdkClientAgainstOurPrimitives(version);
      expect(
        await sdkClient.complete({
          ref: { type: 'ref/prompt', name: 'summarize' },
          argument: { name: 'id', value: 'z' },
        }),
      ).toEqual({ completion: { values: [] } });
    },
    client: async (version) => {
      const { client } = await ourClientAgainstSdkPrimitives(version);
      // `code` is not completable: nothing to suggest.
      expect(
        await client.complete({ ref: { type: 'ref/prompt', name: 'review' }, argument: { name: 'code', value: 'x' } }),
      ).toEqual({ values: [], hasMore: false });
    },
  },
  {
    title: 'answers the completion of an unknown prompt argument with -32602',
    server: async (version) => {
      const { sdkClient } = await sdkClientAgainstOurPrimitives(version);
      await expect(
        sdkClient.complete({ ref: { type: 'ref/prompt', name: 'summarize' }, argument: { name: 'nope', value: '' } }),
      ).rejects.toMatchObject({ code: -32602 });
    },
  },
  {
    title: 'hands the completer the arguments already chosen',
    server: async (version) => {
      const { sdkClient } = await sdkClientAgainstOurPrimitives(version);
      expect(
        await sdkClient.complete({
          ref: { type: 'ref/prompt', name: 'summarize' },
          argument: { name: 'style', value: 't' },
          context: { arguments: { id: 'beta' } },
        }),
      ).toEqual({ completion: { values: ['terse', 'technical'] } });
      expect(
        await sdkClient.complete({
          ref: { type: 'ref/resource', uri: 'notes://{id}{?format}' },
          argument: { name: 'id', value: 'be' },
          context: { arguments: { format: 'md' } },
        }),
      ).toEqual({ completion: { values: ['beta.md'] } });
    },
  },
];
