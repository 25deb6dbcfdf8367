import { describe, expect, it } from 'vitest';
import { filter, firstValueFrom, take, toArray } from 'rxjs';
import { ErrorCode, McpError, RelayedError, ResultValidationError } from '../../lib/jsonrpc/errors';
import { defineServer } from '../../lib/server/definition';
import { createAjvValidator } from '../../lib/validation/json-schema';
import { defineTool } from '../../lib/server/tools';
import { encodeCursor } from '../../lib/server/cursor';
import { Server } from '../../lib/server/server';

import { createMemoryPair } from '../../transports/memory';
import { connectClients, connectPair, validateEmitted } from '../helpers/pair';
import { RawPeer } from '../helpers/raw-peer';
import { tool } from '../helpers/fixtures';

const weather = tool('weather', undefined, {
  title: 'Weather',
  description: 'Current weather',
  icons: [{ src: 'https://example.com/sun.png', mimeType: 'image/png', sizes: ['48x48'] }],
  annotations: { readOnlyHint: true, openWorldHint: true },
  _meta: { 'com.example/cost': 'free' },
  inputSchema: {
    type: 'object',
    properties: { city: { type: 'string', minLength: 1 } },
    required: ['city'],
    additionalProperties: false,
  },
  outputSchema: { type: 'object', properties: { celsius: { type: 'number' } }, required: ['celsius'] },
  handler: ({ city }) => ({ content: [], structuredContent: { celsius: city === 'Oslo' ? -3 : 21 } }),
});

