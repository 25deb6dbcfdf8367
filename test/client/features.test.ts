import { describe, expect, it } from 'vitest';
import { filter, firstValueFrom, take } from 'rxjs';
import { readUrlElicitations, urlElicitationRequiredData } from '../../lib/client/elicitation';
import { CapabilityNotSupportedError, ErrorCode, McpError } from '../../lib/jsonrpc/errors';
import type { CreateMessageResult, ElicitResult } from '../../lib/protocol/client-features';
import { SUPPORTED_PROTOCOL_VERSIONS } from '../../lib/protocol/versions';
import type { ClientOptions } from '../../lib/client/client';
import { deferred, serverWith, tool } from '../helpers/fixtures';
import { jsonOf } from '../helpers/content';
import { connectPair, validateEmitted } from '../helpers/pair';
import { RawPeer } from '../helpers/raw-peer';
import { Client } from '../../lib/client/client';
import { createMemoryPair } from '../../transports/memory';

/** A server whose tools call back into the client, returning what the client answered. */
const callbacks = serverWith([
  tool('ask-model', async (_args, ctx) => {
    const answer = await ctx.createMessage({
      messages: [{ role: 'user', content: { type: 'text', text: 'Say hi' } }],
      maxTokens: 20,
    });
    return { content: [{ type: 'text', text: JSON.stringify(answer) }] };
  }),
  tool('ask-model-with-tools', async (_args, ctx) => {
    const answer = await ctx.createMessage({
      messages: [{ role: 'user', content: { type: 'text', text: 'Weather in Oslo?' } }],
      maxTokens: 50,
      tools: [{ name: 'weather', inputSchema: { type: 'object', properties: { city: { type: 'string' } } } }],
    });
    return { content: [{ type: 'text', text: JSON.stringify(answer) }] };
  }),
  tool('ask-user', async (_args, ctx) => {
    const answer = await ctx.elicit({
      message: 'Your details?',
      requestedSchema: {
        type: 'object',
        properties: {
          name: { type: 'string', minLength: 1 },
          age: { type: 'integer', minimum: 0, default: 42 },
          newsletter: { type: 'boolean', default: false },
        },
        required: ['name'],
      },
    });
    return { content: [{ type: 'text', text: JSON.stringify(answer) }] };
  }),
  tool('open-url', async (_args, ctx) => {
    const answer = await ctx.elicit({
      mode: 'url',
      message: 'Sign in',
      elicitationId: 'e-1',
      url: 'https://auth.example.com/start?e=1',
    });
    return { content: [{ type: 'text', text: JSON.stringify(answer) }] };
  }),
  tool('needs-browser', () => {
    throw new McpError(
      ErrorCode.UrlElicitationRequired,
      'Open the link first',
      urlElicitationRequiredData([
        { mode: 'url', message: 'Authorize', elicitationId: 'e-2', url: 'https://auth.example.com/authorize' },
      ]),
    );
  }),
  tool('roots', async (_args, ctx) => ({ content: [{ type: 'text', text: JSON.stringify(await ctx.listRoots()) }] })),
]);

const model = (): CreateMessageResult => ({
  role: 'assistant',
  content: { type: 'text', text: 'hi' },
  model: 'test-model',
  stopReason: 'endTurn',
});

describe('sampling', () => {
  for (const version of SUPPORTED_PROTOCOL_VERSIONS) {
    it(`answers the server's sampling request with the application's handler (${version})`, async () => {
      const seen: unknown[] = [];
      const { client } = await connectPair(callbacks, {
        protocolVersion: version,
        sampling: (params) => (seen.push(params.messages), model()),
      });
      expect(client.capabilities.sampling).toEqual({});
      expect(jsonOf(await client.callTool('ask-model'))).toEqual(model());
      expect(seen).toEqual([[{ role: 'user', content: { type: 'text', text: 'Say hi' } }]]);
    });
  }

  it('offers tools only to a client that declared sampling.tools', async () => {
    const { client: plain } = await connectPair(callbacks, { sampling: model });
    const refused = await plain.callTool('ask-model-with-tools');
    expect(refused).toMatchObject({
      isError: true,
      content: [{ text: expect.stringContaining('did not declare sampling.tools') }],
    });
  });

  it('carries tool use to and from a client that declared sampling.tools', async () => {
    const { client } = await connectPair(callbacks, {
      sampling: {
        tools: true,
        handler: (params) => ({
          role: 'assistant',
          content: [{ type: 'tool_use', id: 'call-1', name: params.tools![0]!.name, input: { city: 'Oslo' } }],
          model: 'test-model',
          stopReason: 'toolUse',
        }),
      },
    });
    expect(client.capabilities.sampling).toEqual({ tools: {} });
    expect(jsonOf(await client.callTool('ask-model-with-tools')).content).toEqual([
      { type: 'tool_use', id: 'call-1', name: 'weather', input: { city: 'Oslo' } },
    ]);
  });

  it('reports a handler that breaks the contract as an internal error to the server', async () => {
    const { client } = await connectPair(callbacks, {
      sampling: () => ({ role: 'assistant', content: { type: 'text', text: 'x' } }) as never,
    });
    const result = await client.callTool('ask-model');
    expect(result).toMatchObject({ isError: true, content: [{ text: expect.stringContaining('model') }] });
  });

  it('is not declared without a handler', async () => {
    const { client } = await connectPair(callbacks);
    expect(client.capabilities.sampling).toBeUndefined();
  });

  it('fails fast on the server when the client did not declare it', async () => {
    const { client } = await connectPair(callbacks);
    expect(await client.callTool('ask-model')).toMatchObject({
      isError: true,
      content: [
        { text: 'The client did not declare the sampling capability, so sampling/createMessage cannot be used' },
      ],
    });
  });
});

