/**
 * In-process interop with the official TypeScript SDK (no mocks) for every primitive beyond tools:
 * resources (templates, subscriptions), prompts, completion, logging, and the client features a server calls
 * (sampling, elicitation, roots). The SDK's `InMemoryTransport` pair, our end wrapped by `fromSdkTransport`.
 *
 * a. The SDK `Client` against our `Server`, for each revision (the SDK client always asks for its newest, so
 *    the older ones are reached by restricting our server's `protocolVersions`).
 * b. Our `Client` against the SDK `McpServer`, asking for each of the four revisions.
 *
 * Everything our side emits is checked against the official schema of the negotiated revision.
 */
import { Client as SdkClient } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { completable } from '@modelcontextprotocol/sdk/server/completable.js';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  CreateMessageRequestSchema,
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  McpError as SdkMcpError,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  RootsListChangedNotificationSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  UrlElicitationRequiredError as SdkUrlElicitationRequiredError,
  type CreateMessageRequest as SdkCreateMessageRequest,
  type ElicitRequest as SdkElicitRequest,
  type ElicitRequestFormParams as SdkElicitRequestFormParams,
  type LoggingMessageNotification,
} from '@modelcontextprotocol/sdk/types.js';
import { filter, firstValueFrom, Subject, take, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Client, type ClientOptions } from '../lib/client/client';
import { readUrlElicitations, urlElicitationRequiredData } from '../lib/client/elicitation';
import { CapabilityNotSupportedError, ErrorCode, McpError } from '../lib/jsonrpc/errors';
import type { CreateMessageResult, ElicitResult, Root } from '../lib/protocol/client-features';
import type { LoggingMessageParams } from '../lib/protocol/types';
import { SUPPORTED_PROTOCOL_VERSIONS, isAtLeast, type ProtocolVersion } from '../lib/protocol/versions';
import { defineServer } from '../lib/server/definition';
import type { PromptDefinition } from '../lib/server/prompts';
import type { ResourceDefinition, ResourceTemplateDefinition } from '../lib/server/resources';
import { Server, type ServerConnection } from '../lib/server/server';
import type { ToolDefinition } from '../lib/server/tools';
import { cleanups, connectOurClient, serveOverSdkTransport, watchSdkClient } from './helpers/sdk';
import { deferred } from './helpers/fixtures';

/** Registers a test only where it applies (a revision that has the feature): nothing shows as skipped. */
const onlyWhen = (applies: boolean) => (applies ? it : () => undefined) as typeof it;

// ---- helpers --------------------------------------------------------------------------------------

const VERSIONS = [...SUPPORTED_PROTOCOL_VERSIONS];

/** The JSON a tool put in its first text block. */
function textOf(result: unknown): any {
  const blocks = (result as { content: { type: string; text: string }[] }).content;
  expect(blocks[0]?.type).toBe('text');
  return JSON.parse(blocks[0]!.text);
}

const json = (value: unknown) => ({ content: [{ type: 'text' as const, text: JSON.stringify(value) }] });

const FORM_SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, title: 'Name' },
    age: { type: 'integer', minimum: 0, default: 42 },
    newsletter: { type: 'boolean', default: false },
  },
  required: ['name'],
} as const;

const URL_ELICITATION = {
  mode: 'url',
  message: 'Sign in to continue',
  elicitationId: 'elicitation-1',
  url: 'https://auth.example.com/start?session=1',
} as const;

// ---- a. the SDK client against our server ---------------------------------------------------------

const README: ResourceDefinition = {
  uri: 'docs://readme',
  name: 'readme',
  title: 'Read me',
  description: 'What this is',
  mimeType: 'text/markdown',
  annotations: { audience: ['user'], priority: 0.5 },
  read: () => '# Readme',
};

const LOGO: ResourceDefinition = {
  uri: 'docs://logo',
  name: 'logo',
  mimeType: 'image/png',
  read: () => ({ blob: 'iVBORw0KGgo=' }),
};

const BUNDLE: ResourceDefinition = {
  uri: 'docs://bundle',
  name: 'bundle',
  read: () => [
    { uri: 'docs://bundle/a', mimeType: 'text/plain', text: 'A' },
    { uri: 'docs://bundle/b', mimeType: 'application/octet-stream', blob: 'Qg==' },
  ],
};

const NOTE_IDS = ['alpha', 'alpine', 'beta', 'gamma'];

const PROMPT_WIRE = [
  {
    name: 'summarize',
    title: 'Summarize',
    description: 'Summarizes a note',
    arguments: [
      { name: 'id', description: 'The note', required: true },
      { name: 'style', description: 'How', required: false },
    ],
  },
  { name: 'hello', description: 'Says hello' },
] as const;

interface OurServerSetup {
  readonly sdkClient: SdkClient;
  readonly server: Server;
  readonly connection: ServerConnection;
  /** Emitting sends notifications/resources/updated for docs://counter to its subscribers. */
  readonly counterChanges: Subject<void>;
  /** What the SDK client reported through `onerror`. */
  readonly sdkErrors: Error[];
  /** Everything our server connection sent. */
  readonly sent: Record<string, any>[];
  /** The requests the SDK client's handlers received. */
  readonly asked: { sampling: SdkCreateMessageRequest['params'][]; elicitation: SdkElicitRequest['params'][] };
  roots: { uri: string; name?: string; _meta?: Record<string, unknown> }[];
}