describe('tools/list', () => {
  it('keeps title, annotations, icons and _meta for 2025-11-25', async () => {
    const { client } = await connectPair(defineServer({ name: 's', version: '1', tools: [weather] }));
    const [listed] = await client.listTools();
    const { handler: _handler, ...wire } = weather;
    expect(listed).toEqual(wire);
  });

  it('shapes tools for an older revision', async () => {
    const { client } = await connectPair(defineServer({ name: 's', version: '1', tools: [weather] }), {
      protocolVersion: '2024-11-05',
    });
    expect(await client.listTools()).toEqual([
      { name: 'weather', description: 'Current weather', inputSchema: weather.inputSchema },
    ]);
  });

  it('pages with opaque cursors and the client follows them', async () => {
    const tools = ['a', 'b', 'c', 'd', 'e'].map((name) => tool(name));
    const { client } = await connectPair(defineServer({ name: 's', version: '1', pageSize: 2, tools }));
    const first = await client.listToolsPage();
    expect(first.tools.map((t) => t.name)).toEqual(['a', 'b']);
    expect(first.nextCursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(first.nextCursor).not.toContain('2');
    const second = await client.listToolsPage(first.nextCursor);
    expect(second.tools.map((t) => t.name)).toEqual(['c', 'd']);
    const last = await client.listToolsPage(second.nextCursor);
    expect(last).toEqual({ tools: [expect.objectContaining({ name: 'e' })] });
    expect((await client.listTools()).map((t) => t.name)).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('answers -32602 for a cursor it did not issue', async () => {
    const { client } = await connectPair(
      defineServer({ name: 's', version: '1', pageSize: 1, tools: [tool('a'), tool('b')] }),
    );
    for (const cursor of [
      'garbage!',
      '',
      encodeCursor('prompts', 1),
      encodeCursor('tools', 99),
      encodeCursor('tools', 0),
      'x'.repeat(100),
    ]) {
      const failure = await client.listToolsPage(cursor).catch((error) => error);
      expect(failure).toBeInstanceOf(McpError);
      expect(failure).toMatchObject({ code: -32602, message: 'Invalid params: unknown or expired cursor' });
    }
  });
});

describe('tools/call', () => {
  const definition = defineServer({
    name: 's',
    version: '1',
    tools: [
      weather,
      tool('boom', undefined, {
        handler: () => {
          throw new Error('disk on fire');
        },
      }),
      tool('async-boom', undefined, {
        handler: async () => {
          throw new Error('later fire');
        },
      }),
      tool('garbage', undefined, { handler: () => 42 as never }),
      tool('no-structure', undefined, { outputSchema: { type: 'object' }, handler: () => ({ content: [] }) }),
      tool('wrong-structure', undefined, {
        outputSchema: weather.outputSchema!,
        handler: () => ({ content: [], structuredContent: { celsius: 'hot' } }),
      }),
      tool('draft07', undefined, {
        inputSchema: {
          $schema: 'http://json-schema.org/draft-07/schema#',
          type: 'object',
          properties: { n: { type: 'integer' } },
          required: ['n'],
        },
      }),
      tool('modern', undefined, {
        inputSchema: {
          type: 'object',
          $defs: { pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], items: false } },
          properties: { pair: { $ref: '#/$defs/pair' } },
          required: ['pair'],
          unevaluatedProperties: false,
        },
      }),
    ],
  });

  it('returns structuredContent checked against the outputSchema, plus its JSON as text', async () => {
    const { client } = await connectPair(definition);
    await client.listTools();
    expect(await client.callTool('weather', { city: 'Oslo' })).toEqual({
      content: [{ type: 'text', text: '{"celsius":-3}' }],
      structuredContent: { celsius: -3 },
    });
  });

  it('sends only the text to clients older than 2025-06-18', async () => {
    const { client } = await connectPair(definition, { protocolVersion: '2025-03-26' });
    expect(await client.callTool('weather', { city: 'Rome' })).toEqual({
      content: [{ type: 'text', text: '{"celsius":21}' }],
    });
  });

  it('reports invalid arguments as a tool error the model can read', async () => {
    const { client } = await connectPair(definition);
    const result = await client.callTool('weather', { city: '', country: 'NO' });
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([
      {
        type: 'text',
        text: 'Invalid arguments for tool weather: the value must NOT have additional properties ("country"); /city must NOT have fewer than 1 characters',
      },
    ]);
    expect((await client.callTool('weather')).content[0]).toMatchObject({
      text: expect.stringContaining("required property 'city'"),
    });
  });

  it('reports a throwing handler, sync or async, as a tool error with its message', async () => {
    const { client } = await connectPair(definition);
    expect(await client.callTool('boom')).toEqual({ content: [{ type: 'text', text: 'disk on fire' }], isError: true });
    expect(await client.callTool('async-boom')).toEqual({
      content: [{ type: 'text', text: 'later fire' }],
      isError: true,
    });
  });

  it('reports a handler that breaks its contract as a tool error', async () => {
    const { client } = await connectPair(definition);
    expect((await client.callTool('garbage')).content[0]).toMatchObject({
      text: 'Tool garbage returned number instead of a result object',
    });
    expect((await client.callTool('no-structure')).content[0]).toMatchObject({
      text: expect.stringContaining('returned no structuredContent'),
    });
    const wrong = await client.callTool('wrong-structure');
    expect(wrong.isError).toBe(true);
    expect(wrong.content[0]).toMatchObject({ text: expect.stringContaining('/celsius must be number') });
  });

  it('answers -32602 for an unknown tool or malformed params', async () => {
    const { client } = await connectPair(definition);
    await expect(client.callTool('nope')).rejects.toMatchObject({ code: -32602, message: 'Unknown tool: nope' });
    const { peer } = rawServer();
    await peer.initialize();
    expect((await peer.request('tools/call', { name: 42 })).error).toMatchObject({
      code: -32602,
      message: expect.stringContaining('"name"'),
    });
    expect((await peer.request('tools/call', { name: 'weather', arguments: [1] })).error).toMatchObject({
      code: -32602,
      message: expect.stringContaining('"arguments"'),
    });
  });

  it('validates arguments against a draft-07 schema', async () => {
    const { client } = await connectPair(definition);
    expect((await client.callTool('draft07', { n: 1 })).isError).toBeUndefined();
    expect((await client.callTool('draft07', { n: 1.5 })).isError).toBe(true);
  });

  it('validates arguments against a 2020-12 schema', async () => {
    const { client } = await connectPair(definition);
    expect((await client.callTool('modern', { pair: ['a', 1] })).isError).toBeUndefined();
    expect((await client.callTool('modern', { pair: ['a', 1, 2] })).isError).toBe(true);
    expect((await client.callTool('modern', { pair: ['a', 1], extra: true })).isError).toBe(true);
  });

  it('refuses a schema dialect it does not support, naming it, when the tool is defined', () => {
    const draft04 = tool('draft04', undefined, {
      inputSchema: { $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' },
    });
    expect(() => defineServer({ name: 's', version: '1', tools: [draft04] })).toThrow(
      'Tool draft04: inputSchema is not a valid JSON Schema: its dialect "http://json-schema.org/draft-04/schema#" is not supported',
    );
  });

  it('checks structuredContent on the client against the schema it listed', async () => {
    const lenient = { compile: () => () => undefined };
    const lying = defineServer({
      name: 's',
      version: '1',
      validator: lenient,
      tools: [
        tool('lie', undefined, {
          outputSchema: weather.outputSchema!,
          handler: () => ({ content: [], structuredContent: { celsius: 'warm' } }),
        }),
      ],
    });
    const { client } = await connectPair(lying);
    expect((await client.callTool('lie')).structuredContent).toEqual({ celsius: 'warm' }); // not listed yet: not checked
    await client.listTools();
    await expect(client.callTool('lie')).rejects.toBeInstanceOf(ResultValidationError);
  });

  function rawServer() {
    const [peerSide, serverSide] = createMemoryPair();
    const connection = new Server(definition).connect(serverSide);
    validateEmitted(connection);
    return { peer: new RawPeer(peerSide) };
  }
});

describe('changing the set of tools', () => {
  it('tells ready clients once per tick, and they see the new set', async () => {
    const server = new Server(defineServer({ name: 's', version: '1', tools: [tool('a')] }));
    const clients = await connectClients(server, 3);
    const notified = clients.map((client) =>
      firstValueFrom(
        client.notifications$.pipe(
          filter((n) => n.method === 'notifications/tools/list_changed'),
          take(1),
        ),
      ),
    );
    const counts = clients.map((client) => {
      const seen: string[] = [];
      // The server closing first ends the stream with an error (the clients are closed after it).
      client.notifications$.subscribe({ next: (n) => seen.push(n.method), error: () => undefined });
      return seen;
    });
    server.update((definition) => definition.withTools(tool('b')));
    server.update((definition) => definition.withoutTools('a'));
    await Promise.all(notified);
    await clients[0]!.ping();
    for (const seen of counts) expect(seen).toEqual(['notifications/tools/list_changed']);
    for (const client of clients) expect((await client.listTools()).map((t) => t.name)).toEqual(['b']);
    await server.close();
    expect(server.connectionCount).toBe(0);
  });

  it('replaces a tool of the same name', () => {
    const definition = defineServer({ name: 's', version: '1', tools: [tool('a'), tool('b')] }).withTools(
      tool('a', undefined, { title: 'New A' }),
    );
    expect(definition.tools!.definitions.map((t) => [t.name, t.title])).toEqual([
      ['b', undefined],
      ['a', 'New A'],
    ]);
  });

  it('serves one definition to many connections at once', async () => {
    const definition = defineServer({ name: 's', version: '1', tools: [weather] });
    const pairs = await Promise.all(Array.from({ length: 20 }, () => connectPair(definition)));
    const results = await Promise.all(
      pairs.map(({ client }, i) => client.callTool('weather', { city: i % 2 ? 'Oslo' : 'Rome' })),
    );
    expect(results.map((r) => r.structuredContent!.celsius)).toEqual(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? -3 : 21)),
    );
    const trace = firstValueFrom(pairs[0]!.serverConnection.trace$.pipe(toArray()));
    await Promise.all(pairs.map(({ client }) => client.close()));
    expect((await trace).at(-1)).toMatchObject({ kind: 'lifecycle', to: 'closed' });
  });
});