describe('elicitation', () => {
  const form = (answer: ElicitResult) => ({ elicitation: { form: () => answer } }) satisfies ClientOptions;

  for (const version of SUPPORTED_PROTOCOL_VERSIONS.filter((v) => v >= '2025-06-18')) {
    it(`answers a form with the user's content and the schema's defaults (${version})`, async () => {
      const { client } = await connectPair(callbacks, {
        protocolVersion: version,
        ...form({ action: 'accept', content: { name: 'Ada' } }),
      });
      expect(jsonOf(await client.callTool('ask-user'))).toEqual({
        action: 'accept',
        content: { name: 'Ada', age: 42, newsletter: false },
      });
    });
  }

  it('passes decline through', async () => {
    const { client } = await connectPair(callbacks, form({ action: 'decline' }));
    expect(jsonOf(await client.callTool('ask-user'))).toEqual({ action: 'decline' });
  });

  it('leaves defaults out when asked to', async () => {
    const { client: raw } = await connectPair(callbacks, {
      elicitation: { form: () => ({ action: 'accept', content: { name: 'Bo' } }), applyDefaults: false },
    });
    expect(jsonOf(await raw.callTool('ask-user'))).toEqual({ action: 'accept', content: { name: 'Bo' } });
  });

  it('refuses an answer that does not satisfy the schema (the server gets an internal error)', async () => {
    const { client } = await connectPair(callbacks, form({ action: 'accept', content: { name: '' } }));
    expect(await client.callTool('ask-user')).toMatchObject({
      isError: true,
      content: [{ text: expect.stringContaining('content.name') }],
    });
  });

  /** A client with form and URL elicitation handlers; `asked` are the URLs it was sent to. */
  async function urlCapable() {
    const asked: unknown[] = [];
    const pair = await connectPair(callbacks, {
      elicitation: {
        form: () => ({ action: 'cancel' }),
        url: (params) => (asked.push(params.url), { action: 'accept' }),
      },
    });
    return { ...pair, asked };
  }

  it('handles URL mode', async () => {
    const { client, asked } = await urlCapable();
    expect(client.capabilities.elicitation).toEqual({ form: {}, url: {} });
    expect(jsonOf(await client.callTool('open-url'))).toEqual({ action: 'accept' });
    expect(asked).toEqual(['https://auth.example.com/start?e=1']);
  });

  it("delivers a URL elicitation's completion notification", async () => {
    const { client, serverConnection } = await urlCapable();
    const completed = firstValueFrom(client.elicitationComplete$.pipe(take(1)));
    await serverConnection.notify('notifications/elicitation/complete', { elicitationId: 'e-1' });
    expect(await completed).toEqual({ elicitationId: 'e-1' });
  });

  it('reads the elicitations a -32042 error needs', async () => {
    const { client } = await urlCapable();
    const failure = await client.callTool('needs-browser').catch((error) => error);
    expect(failure).toMatchObject({ code: -32042, message: 'Open the link first' });
    expect(readUrlElicitations(failure)).toEqual([
      { mode: 'url', message: 'Authorize', elicitationId: 'e-2', url: 'https://auth.example.com/authorize' },
    ]);
  });

  it('fails fast on the server for a mode the client did not declare', async () => {
    const { client, serverConnection } = await connectPair(callbacks, form({ action: 'decline' }));
    expect(await client.callTool('open-url')).toMatchObject({
      isError: true,
      content: [{ text: 'The client did not declare elicitation.url' }],
    });
    await expect(
      serverConnection.notify('notifications/elicitation/complete', { elicitationId: 'x' }),
    ).rejects.toBeInstanceOf(CapabilityNotSupportedError);
  });

  it('does not exist before 2025-06-18', async () => {
    const { client } = await connectPair(callbacks, { protocolVersion: '2025-03-26', ...form({ action: 'decline' }) });
    expect((await client.callTool('ask-user')).content[0]).toMatchObject({
      text: expect.stringContaining('needs protocol version 2025-06-18'),
    });
  });
});