function ourDefinition(version: ProtocolVersion, counterChanges: Subject<void>) {
  const counter: ResourceDefinition = {
    uri: 'docs://counter',
    name: 'counter',
    mimeType: 'text/plain',
    read: () => 'count',
    updates: counterChanges,
  };
  const note: ResourceTemplateDefinition = {
    uriTemplate: 'notes://{id}{?format}',
    name: 'note',
    title: 'Note',
    description: 'A note by id',
    mimeType: 'text/plain',
    read: ({ id, format }, context, uri) => ({
      text: `note ${String(id)} as ${String(format ?? 'text')} for ${context.connection.clientInfo?.name} (${uri})`,
    }),
    complete: {
      id: (value, { arguments: chosen }) =>
        NOTE_IDS.filter((id) => id.startsWith(value)).map((id) => (chosen.format ? `${id}.${chosen.format}` : id)),
    },
  };
  const summarize: PromptDefinition = {
    ...PROMPT_WIRE[0],
    get: ({ id, style }) => [
      { role: 'user', content: { type: 'text', text: `Summarize note ${id}${style ? ` in a ${style} style` : ''}` } },
      {
        role: 'user',
        content: {
          type: 'resource',
          resource: { uri: `notes://${id}`, mimeType: 'text/plain', text: `note ${id}` },
        },
      },
      { role: 'assistant', content: { type: 'text', text: 'Here is the summary:' } },
    ],
    complete: {
      id: (value) => NOTE_IDS.filter((id) => id.startsWith(value)),
      style: (value, { arguments: chosen }) =>
        (chosen.id === 'beta' ? ['terse', 'technical'] : ['terse', 'friendly']).filter((s) => s.startsWith(value)),
    },
  };
  const hello: PromptDefinition = {
    ...PROMPT_WIRE[1],
    get: () => ({ description: 'A greeting', messages: [{ role: 'user', content: { type: 'text', text: 'Hello!' } }] }),
  };
  const tools: ToolDefinition<any>[] = [
    {
      name: 'sample',
      inputSchema: { type: 'object' },
      handler: async (_args, context) =>
        json(
          await context.createMessage({
            messages: [{ role: 'user', content: { type: 'text', text: 'Say hi' } }],
            systemPrompt: 'Be brief',
            maxTokens: 20,
          }),
        ),
    },
    {
      name: 'ask',
      inputSchema: { type: 'object' },
      handler: async (_args, context) =>
        json(await context.elicit({ message: 'Your details?', requestedSchema: FORM_SCHEMA })),
    },
    {
      name: 'open-url',
      inputSchema: { type: 'object' },
      handler: async (_args, context) => json(await context.elicit(URL_ELICITATION)),
    },
    {
      name: 'needs-browser',
      inputSchema: { type: 'object' },
      handler: () => {
        throw new McpError(
          ErrorCode.UrlElicitationRequired,
          'Open the link first',
          urlElicitationRequiredData([URL_ELICITATION]),
        );
      },
    },
    {
      name: 'roots',
      inputSchema: { type: 'object' },
      handler: async (_args, context) => json(await context.listRoots()),
    },
    {
      name: 'log',
      inputSchema: { type: 'object' },
      handler: async (_args, context) => {
        await context.log('debug', 'debug detail', 'interop');
        await context.log('info', { step: 1 }, 'interop');
        await context.log('warning', { step: 2 }, 'interop');
        await context.log('error', 'last', 'interop');
        return { content: [{ type: 'text', text: 'logged' }] };
      },
    },
  ];
  return defineServer({
    name: 'switchboard-server',
    version: '1.2.3',
    protocolVersions: [version],
    resources: [README, LOGO, BUNDLE, counter],
    resourceTemplates: [note],
    prompts: [summarize, hello],
    tools,
  });
}

async function sdkClientAgainstOurServer(version: ProtocolVersion): Promise<OurServerSetup> {
  const counterChanges = new Subject<void>();
  const [sdkSide, ourSide] = InMemoryTransport.createLinkedPair();
  const server = new Server(ourDefinition(version, counterChanges));
  const { connection, sent } = serveOverSdkTransport(server, ourSide);

  const sdkClient = new SdkClient(
    { name: 'sdk-client', version: '9.9.9' },
    { capabilities: { sampling: {}, elicitation: { form: {}, url: {} }, roots: { listChanged: true } } },
  );
  const setup: OurServerSetup = {
    sdkClient,
    server,
    connection,
    counterChanges,
    sdkErrors: [],
    sent,
    asked: { sampling: [], elicitation: [] },
    roots: [{ uri: 'file:///home/ada/project', name: 'project' }],
  };
  sdkClient.onerror = (error) => setup.sdkErrors.push(error);
  sdkClient.setRequestHandler(CreateMessageRequestSchema, (request) => {
    setup.asked.sampling.push(request.params);
    return {
      role: 'assistant',
      content: { type: 'text', text: 'hi from the SDK' },
      model: 'sdk-model',
      stopReason: 'endTurn',
    };
  });
  sdkClient.setRequestHandler(ElicitRequestSchema, (request) => {
    setup.asked.elicitation.push(request.params);
    return request.params.mode === 'url' ? { action: 'accept' } : { action: 'accept', content: { name: 'Ada' } };
  });
  sdkClient.setRequestHandler(ListRootsRequestSchema, () => ({ roots: setup.roots }));
  cleanups.push(
    () => server.close(),
    () => sdkClient.close(),
  );
  await sdkClient.connect(sdkSide);
  expect(connection.protocolVersion).toBe(version);
  return setup;
}