describe('defining tools', () => {
  it('refuses names outside the 2025-11-25 rules', () => {
    for (const name of ['', 'has space', 'a,b', 'x'.repeat(129), 'émoji']) {
      expect(() => defineTool(tool(name))).toThrow(/Tool name .* is invalid/);
    }
    expect(() => defineTool(tool('ok.name_1-2'))).not.toThrow();
  });

  it('refuses schemas that are not objects', () => {
    expect(() => defineTool(tool('a', undefined, { inputSchema: { type: 'string' } }))).toThrow(
      'Tool a: inputSchema must describe an object ("type": "object"), not "string"',
    );
    expect(() => defineTool(tool('a', undefined, { outputSchema: { type: 'array' } }))).toThrow('outputSchema');
  });

  it('refuses two tools of one name', () => {
    expect(() => defineServer({ name: 's', version: '1', tools: [tool('a'), tool('a')] })).toThrow(
      'Two tools are named a',
    );
  });
});

describe('errors thrown by a tool handler', () => {
  /** A server whose tools throw each kind of error, and a client whose sampling handler refuses. */
  const throwing = defineServer({
    name: 's',
    version: '1',
    tools: [
      tool('typed', () => {
        throw new McpError(-32000, 'quota exceeded', { retryAfterSeconds: 30 });
      }),
      tool('typed-async', async () => {
        throw new McpError(ErrorCode.InvalidParams, 'the mode argument is missing', { missing: ['mode'] });
      }),
      tool('plain', () => {
        throw new TypeError('cannot read the file');
      }),
      tool('relay', () => {
        throw RelayedError.of(new McpError(-32602, 'upstream says: bad params', { field: 'x' }));
      }),
      tool('url', () => {
        throw new McpError(ErrorCode.UrlElicitationRequired, 'needs a browser', { elicitations: [] });
      }),
      tool('ask-model', async (_args, ctx) => {
        await ctx.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 5 });
        return { content: [{ type: 'text', text: 'sampled' }] };
      }),
    ],
  });
  const refusingModel = {
    sampling: {
      handler: () => {
        throw new McpError(-1, 'The user rejected the sampling request');
      },
    },
  };

  it('an McpError reaches the client as a JSON-RPC error with its code, message and data', async () => {
    const { client } = await connectPair(throwing, refusingModel);
    const typed = await client.callTool('typed').catch((error: unknown) => error);
    expect(typed).toBeInstanceOf(McpError);
    expect(typed).toMatchObject({ code: -32000, message: 'quota exceeded', data: { retryAfterSeconds: 30 } });
    await expect(client.callTool('typed-async')).rejects.toMatchObject({
      code: -32602,
      message: 'the mode argument is missing',
      data: { missing: ['mode'] },
    });
  });

  it('RelayedError and -32042 stay JSON-RPC errors', async () => {
    const { client } = await connectPair(throwing, refusingModel);
    await expect(client.callTool('relay')).rejects.toMatchObject({
      code: -32602,
      message: 'upstream says: bad params',
      data: { field: 'x' },
    });
    await expect(client.callTool('url')).rejects.toMatchObject({ code: -32042, data: { elicitations: [] } });
  });

  it('any other error is a result the model can read', async () => {
    const { client } = await connectPair(throwing, refusingModel);
    expect(await client.callTool('plain')).toEqual({
      content: [{ type: 'text', text: 'cannot read the file' }],
      isError: true,
    });
  });

  it('an error response the handler received and let escape is a result the model can read', async () => {
    const { client } = await connectPair(throwing, refusingModel);
    expect(await client.callTool('ask-model')).toEqual({
      content: [{ type: 'text', text: 'The user rejected the sampling request' }],
      isError: true,
    });
  });
});

describe("a server's outputSchema that nests too deep to handle", () => {
  it('is a schema problem for the call it checks, not a stack overflow', () => {
    let schema: Record<string, unknown> = { type: 'object' };
    for (let i = 0; i < 50_000; i++) schema = { type: 'object', properties: { a: schema } };
    const problems = createAjvValidator().compile(schema)({ a: {} });
    expect(problems?.[0]).toMatch(/^the schema is invalid/);
  });
});