describe('roots', () => {
  for (const version of SUPPORTED_PROTOCOL_VERSIONS) {
    it(`answers roots/list with the client's roots (${version})`, async () => {
      const roots = [{ uri: 'file:///home/ada/project', name: 'project', _meta: { 'com.example/vcs': 'git' } }];
      const { client } = await connectPair(callbacks, { protocolVersion: version, roots });
      expect(client.capabilities.roots).toEqual({ listChanged: true });
      const listed = jsonOf(await client.callTool('roots'));
      expect(listed).toEqual(version >= '2025-06-18' ? roots : [{ uri: roots[0]!.uri, name: 'project' }]);
    });
  }

  it('tells the server when the roots change', async () => {
    const { client, serverConnection } = await connectPair(callbacks, { roots: [] });
    const changed = firstValueFrom(
      serverConnection.notifications$.pipe(
        filter((n) => n.method === 'notifications/roots/list_changed'),
        take(1),
      ),
    );
    await client.setRoots([{ uri: 'file:///tmp/work' }]);
    await changed;
    expect(jsonOf(await client.callTool('roots'))).toEqual([{ uri: 'file:///tmp/work' }]);
  });

  it('accepts file:// roots only', async () => {
    await expect(connectPair(callbacks, { roots: [{ uri: 'https://example.com' }] })).rejects.toBeInstanceOf(TypeError);
    const { client } = await connectPair(callbacks, { roots: [] });
    await expect(client.setRoots([{ uri: 'https://example.com' }])).rejects.toBeInstanceOf(TypeError);
  });

  it('needs the roots option to declare roots', async () => {
    const { client: none } = await connectPair(callbacks);
    await expect(none.setRoots([])).rejects.toBeInstanceOf(CapabilityNotSupportedError);
    expect(await none.callTool('roots')).toMatchObject({ isError: true });
  });
});

describe('server-to-client requests travel with their request', () => {
  it('cancels the nested request when the outer one is cancelled', async () => {
    const started = deferred();
    const abandoned = deferred<unknown>();
    const { client } = await connectPair(callbacks, {
      sampling: (_params, ctx) =>
        new Promise((_resolve, reject) => {
          started.resolve();
          ctx.signal.addEventListener('abort', () => {
            abandoned.resolve(ctx.signal.reason);
            reject(ctx.signal.reason);
          });
        }),
    });
    const controller = new AbortController();
    const call = client.callTool('ask-model', {}, { signal: controller.signal });
    await started.promise;
    controller.abort();
    await expect(call).rejects.toMatchObject({ code: 'REQUEST_CANCELLED' });
    expect(await abandoned.promise).toMatchObject({ code: 'REQUEST_CANCELLED' });
  });
});

describe('features and revisions', () => {
  const handlers = {
    sampling: { tools: true, context: true, handler: model },
    elicitation: { form: () => ({ action: 'decline' as const }), url: () => ({ action: 'decline' as const }) },
    roots: [],
  } satisfies ClientOptions;

  it('declares only what the requested revision knows', () => {
    const declared = (protocolVersion: (typeof SUPPORTED_PROTOCOL_VERSIONS)[number]) =>
      new Client({ name: 'c', version: '1' }, { protocolVersion, ...handlers }).capabilities;
    expect(declared('2025-11-25')).toEqual({
      sampling: { context: {}, tools: {} },
      elicitation: { form: {}, url: {} },
      roots: { listChanged: true },
    });
    expect(declared('2025-06-18')).toEqual({ sampling: {}, elicitation: {}, roots: { listChanged: true } });
    expect(declared('2025-03-26')).toEqual({ sampling: {}, roots: { listChanged: true } });
  });

  it('answers -32601 to a request the negotiated revision does not have', async () => {
    const [clientSide, peerSide] = createMemoryPair();
    const server = new RawPeer(peerSide);
    const client = new Client({ name: 'c', version: '1' }, { protocolVersion: '2025-03-26', ...handlers });
    validateEmitted(client);
    const connected = client.connect(clientSide);
    const initialize = await server.next();
    await server.send({
      jsonrpc: '2.0',
      id: initialize.id,
      result: { protocolVersion: '2025-03-26', capabilities: {}, serverInfo: { name: 'raw', version: '1' } },
    });
    await connected;
    expect((await server.next()).method).toBe('notifications/initialized');
    const answer = await server.request('elicitation/create', {
      message: 'x',
      requestedSchema: { type: 'object', properties: {} },
    });
    expect(answer.error).toEqual({
      code: -32601,
      message: 'Method not found: elicitation/create (it needs protocol version 2025-06-18)',
    });
  });

  it('refuses URL mode and sampling tools before 2025-11-25, on the server, without sending', async () => {
    const { client } = await connectPair(callbacks, { protocolVersion: '2025-06-18', ...handlers });
    expect((await client.callTool('open-url')).content[0]).toMatchObject({
      text: 'URL-mode elicitation needs protocol version 2025-11-25; 2025-06-18 was negotiated',
    });
    expect((await client.callTool('ask-model-with-tools')).content[0]).toMatchObject({
      text: 'Tools in sampling need protocol version 2025-11-25; 2025-06-18 was negotiated',
    });
  });
});