/** The next `count` log messages the SDK client receives (its handler replaced each time). */
function sdkLogs(sdkClient: SdkClient, count: number): Promise<LoggingMessageNotification['params'][]> {
  const seen: LoggingMessageNotification['params'][] = [];
  const done = deferred<LoggingMessageNotification['params'][]>();
  sdkClient.setNotificationHandler(LoggingMessageNotificationSchema, ({ params }) => {
    seen.push(params);
    if (seen.length === count) done.resolve(seen);
  });
  return done.promise;
}

describe.each(VERSIONS)('the SDK client against our server, negotiating %s', (version) => {
  it('sees resources (with subscribe), prompts, completions and logging declared', async () => {
    const { sdkClient, connection, sdkErrors } = await sdkClientAgainstOurServer(version);
    expect(sdkClient.getServerCapabilities()).toEqual({
      logging: {},
      completions: {},
      prompts: { listChanged: true },
      resources: { subscribe: true, listChanged: true },
      tools: { listChanged: true },
    });
    expect(connection.clientCapabilities).toEqual({
      sampling: {},
      elicitation: { form: {}, url: {} },
      roots: { listChanged: true },
    });
    expect(sdkErrors).toEqual([]);
  });

  it('lists resources and resource templates with the fields this revision carries', async () => {
    const { sdkClient } = await sdkClientAgainstOurServer(version);
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
    expect((await sdkClient.listResourceTemplates()).resourceTemplates).toEqual([
      {
        uriTemplate: 'notes://{id}{?format}',
        name: 'note',
        ...(modern && { title: 'Note' }),
        description: 'A note by id',
        mimeType: 'text/plain',
      },
    ]);
  });

  it('reads text, a blob, several contents and a template URI', async () => {
    const { sdkClient, sdkErrors } = await sdkClientAgainstOurServer(version);
    expect(await sdkClient.readResource({ uri: 'docs://readme' })).toEqual({
      contents: [{ uri: 'docs://readme', mimeType: 'text/markdown', text: '# Readme' }],
    });
    expect(await sdkClient.readResource({ uri: 'docs://logo' })).toEqual({
      contents: [{ uri: 'docs://logo', mimeType: 'image/png', blob: 'iVBORw0KGgo=' }],
    });
    expect(await sdkClient.readResource({ uri: 'docs://bundle' })).toEqual({
      contents: [
        { uri: 'docs://bundle/a', mimeType: 'text/plain', text: 'A' },
        { uri: 'docs://bundle/b', mimeType: 'application/octet-stream', blob: 'Qg==' },
      ],
    });
    const uri = 'notes://beta?format=md';
    expect(await sdkClient.readResource({ uri })).toEqual({
      contents: [{ uri, mimeType: 'text/plain', text: `note beta as md for sdk-client (${uri})` }],
    });
    expect(sdkErrors).toEqual([]);
  });

  it('answers an unknown URI with -32002 (the URI in data), which the SDK throws as McpError', async () => {
    const { sdkClient } = await sdkClientAgainstOurServer(version);
    const failure = await sdkClient.readResource({ uri: 'docs://nope' }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SdkMcpError);
    expect(failure).toMatchObject({ code: -32002, data: { uri: 'docs://nope' } });
    expect((failure as Error).message).toMatch(/Resource not found: docs:\/\/nope/);
    // Subscribing to it is refused the same way.
    await expect(sdkClient.subscribeResource({ uri: 'docs://nope' })).rejects.toMatchObject({ code: -32002 });
  });

  it('sends resources/updated for the subscribed URIs only, and stops after unsubscribe', async () => {
    const { sdkClient, server, counterChanges, sent, sdkErrors } = await sdkClientAgainstOurServer(version);
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

    expect(await sdkClient.unsubscribeResource({ uri: 'docs://counter' })).toEqual({});
    expect(server.subscriptions.size).toBe(1);
    counterChanges.next();
    server.resourceUpdated('docs://counter');
    arrived = next('notes://alpha');
    server.resourceUpdated('notes://alpha');
    await arrived;
    expect(updates).toEqual(['docs://counter', 'notes://alpha', 'notes://alpha']);
    expect(sent.filter((message) => message.method === 'notifications/resources/updated')).toHaveLength(3);
    expect(sdkErrors).toEqual([]);
  });

  it('tells the SDK client when the resource and prompt lists change', async () => {
    const { sdkClient, server } = await sdkClientAgainstOurServer(version);
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
  });

  it('lists prompts and gets one with arguments', async () => {
    const { sdkClient, sdkErrors } = await sdkClientAgainstOurServer(version);
    const { prompts } = await sdkClient.listPrompts();
    const [summarize, hello] = PROMPT_WIRE;
    const { title: _title, ...untitled } = summarize;
    expect(prompts).toEqual([isAtLeast(version, '2025-06-18') ? summarize : untitled, hello]);
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
    expect(await sdkClient.getPrompt({ name: 'hello' })).toEqual({
      description: 'A greeting',
      messages: [{ role: 'user', content: { type: 'text', text: 'Hello!' } }],
    });
    expect(sdkErrors).toEqual([]);
  });

  it('answers a missing required argument or an unknown prompt with -32602', async () => {
    const { sdkClient } = await sdkClientAgainstOurServer(version);
    const missing = await sdkClient
      .getPrompt({ name: 'summarize', arguments: { style: 'terse' } })
      .catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(SdkMcpError);
    expect(missing).toMatchObject({ code: -32602 });
    expect((missing as Error).message).toMatch(/needs the argument "id"/);
    await expect(sdkClient.getPrompt({ name: 'nope' })).rejects.toMatchObject({ code: -32602 });
  });

  it('completes a prompt argument and a resource-template variable', async () => {
    const { sdkClient } = await sdkClientAgainstOurServer(version);
    expect(
      await sdkClient.complete({
        ref: { type: 'ref/prompt', name: 'summarize' },
        argument: { name: 'id', value: 'al' },
      }),
    ).toEqual({ completion: { values: ['alpha', 'alpine'] } });
    expect(
      await sdkClient.complete({
        ref: { type: 'ref/resource', uri: 'notes://{id}{?format}' },
        argument: { name: 'id', value: 'g' },
      }),
    ).toEqual({ completion: { values: ['gamma'] } });
    // A prompt argument without a completer of its own completes to nothing; an unknown one is -32602.
    expect(
      await sdkClient.complete({
        ref: { type: 'ref/prompt', name: 'summarize' },
        argument: { name: 'id', value: 'z' },
      }),
    ).toEqual({ completion: { values: [] } });
    await expect(
      sdkClient.complete({ ref: { type: 'ref/prompt', name: 'summarize' }, argument: { name: 'nope', value: '' } }),
    ).rejects.toMatchObject({ code: -32602 });
    if (isAtLeast(version, '2025-06-18')) {
      // The arguments already chosen reach the completer.
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
    }
  });

  it('filters log messages by the level the SDK client set', async () => {
    const { sdkClient, sdkErrors } = await sdkClientAgainstOurServer(version);
    let logs = sdkLogs(sdkClient, 2);
    expect(await sdkClient.setLoggingLevel('warning')).toEqual({});
    expect(await sdkClient.callTool({ name: 'log', arguments: {} })).toEqual({
      content: [{ type: 'text', text: 'logged' }],
    });
    expect(await logs).toEqual([
      { level: 'warning', logger: 'interop', data: { step: 2 } },
      { level: 'error', logger: 'interop', data: 'last' },
    ]);

    logs = sdkLogs(sdkClient, 4);
    await sdkClient.setLoggingLevel('debug');
    await sdkClient.callTool({ name: 'log', arguments: {} });
    expect((await logs).map((params) => params.level)).toEqual(['debug', 'info', 'warning', 'error']);
    expect(sdkErrors).toEqual([]);
  });

  it("asks the SDK client's model from inside a tool (sampling/createMessage)", async () => {
    const { sdkClient, asked, sdkErrors } = await sdkClientAgainstOurServer(version);
    expect(textOf(await sdkClient.callTool({ name: 'sample', arguments: {} }))).toEqual({
      role: 'assistant',
      content: { type: 'text', text: 'hi from the SDK' },
      model: 'sdk-model',
      stopReason: 'endTurn',
    });
    expect(asked.sampling).toEqual([
      {
        messages: [{ role: 'user', content: { type: 'text', text: 'Say hi' } }],
        systemPrompt: 'Be brief',
        maxTokens: 20,
      },
    ]);
    expect(sdkErrors).toEqual([]);
  });

  it("lists the SDK client's roots from inside a tool, and hears its roots/list_changed", async () => {
    const setup = await sdkClientAgainstOurServer(version);
    const { sdkClient, connection } = setup;
    expect(textOf(await sdkClient.callTool({ name: 'roots', arguments: {} }))).toEqual([
      { uri: 'file:///home/ada/project', name: 'project' },
    ]);
    const changed = firstValueFrom(
      connection.notifications$.pipe(
        filter((notification) => notification.method === 'notifications/roots/list_changed'),
        take(1),
      ),
    );
    setup.roots = [{ uri: 'file:///tmp/work' }, { uri: 'file:///tmp/other', name: 'other' }];
    await sdkClient.sendRootsListChanged();
    expect(await changed).toEqual({ jsonrpc: '2.0', method: 'notifications/roots/list_changed' });
    expect(textOf(await sdkClient.callTool({ name: 'roots', arguments: {} }))).toEqual(setup.roots);
  });

  it('elicits a form through the SDK client from 2025-06-18, and refuses before without sending', async () => {
    const { sdkClient, asked, sent } = await sdkClientAgainstOurServer(version);
    const result = await sdkClient.callTool({ name: 'ask', arguments: {} });
    if (isAtLeast(version, '2025-06-18')) {
      expect(textOf(result)).toEqual({ action: 'accept', content: { name: 'Ada' } });
      // No `mode` on the wire (form is the default); the SDK fills it in only on its own parsed copy.
      expect(asked.elicitation).toEqual([{ message: 'Your details?', requestedSchema: FORM_SCHEMA }]);
    } else {
      expect(result).toMatchObject({
        isError: true,
        content: [{ type: 'text', text: expect.stringContaining('needs protocol version 2025-06-18') }],
      });
      expect(asked.elicitation).toEqual([]);
      expect(sent.filter((message) => message.method === 'elicitation/create')).toEqual([]);
    }
  });

  it('elicits through a URL in 2025-11-25 (with completion and -32042), and refuses before without sending', async () => {
    const { sdkClient, connection, asked, sent, sdkErrors } = await sdkClientAgainstOurServer(version);
    const result = await sdkClient.callTool({ name: 'open-url', arguments: {} });
    if (version === '2025-11-25') {
      expect(textOf(result)).toEqual({ action: 'accept' });
      expect(asked.elicitation).toEqual([URL_ELICITATION]);

      const completed = deferred<unknown>();
      sdkClient.setNotificationHandler(ElicitationCompleteNotificationSchema, ({ params }) =>
        completed.resolve(params),
      );
      await connection.notify('notifications/elicitation/complete', { elicitationId: 'elicitation-1' });
      expect(await completed.promise).toEqual({ elicitationId: 'elicitation-1' });

      // The SDK turns a -32042 error into its UrlElicitationRequiredError with the elicitations we sent.
      const failure = await sdkClient
        .callTool({ name: 'needs-browser', arguments: {} })
        .catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(SdkUrlElicitationRequiredError);
      expect(failure).toMatchObject({ code: -32042 });
      expect((failure as SdkUrlElicitationRequiredError).elicitations).toEqual([URL_ELICITATION]);
    } else {
      // URL mode is a 2025-11-25 feature: even though the SDK client declared elicitation.url, nothing is sent.
      expect(result).toMatchObject({ isError: true });
      expect(asked.elicitation).toEqual([]);
      expect(sent.filter((message) => message.method === 'elicitation/create')).toEqual([]);
      await expect(
        connection.notify('notifications/elicitation/complete', { elicitationId: 'elicitation-1' }),
      ).rejects.toBeInstanceOf(CapabilityNotSupportedError);
    }
    expect(sdkErrors).toEqual([]);
  });
});

