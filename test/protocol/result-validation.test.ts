/**
 * Inbound results are checked against their method's result schema: our rules (lib/protocol/result-rules)
 * accept every result the official schema of each revision accepts, and refuse the broken ones it refuses;
 * a broken result rejects that one request with a ResultValidationError naming the member at fault, and
 * the connection carries on (in memory, and over stdio against a hand-written server).
 */
import type { ValidateFunction } from 'ajv';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Client, type ClientOptions } from '../../lib/client/client';
import { ProtocolViolationError, ResultValidationError } from '../../lib/jsonrpc/errors';
import { resultRules } from '../../lib/protocol/result-rules';
import { resultProblem } from '../../lib/protocol/results';
import { SUPPORTED_PROTOCOL_VERSIONS, type ProtocolVersion } from '../../lib/protocol/versions';
import { defineServer } from '../../lib/server/definition';
import { Server } from '../../lib/server/server';
import { createMemoryPair } from '../../transports/memory';
import { StdioClientTransport } from '../../transports/stdio';
import { createAjv, definitionsSection, officialSchema } from '../helpers/ajv';
import { RawPeer } from '../helpers/raw-peer';
import { eventually } from '../helpers/wait';
import { isAlive } from '../helpers/processes';
import { fixturePath } from '../helpers/paths';

// ---- the official schemas, as published (one normative fix, see allowFractionalElicitAnswers) ---------

const RESULT_DEFINITIONS: Record<string, string> = {
  initialize: 'InitializeResult',
  ping: 'EmptyResult',
  'tools/list': 'ListToolsResult',
  'tools/call': 'CallToolResult',
  'resources/list': 'ListResourcesResult',
  'resources/templates/list': 'ListResourceTemplatesResult',
  'resources/read': 'ReadResourceResult',
  'resources/subscribe': 'EmptyResult',
  'resources/unsubscribe': 'EmptyResult',
  'prompts/list': 'ListPromptsResult',
  'prompts/get': 'GetPromptResult',
  'completion/complete': 'CompleteResult',
  'logging/setLevel': 'EmptyResult',
  'sampling/createMessage': 'CreateMessageResult',
  'elicitation/create': 'ElicitResult',
  'roots/list': 'ListRootsResult',
};

const official = new Map<string, ValidateFunction | null>();

/** The official schema's check of `method`'s result in `version`, or null when the revision has no such method. */
function officialCheck(version: ProtocolVersion, method: string): ValidateFunction | null {
  const key = `${version} ${method}`;
  if (official.has(key)) return official.get(key)!;
  const schema = officialSchema(version);
  const section = definitionsSection(version);
  const definitions = schema[section];
  // The generated schemas type elicitation answers as integers where the normative schema.ts says number.
  const values = definitions.ElicitResult?.properties?.content?.additionalProperties;
  const scalar = values?.anyOf ? values.anyOf.find((option: any) => Array.isArray(option.type)) : values;
  if (scalar) scalar.type = scalar.type.map((type: string) => (type === 'integer' ? 'number' : type));
  const ajv = createAjv(version);
  ajv.addSchema(schema, version);
  for (const [name, definition] of Object.entries(RESULT_DEFINITIONS)) {
    const validate = definitions[definition] ? ajv.getSchema(`${version}#/${section}/${definition}`)! : null;
    official.set(`${version} ${name}`, validate);
  }
  return official.get(key)!;
}

// ---- valid results, generated ------------------------------------------------------------------------

const text = fc.string({ maxLength: 8 });
const uri = fc.constantFrom('file:///a.txt', 'https://example.com/x', 'notes://index');
const base64 = fc.constantFrom('', 'aGk=', 'AAECAw==');
const meta = fc.dictionary(fc.constantFrom('a', 'io.x/y'), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 2 });
const role = fc.constantFrom('user', 'assistant');