// ---- b. our client against the SDK server ---------------------------------------------------------

interface SdkServerHooks {
  readonly subscribed: string[];
  readonly unsubscribed: string[];
  readonly subscribeSeen: Subject<string>;
  readonly unsubscribeSeen: Subject<string>;
  readonly rootsChanged: Subject<void>;
}

interface SdkServerSetup {
  readonly client: Client;
  readonly mcp: McpServer;
  readonly hooks: SdkServerHooks;
  readonly sdkErrors: Error[];
}

const LANGUAGES = ['python', 'typescript', 'typst'];

function primitivesSdkServer(hooks: SdkServerHooks): McpServer {
  // McpServer declares resources without `subscribe`: we declare it and serve subscriptions on the low-level server.
  const mcp = new McpServer(
    { name: 'sdk-server', version: '2.0.0' },
    { capabilities: { logging: {}, resources: { subscribe: true } } },
  );
  mcp.registerResource(
    'readme',
    'docs://readme',
    { title: 'Read me', description: 'What this is', mimeType: 'text/markdown' },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/markdown', text: '# SDK readme' }] }),
  );
  mcp.registerResource('logo', 'docs://logo', { mimeType: 'image/png' }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'image/png', blob: 'iVBORw0KGgo=' }],
  }));
  mcp.registerResource(
    'note',
    new ResourceTemplate('notes://{id}', {
      list: async () => ({ resources: [{ uri: 'notes://alpha', name: 'alpha' }] }),
      complete: { id: (value) => NOTE_IDS.filter((id) => id.startsWith(value)) },
    }),
    { title: 'Note', description: 'A note by id', mimeType: 'text/plain' },
    async (uri, { id }) => ({ contents: [{ uri: uri.href, text: `note ${String(id)}` }] }),
  );
  mcp.registerPrompt(
    'review',
    {
      title: 'Review',
      description: 'Reviews code',
      argsSchema: {
        language: completable(z.string(), (value) => LANGUAGES.filter((language) => language.startsWith(value))),
        code: z.string().describe('The code'),
      },
    },
    ({ language, code }) => ({
      messages: [{ role: 'user', content: { type: 'text', text: `Review this ${language}:\n${code}` } }],
    }),
  );
  mcp.server.setRequestHandler(SubscribeRequestSchema, ({ params }) => {
    hooks.subscribed.push(params.uri);
    hooks.subscribeSeen.next(params.uri);
    return {};
  });
  mcp.server.setRequestHandler(UnsubscribeRequestSchema, ({ params }) => {
    hooks.unsubscribed.push(params.uri);
    hooks.unsubscribeSeen.next(params.uri);
    return {};
  });
  mcp.server.setNotificationHandler(RootsListChangedNotificationSchema, () => hooks.rootsChanged.next());

  mcp.registerTool('sample', { description: 'Asks the client model' }, async (extra) => {
    const result = await mcp.server.createMessage(
      {
        messages: [{ role: 'user', content: { type: 'text', text: 'Say hi' } }],
        systemPrompt: 'Be brief',
        maxTokens: 20,
      },
      { relatedRequestId: extra.requestId },
    );
    return json(result);
  });
  mcp.registerTool('ask', { description: 'Asks the user' }, async () =>
    json(
      await mcp.server.elicitInput({
        message: 'Your details?',
        requestedSchema: FORM_SCHEMA as unknown as SdkElicitRequestFormParams['requestedSchema'],
      }),
    ),
  );
  mcp.registerTool('open-url', { description: 'Sends the user to a URL' }, async () =>
    json(await mcp.server.elicitInput(URL_ELICITATION)),
  );
  mcp.registerTool('needs-browser', { description: 'Needs a URL elicitation first' }, async () => {
    throw new SdkUrlElicitationRequiredError([URL_ELICITATION], 'Open the link first');
  });
  mcp.registerTool('roots', { description: "Lists the client's roots" }, async () =>
    json((await mcp.server.listRoots()).roots),
  );
  mcp.registerTool('log', { description: 'Logs at several levels' }, async () => {
    await mcp.server.sendLoggingMessage({ level: 'debug', logger: 'sdk', data: 'debug detail' });
    await mcp.server.sendLoggingMessage({ level: 'info', logger: 'sdk', data: { step: 1 } });
    await mcp.sendLoggingMessage({ level: 'warning', logger: 'sdk', data: { step: 2 } });
    await mcp.sendLoggingMessage({ level: 'error', data: 'last' });
    return { content: [{ type: 'text', text: 'logged' }] };
  });
  return mcp;
}

const SAMPLED: CreateMessageResult = {
  role: 'assistant',
  content: { type: 'text', text: 'hi from switchboard' },
  model: 'switchboard-model',
  stopReason: 'endTurn',
};

const OUR_ROOTS: Root[] = [{ uri: 'file:///home/ada/project', name: 'project', _meta: { 'example.com/vcs': 'git' } }];

async function ourClientAgainstSdkServer(
  version: ProtocolVersion,
  options: ClientOptions = {},
): Promise<SdkServerSetup & { seen: { sampling: unknown[]; form: unknown[]; url: unknown[] } }> {
  const hooks: SdkServerHooks = {
    subscribed: [],
    unsubscribed: [],
    subscribeSeen: new Subject(),
    unsubscribeSeen: new Subject(),
    rootsChanged: new Subject(),
  };
  const mcp = primitivesSdkServer(hooks);
  const sdkErrors: Error[] = [];
  mcp.server.onerror = (error) => sdkErrors.push(error);
  const seen = { sampling: [] as unknown[], form: [] as unknown[], url: [] as unknown[] };
  const client = await connectOurClient(mcp, {
    protocolVersion: version,
    sampling: (params) => (seen.sampling.push(params), SAMPLED),
    elicitation: {
      form: (params) => (seen.form.push(params), { action: 'accept', content: { name: 'Ada' } }),
      url: (params) => (seen.url.push(params), { action: 'accept' }),
    },
    roots: OUR_ROOTS,
    ...options,
  });
  expect(client.protocolVersion).toBe(version);
  return { client, mcp, hooks, sdkErrors, seen };
}