/** `required` always, each of `optional` or not. */
function record(required: Record<string, fc.Arbitrary<unknown>>, optional: Record<string, fc.Arbitrary<unknown>> = {}) {
  return fc.record({ ...required, ...optional }, { requiredKeys: Object.keys(required) as never[] });
}

const annotations = record(
  {},
  {
    audience: fc.array(role, { maxLength: 2 }),
    priority: fc.double({ min: 0, max: 1, noNaN: true }),
    lastModified: fc.constant('2025-01-01T00:00:00Z'),
  },
);
const icon = record(
  { src: uri },
  { mimeType: text, sizes: fc.array(fc.constantFrom('48x48', 'any')), theme: fc.constantFrom('light', 'dark') },
);
const described = {
  title: text,
  description: text,
  mimeType: text,
  annotations,
  icons: fc.array(icon, { maxLength: 2 }),
  _meta: meta,
};
const resourceContents = fc.oneof(
  record({ uri, text }, { mimeType: text, _meta: meta }),
  record({ uri, blob: base64 }, { mimeType: text, _meta: meta }),
);
const textBlock = record({ type: fc.constant('text'), text }, { annotations, _meta: meta });
const binaryBlock = (type: string) =>
  record(
    { type: fc.constant(type), data: base64, mimeType: fc.constantFrom('image/png', 'audio/wav') },
    { annotations, _meta: meta },
  );
const contentBlock = fc.oneof(
  textBlock,
  binaryBlock('image'),
  binaryBlock('audio'),
  record({ type: fc.constant('resource_link'), uri, name: text }, { ...described, size: fc.nat() }),
  record({ type: fc.constant('resource'), resource: resourceContents }, { annotations, _meta: meta }),
);
const objectSchema = record(
  { type: fc.constant('object') },
  {
    properties: fc.dictionary(text, fc.constant({ type: 'string' }), { maxKeys: 2 }),
    required: fc.array(text, { maxLength: 2 }),
  },
);
const tool = record(
  { name: text, inputSchema: objectSchema },
  {
    title: text,
    description: text,
    outputSchema: objectSchema,
    annotations: record({}, { title: text, readOnlyHint: fc.boolean(), destructiveHint: fc.boolean() }),
    execution: record({}, { taskSupport: fc.constantFrom('forbidden', 'optional', 'required') }),
    icons: fc.array(icon, { maxLength: 1 }),
    _meta: meta,
  },
);
const page = (key: string, item: fc.Arbitrary<unknown>) =>
  record({ [key]: fc.array(item, { maxLength: 3 }) }, { nextCursor: text, _meta: meta });
const samplingBlock = fc.oneof(
  textBlock,
  binaryBlock('image'),
  binaryBlock('audio'),
  record({ type: fc.constant('tool_use'), id: text, name: text, input: fc.constant({ q: 1 }) }),
  record(
    { type: fc.constant('tool_result'), toolUseId: text, content: fc.array(contentBlock, { maxLength: 2 }) },
    { isError: fc.boolean(), structuredContent: fc.constant({ a: 1 }) },
  ),
);
const empty = record({}, { _meta: meta });