describe.each(VERSIONS)('our client against the SDK McpServer, negotiating %s', (version) => {
  it('sees the resources (with subscribe), prompts and completions the SDK server declares', async () => {
    const { client, mcp, sdkErrors } = await ourClientAgainstSdkServer(version);
    expect(client.serverCapabilities).toEqual({
      logging: {},
      resources: { subscribe: true, listChanged: true },
      completions: {},
      prompts: { listChanged: true },
      tools: { listChanged: true },
    });
    expect(mcp.server.getClientCapabilities()).toMatchObject({ sampling: {}, roots: { listChanged: true } });
    if (version === '2025-11-25') {
      expect(mcp.server.getClientCapabilities()?.elicitation).toEqual({ form: {}, url: {} });
    }
    expect(sdkErrors).toEqual([]);
  });

  it("lists resources (a template's list callback included) and resource templates", async () => {
    const { client } = await ourClientAgainstSdkServer(version);
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
    expect(await client.listResourceTemplates()).toEqual([
      { uriTemplate: 'notes://{id}', name: 'note', title: 'Note', description: 'A note by id', mimeType: 'text/plain' },
    ]);
    expect(await client.resourceList.get()).toHaveLength(3);
  });

  it('reads text, a blob and a template URI; an unknown URI is an McpError', async () => {
    const { client, sdkErrors } = await ourClientAgainstSdkServer(version);
    expect(await client.readResource('docs://readme')).toEqual({
      contents: [{ uri: 'docs://readme', mimeType: 'text/markdown', text: '# SDK readme' }],
    });
    expect(await client.readResource('docs://logo')).toEqual({
      contents: [{ uri: 'docs://logo', mimeType: 'image/png', blob: 'iVBORw0KGgo=' }],
    });
    expect(await client.readResource('notes://beta')).toEqual({
      contents: [{ uri: 'notes://beta', text: 'note beta' }],
    });
    const failure = await client.readResource('docs://nope').catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(McpError);
    // The SDK McpServer answers an unknown resource with -32602, not the spec's -32002.
    expect(failure).toMatchObject({ code: -32602, message: expect.stringMatching(/docs:\/\/nope not found/) });
    expect(sdkErrors).toEqual([]);
  });

  it('subscribes, receives notifications/resources/updated, and unsubscribes', async () => {
    const { client, mcp, hooks, sdkErrors } = await ourClientAgainstSdkServer(version);
    const subscribed = firstValueFrom(hooks.subscribeSeen);
    const updates = firstValueFrom(client.subscribeResource('docs://readme').pipe(take(2), toArray()));
    expect(await subscribed).toBe('docs://readme');
    const unsubscribed = firstValueFrom(hooks.unsubscribeSeen);
    await mcp.server.sendResourceUpdated({ uri: 'docs://logo' }); // another resource: not for this subscriber
    await mcp.server.sendResourceUpdated({ uri: 'docs://readme' });
    await mcp.server.sendResourceUpdated({ uri: 'docs://readme' });
    expect(await updates).toEqual([{ uri: 'docs://readme' }, { uri: 'docs://readme' }]);
    // The last subscriber went away (take(2) completed): resources/unsubscribe.
    expect(await unsubscribed).toBe('docs://readme');
    expect(hooks.subscribed).toEqual(['docs://readme']);
    expect(hooks.unsubscribed).toEqual(['docs://readme']);

    // A template URI too.
    const again = firstValueFrom(hooks.subscribeSeen);
    const note = firstValueFrom(client.subscribeResource('notes://beta'));
    expect(await again).toBe('notes://beta');
    await mcp.server.sendResourceUpdated({ uri: 'notes://beta' });
    expect(await note).toEqual({ uri: 'notes://beta' });
    expect(sdkErrors).toEqual([]);
  });

  it('refuses locally to subscribe when the SDK server does not declare resources.subscribe', async () => {
    // McpServer alone declares resources with listChanged only.
    const mcp = new McpServer({ name: 'plain-sdk-server', version: '1.0.0' });
    mcp.registerResource('readme', 'docs://readme', {}, async (uri) => ({ contents: [{ uri: uri.href, text: 'x' }] }));
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
  });

  it('refreshes its resource and prompt caches on list_changed', async () => {
    const { client, mcp } = await ourClientAgainstSdkServer(version);
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
    await Promise.all([secondResources.promise, secondPrompts.promise]);
    subscriptions.forEach((subscription) => subscription.unsubscribe());
    expect(resourceLists).toEqual([
      ['docs://readme', 'docs://logo', 'notes://alpha'],
      ['docs://readme', 'docs://logo', 'docs://late', 'notes://alpha'],
    ]);
    expect(promptLists).toEqual([['review'], ['review', 'late']]);
  });

  it('lists prompts and gets one with arguments; a missing argument is -32602', async () => {
    const { client } = await ourClientAgainstSdkServer(version);
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
    expect(await client.getPrompt('review', { language: 'python', code: 'print(1)' })).toEqual({
      messages: [{ role: 'user', content: { type: 'text', text: 'Review this python:\nprint(1)' } }],
    });
    const failure = await client.getPrompt('review', { language: 'python' }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(McpError);
    expect(failure).toMatchObject({ code: -32602 });
    await expect(client.getPrompt('nope', {})).rejects.toMatchObject({ code: -32602 });
  });

  it('completes a completable prompt argument and a template variable', async () => {
    const { client } = await ourClientAgainstSdkServer(version);
    expect(
      await client.complete({
        ref: { type: 'ref/prompt', name: 'review' },
        argument: { name: 'language', value: 'ty' },
      }),
    ).toEqual({ values: ['typescript', 'typst'], total: 2, hasMore: false });
    expect(
      await client.complete({
        ref: { type: 'ref/resource', uri: 'notes://{id}' },
        argument: { name: 'id', value: 'al' },
      }),
    ).toEqual({ values: ['alpha', 'alpine'], total: 2, hasMore: false });
    // `code` is not completable: nothing to suggest.
    expect(
      await client.complete({ ref: { type: 'ref/prompt', name: 'review' }, argument: { name: 'code', value: 'x' } }),
    ).toEqual({ values: [], hasMore: false });
  });

  it('sets the logging level and receives the log messages on logs$', async () => {
    const { client, mcp } = await ourClientAgainstSdkServer(version);
    let logs = firstValueFrom(client.logs$.pipe(take(4), toArray()));
    // Before logging/setLevel the SDK server sends every level.
    expect(await client.callTool('log', {})).toEqual({ content: [{ type: 'text', text: 'logged' }] });
    expect((await logs).map((log) => log.level)).toEqual(['debug', 'info', 'warning', 'error']);

    await client.setLoggingLevel('warning');
    logs = firstValueFrom(client.logs$.pipe(take(3), toArray()));
    await client.callTool('log', {});
    await mcp.sendLoggingMessage({ level: 'notice', data: 'filtered out' });
    await mcp.sendLoggingMessage({ level: 'critical', logger: 'outside', data: 'outside a tool' });
    expect(await logs).toEqual<LoggingMessageParams[]>([
      { level: 'warning', logger: 'sdk', data: { step: 2 } },
      { level: 'error', data: 'last' },
      { level: 'critical', logger: 'outside', data: 'outside a tool' },
    ]);
  });

  it("answers the SDK server's sampling request with our sampling handler", async () => {
    const { client, seen, sdkErrors } = await ourClientAgainstSdkServer(version);
    expect(textOf(await client.callTool('sample', {}))).toEqual(SAMPLED);
    expect(seen.sampling).toEqual([
      {
        messages: [{ role: 'user', content: { type: 'text', text: 'Say hi' } }],
        systemPrompt: 'Be brief',
        maxTokens: 20,
      },
    ]);
    expect(sdkErrors).toEqual([]);
  });

  it("answers roots/list with our roots, and setRoots reaches the SDK server's handler", async () => {
    const { client, hooks } = await ourClientAgainstSdkServer(version);
    // Root._meta exists from 2025-06-18: our client leaves it out for older revisions.
    expect(textOf(await client.callTool('roots', {}))).toEqual(
      isAtLeast(version, '2025-06-18') ? OUR_ROOTS : [{ uri: 'file:///home/ada/project', name: 'project' }],
    );
    const changed = firstValueFrom(hooks.rootsChanged);
    await client.setRoots([{ uri: 'file:///tmp/work' }]);
    await changed;
    expect(textOf(await client.callTool('roots', {}))).toEqual([{ uri: 'file:///tmp/work' }]);
  });

  onlyWhen(isAtLeast(version, '2025-06-18'))(
    "answers the SDK server's form elicitation with our form handler, defaults applied",
    async () => {
      const { client, seen, sdkErrors } = await ourClientAgainstSdkServer(version);
      // The SDK server checks the content against the requested schema before handing it to the tool.
      expect(textOf(await client.callTool('ask', {}))).toEqual({
        action: 'accept',
        content: { name: 'Ada', age: 42, newsletter: false },
      });
      expect(seen.form).toEqual([{ mode: 'form', message: 'Your details?', requestedSchema: FORM_SCHEMA }]);

      // Declining is passed through as is.
      const { client: declining } = await ourClientAgainstSdkServer(version, {
        elicitation: { form: (): ElicitResult => ({ action: 'decline' }) },
      });
      expect(textOf(await declining.callTool('ask', {}))).toEqual({ action: 'decline' });
      expect(sdkErrors).toEqual([]);
    },
  );

  onlyWhen(version === '2025-06-18')('does not take part in URL-mode elicitation, a 2025-11-25 feature', async () => {
    const { mcp, seen } = await ourClientAgainstSdkServer(version);
    // Whether the SDK server refuses locally (no elicitation.url declared) or our client answers with an error,
    // the URL handler must not run for a request this revision cannot express (it has no URL mode).
    const outcome = await mcp.server.elicitInput(URL_ELICITATION).catch((error: unknown) => error);
    expect(seen.url).toEqual([]);
    expect(outcome).toBeInstanceOf(Error);
  });

  onlyWhen(version === '2025-11-25')(
    "answers the SDK server's URL elicitation, hears its completion, and reads its -32042",
    async () => {
      const { client, mcp, seen, sdkErrors } = await ourClientAgainstSdkServer(version);
      expect(textOf(await client.callTool('open-url', {}))).toEqual({ action: 'accept' });
      expect(seen.url).toEqual([URL_ELICITATION]);

      const completed = firstValueFrom(client.elicitationComplete$);
      await mcp.server.createElicitationCompletionNotifier('elicitation-1')();
      expect(await completed).toEqual({ elicitationId: 'elicitation-1' });

      const failure = await client.callTool('needs-browser', {}).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(McpError);
      // The SDK sends its error's own message, "MCP error <code>: " prefix included.
      expect(failure).toMatchObject({ code: -32042, message: 'MCP error -32042: Open the link first' });
      expect(readUrlElicitations(failure)).toEqual([URL_ELICITATION]);
      expect(sdkErrors).toEqual([]);
    },
  );
});

describe('errors thrown by our tool handlers, as the SDK client sees them', () => {
  it('an McpError is a JSON-RPC error with its code, message and data; other failures are isError results', async () => {
    const server = new Server(
      defineServer({
        name: 'throwing',
        version: '1',
        tools: [
          {
            name: 'typed',
            inputSchema: { type: 'object' },
            handler: () => {
              throw new McpError(-32000, 'quota exceeded', { retryAfterSeconds: 30 });
            },
          },
          {
            name: 'plain',
            inputSchema: { type: 'object' },
            handler: async () => {
              throw new Error('cannot read the file');
            },
          },
          {
            name: 'ask-model',
            inputSchema: { type: 'object' },
            handler: async (_args, ctx) =>
              json(
                await ctx.createMessage({
                  messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }],
                  maxTokens: 5,
                }),
              ),
          },
        ],
      }),
    );
    const [ourSide, sdkSide] = InMemoryTransport.createLinkedPair();
    serveOverSdkTransport(server, ourSide);
    const sdkClient = new SdkClient({ name: 'sdk', version: '1' }, { capabilities: { sampling: {} } });
    sdkClient.setRequestHandler(CreateMessageRequestSchema, () => {
      throw new SdkMcpError(-1, 'The user rejected the sampling request');
    });
    const sdkErrors = watchSdkClient(sdkClient, server);
    await sdkClient.connect(sdkSide);

    const typed = await sdkClient.callTool({ name: 'typed', arguments: {} }).catch((error: unknown) => error);
    expect(typed).toBeInstanceOf(SdkMcpError);
    expect(typed).toMatchObject({ code: -32000, data: { retryAfterSeconds: 30 } });
    expect((typed as Error).message).toContain('quota exceeded');
    expect(await sdkClient.callTool({ name: 'plain', arguments: {} })).toEqual({
      content: [{ type: 'text', text: 'cannot read the file' }],
      isError: true,
    });
    // The client's own refusal, let escape by the handler, is a failure the model reads: not sent back as -1.
    const refused = await sdkClient.callTool({ name: 'ask-model', arguments: {} });
    expect(refused.isError).toBe(true);
    expect((refused.content as { text: string }[])[0]!.text).toContain('The user rejected the sampling request');
    expect(sdkErrors).toEqual([]);
  });
});