const VALID: Record<string, fc.Arbitrary<unknown>> = {
  initialize: record(
    {
      protocolVersion: fc.constantFrom(...SUPPORTED_PROTOCOL_VERSIONS),
      capabilities: record(
        {},
        {
          tools: record({}, { listChanged: fc.boolean() }),
          resources: record({}, { subscribe: fc.boolean(), listChanged: fc.boolean() }),
          logging: fc.constant({}),
          completions: fc.constant({}),
          experimental: fc.constant({ x: {} }),
        },
      ),
      serverInfo: record({ name: text, version: text }, { title: text }),
    },
    { instructions: text, _meta: meta },
  ),
  ping: empty,
  'tools/list': page('tools', tool),
  'tools/call': record(
    { content: fc.array(contentBlock, { maxLength: 3 }) },
    { isError: fc.boolean(), structuredContent: fc.constant({ n: 1 }), _meta: meta },
  ),
  'resources/list': page('resources', record({ uri, name: text }, { ...described, size: fc.nat() })),
  'resources/templates/list': page(
    'resourceTemplates',
    record({ uriTemplate: fc.constantFrom('file:///{path}', 'notes://{id}'), name: text }, described),
  ),
  'resources/read': record({ contents: fc.array(resourceContents, { maxLength: 3 }) }, { _meta: meta }),
  'resources/subscribe': empty,
  'resources/unsubscribe': empty,
  'prompts/list': page(
    'prompts',
    record(
      { name: text },
      {
        title: text,
        description: text,
        arguments: fc.array(record({ name: text }, { description: text, required: fc.boolean() }), { maxLength: 2 }),
      },
    ),
  ),
  'prompts/get': record(
    { messages: fc.array(record({ role, content: contentBlock }), { maxLength: 3 }) },
    { description: text, _meta: meta },
  ),
  'completion/complete': record(
    { completion: record({ values: fc.array(text, { maxLength: 3 }) }, { total: fc.nat(), hasMore: fc.boolean() }) },
    { _meta: meta },
  ),
  'logging/setLevel': empty,
  'sampling/createMessage': record(
    { role, model: text, content: fc.oneof(samplingBlock, fc.array(samplingBlock, { maxLength: 2 })) },
    { stopReason: fc.constantFrom('endTurn', 'maxTokens', 'toolUse'), _meta: meta },
  ),
  'elicitation/create': record(
    { action: fc.constantFrom('accept', 'decline', 'cancel') },
    {
      content: fc.dictionary(
        text,
        fc.oneof(
          text,
          fc.integer(),
          fc.double({ noNaN: true, noDefaultInfinity: true }),
          fc.boolean(),
          fc.array(text, { maxLength: 2 }),
        ),
        { maxKeys: 3 },
      ),
      _meta: meta,
    },
  ),
  'roots/list': record(
    {
      roots: fc.array(record({ uri: fc.constant('file:///home/ada') }, { name: text, _meta: meta }), { maxLength: 2 }),
    },
    { _meta: meta },
  ),
};

// ---- broken results, generated: a valid one with one member deleted, retyped or added ------------------

type Mutation = { kind: 'delete' | 'retype' | 'add'; at: number; replacement: unknown };

const mutation: fc.Arbitrary<Mutation> = fc.record({
  kind: fc.constantFrom('delete', 'retype', 'add'),
  at: fc.nat(),
  replacement: fc.constantFrom(null, 0, 1.5, -1, 'x', true, [], {}, [1], { type: 'text' }),
});

/** Every object or array inside `value` (itself included), with the key that leads to each child. */
function containers(value: unknown, found: [object, string | number][] = []): [object, string | number][] {
  if (Array.isArray(value)) value.forEach((item, index) => (found.push([value, index]), containers(item, found)));
  else if (typeof value === 'object' && value !== null)
    for (const [key, child] of Object.entries(value)) (found.push([value, key]), containers(child, found));
  return found;
}

function mutate(valid: unknown, { kind, at, replacement }: Mutation): unknown {
  const copy = structuredClone(valid) as Record<string, unknown>;
  const places = containers(copy);
  if (places.length === 0 || kind === 'add') {
    (places.length ? places[at % places.length]![0] : (copy as any))[kind === 'add' ? 'unknownMember' : 'x'] =
      replacement;
    return copy;
  }
  const [container, key] = places[at % places.length]!;
  if (kind === 'delete' && !Array.isArray(container)) delete (container as any)[key];
  else (container as any)[key] = replacement;
  return copy;
}

const METHODS = Object.keys(RESULT_DEFINITIONS);

describe('our result rules against the official schemas', () => {
  it('cover every request method of the method table', () => {
    expect(Object.keys(resultRules('2025-11-25')).sort()).toEqual([...METHODS].sort());
  });

  for (const version of SUPPORTED_PROTOCOL_VERSIONS) {
    for (const method of METHODS) {
      it(`${version} ${method}: every result the official schema accepts passes, valid or mutated`, () => {
        const validate = officialCheck(version, method);
        if (!validate) return; // the revision has no such method (elicitation before 2025-06-18)
        let acceptedByBoth = 0;
        let refusedByBoth = 0;
        fc.assert(
          fc.property(VALID[method]!, fc.option(mutation, { freq: 2 }), (valid, change) => {
            const result = change ? mutate(valid, change) : valid;
            const ours = resultProblem(method, result, version);
            if (validate(result)) {
              expect(ours?.message, JSON.stringify(result)).toBeUndefined();
              acceptedByBoth++;
            } else if (ours) refusedByBoth++;
          }),
          { numRuns: 300, seed: 12 },
        );
        // Neither side of the comparison is empty: it saw results both accept and results both refuse.
        expect(acceptedByBoth).toBeGreaterThan(20);
        if (method !== 'ping' && !method.endsWith('subscribe') && method !== 'logging/setLevel')
          expect(refusedByBoth).toBeGreaterThan(20);
      });
    }
  }

  const BROKEN: [method: string, result: unknown, field: string][] = [
    ['tools/call', { content: {} }, '/content must be an array'],
    ['tools/call', {}, '/content is required'],
    ['tools/call', { content: [{ type: 'text' }] }, '/content/0/text is required'],
    ['tools/call', { content: [{ type: 'text', text: 5 }] }, '/content/0/text must be a string'],
    ['tools/call', { content: [{ type: 'video', data: 'x' }] }, '/content/0/type must be one of'],
    ['tools/call', { content: [{ text: 'no type' }] }, '/content/0/type must be one of'],
    ['tools/call', { content: [{ type: 'image', data: 'aGk=' }] }, '/content/0/mimeType is required'],
    ['tools/call', { content: [{ type: 'resource', resource: { text: 'x' } }] }, '/content/0/resource/uri is required'],
    ['tools/call', { content: [], isError: 'yes' }, '/isError must be a boolean'],
    ['tools/call', [], 'the result must be an object'],
    ['tools/list', {}, '/tools is required'],
    ['tools/list', { tools: [{ name: 'a' }] }, '/tools/0/inputSchema is required'],
    [
      'tools/list',
      { tools: [{ name: 'a', inputSchema: { type: 'string' } }] },
      '/tools/0/inputSchema/type must be "object"',
    ],
    ['tools/list', { tools: [{ inputSchema: { type: 'object' } }] }, '/tools/0/name is required'],
    ['tools/list', { tools: [], nextCursor: 7 }, '/nextCursor must be a string'],
    ['tools/list', { tools: [], nextCursor: null }, '/nextCursor must be a string'],
    ['resources/list', { resources: [{ uri: 'file:///a' }] }, '/resources/0/name is required'],
    [
      'resources/templates/list',
      { resourceTemplates: [{ name: 'a' }] },
      '/resourceTemplates/0/uriTemplate is required',
    ],
    ['resources/read', { contents: [{ text: 'x' }] }, '/contents/0/uri is required'],
    ['resources/read', { contents: [{ uri: 'file:///a' }] }, '/contents/0 must have a "text" or a "blob" string'],
    ['prompts/list', { prompts: [{ name: 'p', arguments: [{}] }] }, '/prompts/0/arguments/0/name is required'],
    [
      'prompts/get',
      { messages: [{ role: 'system', content: { type: 'text', text: 'x' } }] },
      '/messages/0/role must be one of',
    ],
    ['prompts/get', { messages: [{ role: 'user' }] }, '/messages/0/content is required'],
    ['completion/complete', { completion: { values: [1] } }, '/completion/values/0 must be a string'],
    ['completion/complete', { completion: { values: [], total: 1.5 } }, '/completion/total must be an integer'],
    [
      'initialize',
      { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 'x' } },
      '/serverInfo/version is required',
    ],
    [
      'initialize',
      {
        protocolVersion: '2025-11-25',
        capabilities: { tools: { listChanged: 'yes' } },
        serverInfo: { name: 'x', version: '1' },
      },
      '/capabilities/tools/listChanged must be a boolean',
    ],
    ['ping', 'pong', 'the result must be an object'],
    ['sampling/createMessage', { model: 'm', content: { type: 'text', text: 'hi' } }, '/role is required'],
    [
      'sampling/createMessage',
      { role: 'assistant', model: 'm', content: { type: 'resource_link', uri: 'x', name: 'y' } },
      '/content/type must be one of',
    ],
    ['sampling/createMessage', { role: 'assistant', content: { type: 'text', text: 'hi' } }, '/model is required'],
    ['elicitation/create', { action: 'maybe' }, '/action must be one of'],
    [
      'elicitation/create',
      { action: 'accept', content: { a: { nested: true } } },
      '/content/a must be a string, a number, a boolean or a list of strings',
    ],
    ['roots/list', { roots: [{ name: 'home' }] }, '/roots/0/uri is required'],
  ];

  for (const [method, result, field] of BROKEN) {
    it(`refuses ${method} ${JSON.stringify(result)}, as the official schema does in every revision`, () => {
      const problem = resultProblem(method, result);
      expect(problem).toBeInstanceOf(ResultValidationError);
      expect(problem!.message).toContain(`${method} result: ${field}`);
      for (const version of SUPPORTED_PROTOCOL_VERSIONS) {
        const validate = officialCheck(version, method);
        if (validate) expect(validate(result), `${version} accepts it`).toBe(false);
      }
    });
  }

  it('checks a member only from the revision that defines it', () => {
    const result = { content: [], structuredContent: [1] };
    expect(resultProblem('tools/call', result, '2025-06-18')?.message).toBe(
      'tools/call result: /structuredContent must be an object',
    );
    expect(officialCheck('2025-06-18', 'tools/call')!(result)).toBe(false);
    expect(resultProblem('tools/call', result, '2025-03-26')).toBeUndefined();
    expect(officialCheck('2025-03-26', 'tools/call')!(result)).toBe(true);
  });

  it('accepts what a revision newer than the negotiated one adds, and unknown members', () => {
    expect(
      resultProblem(
        'tools/call',
        { content: [{ type: 'audio', data: 'aGk=', mimeType: 'audio/wav' }], extra: 1 },
        '2024-11-05',
      ),
    ).toBeUndefined();
    expect(
      resultProblem('tools/call', { content: [{ type: 'resource_link', uri: 'file:///a', name: 'a', icons: [] }] }),
    ).toBeUndefined();
    expect(resultProblem('tools/call', { content: [], structuredContent: { a: 1 }, _meta: { x: 1 } })).toBeUndefined();
    expect(resultProblem('x-ext/anything', 'not even an object')).toBeUndefined();
  });

  it('quotes at most an excerpt of a key in the path it names', () => {
    const key = 'k'.repeat(100_000);
    const problem = resultProblem('elicitation/create', { action: 'accept', content: { [key]: {} } });
    expect(problem?.message).toBe(
      `elicitation/create result: /content/${'k'.repeat(80)}… must be a string, a number, a boolean or a list of strings`,
    );
  });

  it('checks a deeply nested result without recursing with its depth', () => {
    let deep: unknown = {};
    for (let i = 0; i < 100_000; i++) deep = { a: deep };
    expect(resultProblem('tools/call', { content: [], structuredContent: deep })).toBeUndefined();
    expect(resultProblem('elicitation/create', { action: 'accept', content: { a: deep } })?.message).toContain(
      '/content/a',
    );
  });
});

// ---- the client and the server refuse broken results, and carry on -------------------------------------

describe('what a peer answers: a broken result rejects its request, and only it; paging and re-listing are bounded', () => {
  const closers: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  });

  /** Our client against a raw peer playing the server, after the handshake. */
  async function clientAgainstRawServer(options: ClientOptions = {}): Promise<{ client: Client; peer: RawPeer }> {
    const [clientSide, peerSide] = createMemoryPair();
    const peer = new RawPeer(peerSide);
    const client = new Client({ name: 'c', version: '1' }, options);
    closers.push(() => client.close());
    const connecting = client.connect(clientSide);
    const init = await peer.next();
    await peer.send({
      jsonrpc: '2.0',
      id: init.id,
      result: {
        protocolVersion: init.params.protocolVersion,
        capabilities: { tools: { listChanged: true }, resources: {}, prompts: {}, completions: {} },
        serverInfo: { name: 'raw', version: '1' },
      },
    });
    await connecting;
    await peer.next(); // notifications/initialized
    return { client, peer };
  }

  const CALLS: [string, (client: Client) => Promise<unknown>, unknown, string][] = [
    ['callTool', (client) => client.callTool('t'), { content: {} }, 'tools/call result: /content must be an array'],
    [
      'listTools',
      (client) => client.listTools(),
      { tools: [{ name: 'a' }] },
      'tools/list result: /tools/0/inputSchema is required',
    ],
    [
      'readResource',
      (client) => client.readResource('file:///a'),
      { contents: [{ text: 'x' }] },
      'resources/read result: /contents/0/uri is required',
    ],
    [
      'getPrompt',
      (client) => client.getPrompt('p'),
      { messages: [{ role: 'user', content: { type: 'nope' } }] },
      'prompts/get result: /messages/0/content/type must be one of "text", "image", "audio", "resource_link", "resource"',
    ],
    [
      'complete',
      (client) => client.complete({ ref: { type: 'ref/prompt', name: 'p' }, argument: { name: 'a', value: '' } }),
      { completion: {} },
      'completion/complete result: /completion/values is required',
    ],
    ['ping', (client) => client.ping(), [], 'ping result: the result must be an object'],
    [
      'request',
      (client) => client.request('tools/call', { name: 't' }),
      { content: [], isError: 'yes' },
      'tools/call result: /isError must be a boolean',
    ],
  ];

  /** A client that made `call` and got `broken` back: what it failed with, and a ping sent after it. */
  async function brokenAnswer(call: (client: Client) => Promise<unknown>, broken: unknown) {
    const { client, peer } = await clientAgainstRawServer();
    const pending = call(client);
    const request = await peer.next();
    await peer.send({ jsonrpc: '2.0', id: request.id, result: broken });
    const error = await pending.then(
      () => undefined,
      (failure: unknown) => failure,
    );
    const next = client.ping();
    const ping = await peer.next();
    await peer.send({ jsonrpc: '2.0', id: ping.id, result: {} });
    return { client, error, next };
  }

  for (const [name, call, broken, message] of CALLS) {
    it(`${name}: rejects with a ResultValidationError naming the member`, async () => {
      const { error } = await brokenAnswer(call, broken);
      expect(error).toBeInstanceOf(ResultValidationError);
      expect((error as Error).message).toBe(message);
    });

    it(`${name}: the next call works after the broken result`, async () => {
      const { client, next } = await brokenAnswer(call, broken);
      await expect(next).resolves.toBeUndefined();
      expect(client.state).toBe('ready');
    });
  }

  it('validateResult: false hands over the raw result (a hub sorting valid entries from broken ones)', async () => {
    const { client, peer } = await clientAgainstRawServer();
    const raw = {
      tools: [
        { name: 'good', inputSchema: { type: 'object' } },
        { name: 'bad', inputSchema: { type: 'string' } },
      ],
    };
    const unchecked = client.listToolsPage(undefined, { validateResult: false });
    await peer.send({ jsonrpc: '2.0', id: (await peer.next()).id, result: raw });
    await expect(unchecked).resolves.toEqual(raw);
    const checked = client.listToolsPage();
    await peer.send({ jsonrpc: '2.0', id: (await peer.next()).id, result: raw });
    await expect(checked).rejects.toThrow('tools/list result: /tools/1/inputSchema/type must be "object"');
  });

  /** A listTools against a server that hands out fresh cursors for ever: pages asked for, how it ended. */
  async function endlessPages() {
    const { client, peer } = await clientAgainstRawServer({ maxListPages: 25 });
    const listing = client.listTools().then(
      () => 'resolved',
      (error: unknown) => error,
    );
    let pages = 0;
    for (; pages < 100; pages++) {
      const request = await Promise.race([peer.next(), listing.then(() => undefined)]);
      if (!request) break;
      await peer.send({ jsonrpc: '2.0', id: request.id, result: { tools: [], nextCursor: `page-${pages}` } });
    }
    return { client, peer, pages, error: await listing };
  }

  it('listTools stops after maxListPages pages of fresh cursors', async () => {
    const { pages, error } = await endlessPages();
    expect(pages).toBe(25);
    expect(error).toBeInstanceOf(ProtocolViolationError);
    expect((error as Error).message).toBe('tools/list returned more than 25 pages');
  });

  it('after listTools gave up on endless pages, the connection carries on', async () => {
    const { client, peer } = await endlessPages();
    const ping = client.ping();
    await peer.send({ jsonrpc: '2.0', id: (await peer.next()).id, result: {} });
    await expect(ping).resolves.toBeUndefined();
  });

  it('listTools takes a page of 300 000 tools', async () => {
    const { client, peer } = await clientAgainstRawServer();
    const tools = Array.from({ length: 300_000 }, (_, i) => ({ name: `t${i}`, inputSchema: { type: 'object' } }));
    const listing = client.listTools();
    await peer.send({ jsonrpc: '2.0', id: (await peer.next()).id, result: { tools } });
    expect((await listing).length).toBe(300_000);
  });

  it('a flood of tools/list_changed causes one re-list in flight and one after it, not one per notification', async () => {
    const { client, peer } = await clientAgainstRawServer();
    const emitted: string[][] = [];
    const subscription = client.toolList.changes$.subscribe({
      next: (tools) => emitted.push(tools.map((tool) => tool.name)),
      error: () => undefined,
    });
    const answer = async (names: string[]) => {
      const request = await peer.next();
      expect(request.method).toBe('tools/list');
      await peer.send({
        jsonrpc: '2.0',
        id: request.id,
        result: { tools: names.map((name) => ({ name, inputSchema: { type: 'object' } })) },
      });
    };
    await answer(['first']);
    for (let i = 0; i < 200; i++) {
      await peer.send({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect((await peer.drain()).filter((message) => message.method === 'tools/list')).toHaveLength(1);
    const request = peer.received.at(-1);
    await peer.send({ jsonrpc: '2.0', id: request.id, result: { tools: [] } }); // outdated by the time it came
    await answer(['latest']);
    await new Promise((resolve) => setImmediate(resolve));
    expect(await peer.drain()).toEqual([]);
    expect(emitted).toEqual([['first'], ['latest']]);
    subscription.unsubscribe();
  });

  it('an extension method is not checked', async () => {
    const { client, peer } = await clientAgainstRawServer();
    const pending = client.request('x-acme/anything');
    const request = await peer.next();
    await peer.send({ jsonrpc: '2.0', id: request.id, result: { content: {} } });
    await expect(pending).resolves.toEqual({ content: {} });
  });

  for (const [method, call, broken, message] of [
    [
      'sampling/createMessage',
      (ctx: any) => ctx.createMessage({ messages: [], maxTokens: 5 }),
      { model: 'm', content: { type: 'text', text: 'x' } },
      'sampling/createMessage result: /role is required',
    ],
    [
      'elicitation/create',
      (ctx: any) => ctx.elicit({ message: 'm', requestedSchema: { type: 'object', properties: {} } }),
      { action: 'perhaps' },
      'elicitation/create result: /action must be one of "accept", "decline", "cancel"',
    ],
    [
      'roots/list',
      (ctx: any) => ctx.listRoots(),
      { roots: [{ name: 'x' }] },
      'roots/list result: /roots/0/uri is required',
    ],
  ] as const) {
    it(`a server's ${method} gets a ResultValidationError for a broken answer from the client`, async () => {
      let seen: unknown;
      const server = new Server(
        defineServer({
          name: 's',
          version: '1',
          tools: [
            {
              name: 'ask',
              inputSchema: { type: 'object' },
              handler: async (_args, ctx) => {
                seen = await call(ctx).then(
                  () => 'resolved',
                  (error: unknown) => error,
                );
                return { content: [{ type: 'text', text: 'done' }] };
              },
            },
          ],
        }),
      );
      const [peerSide, serverSide] = createMemoryPair();
      const connection = server.connect(serverSide);
      closers.push(() => connection.close());
      const peer = new RawPeer(peerSide);
      await peer.initialize('2025-11-25', { sampling: {}, elicitation: {}, roots: {} });
      await peer.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ask' } });
      const asked = await peer.next();
      expect(asked.method).toBe(method);
      await peer.send({ jsonrpc: '2.0', id: asked.id, result: broken });
      const answer = await peer.next();
      expect(answer.result.content[0].text).toBe('done');
      expect(seen).toBeInstanceOf(ResultValidationError);
      expect((seen as Error).message).toBe(message);
    });
  }
});

describe('over stdio, against a server that answers broken results', () => {
  const fixture = fixturePath('broken-results-server.mjs');

  /** One fixture process (started with `args`) and our client, shared by the tests of a describe. */
  function sharedClient(args: string[]) {
    let client!: Client;
    let transport!: StdioClientTransport;
    beforeAll(async () => {
      transport = new StdioClientTransport({
        command: process.execPath,
        args: [fixture, ...args],
        shutdown: { stdinGraceMs: 300, terminateGraceMs: 300 },
      });
      client = await new Client({ name: 'c', version: '1' }).connect(transport);
    });
    afterAll(async () => {
      await client?.close();
      // The child ends with its client (within a generous bound: how soon is the stdio transport's business).
      // A process's end announces itself to its parent only: from here, its pid is polled.
      const pid = transport?.pid;
      if (pid !== undefined) await eventually(() => !isAlive(pid), 'the fixture process to end');
    });
    return () => client;
  }

  describe('with a looping cursor', () => {
    const client = sharedClient(['--looping-cursor']);

    it('listTools refuses a cursor it was given before', async () => {
      await expect(client().listTools()).rejects.toThrow('tools/list returned a cursor it had returned before');
    });

    it('the next call on the connection works', async () => {
      await expect(client().callTool('fine')).resolves.toEqual({ content: [{ type: 'text', text: 'ok fine' }] });
    });
  });

  describe('with broken tools/call results', () => {
    const client = sharedClient([]);

    it('rejects a tools/call answered {"content":{}} with a ResultValidationError naming content', async () => {
      const error = await client()
        .callTool('broken')
        .then(
          () => undefined,
          (failure: unknown) => failure,
        );
      expect(error).toBeInstanceOf(ResultValidationError);
      expect((error as ResultValidationError).message).toBe('tools/call result: /content must be an array');
      expect((error as ResultValidationError).path).toBe('/content');
    });

    it('rejects a tools/call whose isError is not a boolean', async () => {
      await expect(client().callTool('flag')).rejects.toThrow('tools/call result: /isError must be a boolean');
    });

    it('rejects a tools/call with a content block of no known type', async () => {
      await expect(client().callTool('untyped')).rejects.toThrow('tools/call result: /content/0/type must be one of');
    });

    it('the next call on the connection works, the client still ready', async () => {
      await client()
        .callTool('broken')
        .catch(() => undefined);
      await expect(client().callTool('fine')).resolves.toEqual({ content: [{ type: 'text', text: 'ok fine' }] });
      expect(client().state).toBe('ready');
    });
  });
});
