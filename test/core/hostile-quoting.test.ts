/**
 * Hostile values in error messages, tool results and log lines: a megabyte name, URI or argument key, and
 * values nested 10,000 deep where they can still arrive (in process, by reference, or from a handler). Each
 * time the text says what was wrong, quotes at most a bounded excerpt, and no stack overflow leaks out as a
 * RangeError or a -32603.
 */
import { throwError } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HubCatalog, type CatalogSource } from '../../lib/compose/catalog';
import { dispatchDirect, type ForwardedMethod } from '../../lib/compose/direct';
import { assignNames, DEFAULT_NAMING, namingPolicy } from '../../lib/compose/naming';
import { deepFreeze } from '../../lib/core/freeze';
import { createAjvValidator } from '../../lib/validation/json-schema';
import type { UpstreamCatalog } from '../../lib/compose/session';
import { createStderrLogger, silentLogger, type Logger } from '../../lib/core/logger';
import { ErrorCode, McpError } from '../../lib/jsonrpc/errors';
import type { JsonObject } from '../../lib/jsonrpc/types';
import { defineServer } from '../../lib/server/definition';
import { UriTemplate } from '../../lib/server/uri-template';
import { Server } from '../../lib/server/server';
import { createMemoryPair } from '../../transports/memory';
import { validateEmitted } from '../helpers/pair';
import { RawPeer } from '../helpers/raw-peer';
import { tool } from '../helpers/fixtures';

/** A megabyte of one character: what a hostile peer sends as a name, a URI or a key. */
const HUGE = 'x'.repeat(1 << 20);
/** What a bounded message may take (a few excerpts and our own words). */
const BOUND = 1024;
/** `{"a":{"a":...}}`, 10,000 levels: too deep for `JSON.stringify` or `String` on the default stack. */
const deepObject = (): unknown => {
  let value: unknown = 1;
  for (let i = 0; i < 10_000; i++) value = { a: value };
  return value;
};
const deepArray = (): unknown => {
  let value: unknown = [1];
  for (let i = 0; i < 10_000; i++) value = [value];
  return value;
};

const definition = defineServer({
  name: 's',
  version: '1',
  tools: [
    tool('strict', undefined, { inputSchema: { type: 'object', additionalProperties: false } }),
    tool('deep-structured', () => ({ content: [], structuredContent: deepObject() as JsonObject })),
    tool('huge-type', () => ({ content: [{ type: HUGE } as never] })),
    tool('deep-type', () => ({ content: [{ type: deepObject() } as never] })),
    tool('throws-deep', () => {
      throw deepArray();
    }),
  ],
  prompts: [{ name: 'greet', arguments: [{ name: 'who' }], get: () => [], complete: { who: () => [] } }],
  resources: [{ uri: 'file:///a', name: 'a', read: () => 'a' }],
  resourceTemplates: [
    {
      uriTemplate: 'file:///docs/{name}',
      name: 'docs',
      read: () => 'doc',
      complete: { name: () => [] },
      updates: () => throwError(() => new Error('the change feed is gone')),
    },
  ],
});

/**
 * A server driven by a raw peer in memory, by reference: a deep value arrives as it was sent (a wire's decoder
 * would refuse it past 128 levels). Not frozen, so the values stay as the test built them.
 */
async function initialized(
  logger: Logger = silentLogger,
): Promise<{ peer: RawPeer; update: (next: typeof definition) => void }> {
  const [peerSide, serverSide] = createMemoryPair({ freeze: false });
  const server = new Server(definition, { logger });
  validateEmitted(server.connect(serverSide));
  const peer = new RawPeer(peerSide);
  await peer.initialize();
  return { peer, update: (next) => server.update(next) };
}

/** The error answer is bounded and says what was wrong; it is never a stack overflow. */
function expectBoundedError(response: any, code: number, says: string): void {
  expect(response.error, JSON.stringify(response).slice(0, 300)).toBeDefined();
  const { message } = response.error;
  expect(message).toContain(says);
  expect(message.length).toBeLessThanOrEqual(BOUND);
  expect(message).not.toMatch(/call stack/i);
  expect(response.error.code).toBe(code);
  expect(JSON.stringify(response.error).length).toBeLessThanOrEqual(2 * BOUND + 200);
}

describe('error answers to a megabyte name, URI or key quote a bounded excerpt', () => {
  const cases: [label: string, method: string, params: JsonObject, code: number, says: string][] = [
    ['tools/call, unknown tool', 'tools/call', { name: HUGE }, ErrorCode.InvalidParams, 'Unknown tool: xxx'],
    ['prompts/get, unknown prompt', 'prompts/get', { name: HUGE }, ErrorCode.InvalidParams, 'Unknown prompt: xxx'],
    [
      'prompts/get, non-string argument under a huge key',
      'prompts/get',
      { name: 'greet', arguments: { [HUGE]: 1 } },
      ErrorCode.InvalidParams,
      'must be a string',
    ],
    [
      'completion, unknown prompt',
      'completion/complete',
      { ref: { type: 'ref/prompt', name: HUGE }, argument: { name: 'who', value: '' } },
      ErrorCode.InvalidParams,
      'Unknown prompt: xxx',
    ],
    [
      'completion, unknown prompt argument',
      'completion/complete',
      { ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: HUGE, value: '' } },
      ErrorCode.InvalidParams,
      'Prompt greet has no argument "xxx',
    ],
    [
      'completion, unknown resource template',
      'completion/complete',
      { ref: { type: 'ref/resource', uri: HUGE }, argument: { name: 'name', value: '' } },
      ErrorCode.InvalidParams,
      'Unknown resource template: xxx',
    ],
    [
      'completion, unknown template variable',
      'completion/complete',
      { ref: { type: 'ref/resource', uri: 'file:///docs/{name}' }, argument: { name: HUGE, value: '' } },
      ErrorCode.InvalidParams,
      'has no variable "xxx',
    ],
    ['resources/read, unknown URI', 'resources/read', { uri: HUGE }, ErrorCode.ResourceNotFound, 'Resource not found'],
    [
      'resources/subscribe, unknown URI',
      'resources/subscribe',
      { uri: HUGE },
      ErrorCode.ResourceNotFound,
      'Resource not found',
    ],
  ];

  it.each(cases)('%s', async (_label, method, params, code, says) => {
    const { peer } = await initialized();
    expectBoundedError(await peer.request(method, params), code, says);
  });

  it('keeps a real URI whole in the -32002 data, and cuts a megabyte one', async () => {
    const { peer } = await initialized();
    const real = `https://example.com/${'a'.repeat(500)}`;
    expect((await peer.request('resources/read', { uri: real })).error.data).toEqual({ uri: real });
    const { data } = (await peer.request('resources/read', { uri: HUGE })).error;
    expect(data.uri.startsWith('xxx')).toBe(true);
    expect(data.uri.length).toBeLessThanOrEqual(BOUND);
  });

  it('logs a failed change stream quoting a bounded excerpt of the subscribed URI', async () => {
    const warnings: string[] = [];
    const { peer } = await initialized({ ...silentLogger, warn: (message) => warnings.push(message) });
    const uri = `file:///docs/${'y'.repeat(8000)}`; // as long as a template match allows
    expect((await peer.request('resources/subscribe', { uri })).result).toEqual({});
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^The change stream of file:\/\/\/docs\/yyy.* failed$/);
    expect(warnings[0]!.length).toBeLessThanOrEqual(BOUND);
  });

  const dropped: [label: string, method: string, params: JsonObject, code: number, says: string][] = [
    ['tools/call, huge name', 'tools/call', { name: HUGE }, ErrorCode.InvalidParams, 'Unknown tool: xxx'],
    ['tools/call, deep name', 'tools/call', { name: deepArray() as never }, ErrorCode.InvalidParams, 'Unknown tool'],
    ['prompts/get, huge name', 'prompts/get', { name: HUGE }, ErrorCode.InvalidParams, 'Unknown prompt: xxx'],
    [
      'prompts/get, deep name',
      'prompts/get',
      { name: deepArray() as never },
      ErrorCode.InvalidParams,
      'Unknown prompt',
    ],
    ['resources/read, huge URI', 'resources/read', { uri: HUGE }, ErrorCode.ResourceNotFound, 'Resource not found'],
    [
      'resources/read, deep URI',
      'resources/read',
      { uri: deepArray() as never },
      ErrorCode.ResourceNotFound,
      'Resource not found',
    ],
  ];

  it.each(dropped)('after the definition dropped the whole list: %s', async (_label, method, params, code, says) => {
    const { peer, update } = await initialized();
    update(defineServer({ name: 's', version: '1' }));
    await peer.drain(); // the list_changed notifications
    expectBoundedError(await peer.request(method, params), code, says);
  });

  const direct: [method: ForwardedMethod, params: JsonObject, code: number, says: string][] = [
    ['tools/call', { name: HUGE }, ErrorCode.InvalidParams, 'Unknown tool: xxx'],
    ['tools/call', { name: deepArray() as never }, ErrorCode.InvalidParams, 'Unknown tool'],
    ['prompts/get', { name: HUGE }, ErrorCode.InvalidParams, 'Unknown prompt: xxx'],
    ['resources/read', { uri: HUGE }, ErrorCode.ResourceNotFound, 'Resource not found'],
  ];

  it.each(direct)('a hub serving an in-process upstream without the list: %s', (method, params, code, says) => {
    const empty = defineServer({ name: 'local', version: '1' });
    let thrown: unknown;
    try {
      dispatchDirect(empty, method, params, {} as never);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(McpError);
    const { code: got, message, data } = thrown as McpError;
    expectBoundedError({ error: { code: got, message, data } }, code, says);
  });
});

describe('tool results made from hostile values stay bounded tool errors', () => {
  const cases: [label: string, name: string, args: JsonObject, says: string][] = [
    ['arguments with a megabyte key', 'strict', { [HUGE]: 1 }, 'Invalid arguments for tool strict'],
    [
      'structuredContent nested 10,000 deep, no content',
      'deep-structured',
      {},
      'Tool deep-structured returned structuredContent that cannot be written as JSON: it nests too deep',
    ],
    ['a content block whose type is a megabyte', 'huge-type', {}, 'content of unknown type "xxx'],
    ['a content block whose type is 10,000 deep', 'deep-type', {}, 'content of unknown type {"a":{"a":'],
    ['a handler throwing an array 10,000 deep', 'throws-deep', {}, '[[[['],
  ];

  it.each(cases)('%s', async (_label, name, args, says) => {
    const { peer } = await initialized();
    const response = await peer.request('tools/call', { name, arguments: args });
    expect(response.error, JSON.stringify(response.error)?.slice(0, 300)).toBeUndefined();
    expect(response.result.isError).toBe(true);
    const text: string = response.result.content[0].text;
    expect(text).toContain(says);
    expect(text).not.toMatch(/call stack/i);
    expect(text.length).toBeLessThanOrEqual(BOUND);
  });
});

describe('URI template errors quote a bounded excerpt of the template', () => {
  const cases: [label: string, template: string, says: string][] = [
    ['an unclosed brace', `{${HUGE}`, 'unclosed "{"'],
    ['a bad variable name', `{a!${HUGE}}`, 'invalid variable name "a!xxx'],
    ['a bad modifier', `{a:${'9'.repeat(1 << 20)}}`, 'invalid modifier ":999'],
  ];

  it.each(cases)('%s', (_label, template, says) => {
    expect(() => UriTemplate.parse(template)).toThrow(TypeError);
    try {
      UriTemplate.parse(template);
    } catch (error) {
      const { message } = error as Error;
      expect(message).toContain(says);
      expect(message).toMatch(/^Invalid URI template "/);
      expect(message.length).toBeLessThanOrEqual(BOUND);
    }
  });
});

describe("the hub's catalog problems quote a bounded excerpt of what an upstream offered", () => {
  const source = (name: string, catalog: Partial<UpstreamCatalog>): CatalogSource =>
    ({
      name,
      naming: DEFAULT_NAMING,
      accepts: { tools: () => true, prompts: () => true, resources: () => true },
      serving: true,
      catalog: { capabilities: {}, tools: [], prompts: [], resources: [], resourceTemplates: [], ...catalog },
    }) as unknown as CatalogSource;

  it('an invalid tool, prompt and template with megabyte names, a duplicate megabyte URI', () => {
    const built = new HubCatalog().build([
      source('first', {
        tools: [{ name: HUGE, inputSchema: { type: 'string' } } as never],
        prompts: [{ name: deepArray(), arguments: 'no' } as never],
        resourceTemplates: [{ uriTemplate: `{${HUGE}`, name: 't' }],
        resources: [{ uri: HUGE, name: 'r' }],
      }),
      source('second', { resources: [{ uri: HUGE, name: 'r' }] }),
    ]);
    const messages = built.problems.map((problem) => problem.message);
    expect(messages).toHaveLength(4);
    expect(messages).toEqual([
      expect.stringMatching(
        /^first offers an invalid tool "xxx.*: its inputSchema is not of type "object"; it is left out$/,
      ),
      expect.stringMatching(/^first offers an invalid prompt "\[\[\[.*: it has no name; it is left out$/),
      expect.stringMatching(/^resource xxx.* of second is also offered by first, which comes first: it is left out$/),
      expect.stringMatching(
        /^first offers an invalid resource template "t": Invalid URI template "\{xxx.*unclosed "\{"; it is left out$/,
      ),
    ]);
    for (const problem of built.problems) expect(problem.message.length).toBeLessThanOrEqual(BOUND);
    // An invalid entry's name may be anything: its `original` is an excerpt too (a duplicate keeps its real URI).
    const invalid = built.problems.filter((problem) => problem.message.includes('offers an invalid'));
    for (const problem of invalid) expect(problem.original.length).toBeLessThanOrEqual(BOUND);
  });
});

describe('the stderr logger writes a bounded excerpt of any detail', () => {
  afterEach(() => vi.restoreAllMocks());

  const details: [label: string, detail: unknown, starts: string][] = [
    ['a megabyte string in an object', { data: HUGE }, '{"data":"xxx'],
    ['a value nested 10,000 deep', deepObject(), '{"a":{"a":'],
    ['an error with a megabyte message', new Error(HUGE), 'Error: xxx'],
  ];

  it.each(details)('%s', (_label, detail, starts) => {
    const lines: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: unknown) => {
      lines.push(String(chunk));
      return true;
    });
    createStderrLogger('debug').warn('The peer sent', detail);
    expect(lines).toHaveLength(1);
    expect(lines[0]!.startsWith(`[switchboard] warn: The peer sent ${starts}`)).toBe(true);
    expect(lines[0]!.length).toBeLessThanOrEqual(2000 + 100);
  });

  it('takes its bound from maxDetailChars', () => {
    const lines: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: unknown) => {
      lines.push(String(chunk));
      return true;
    });
    createStderrLogger('debug', { maxDetailChars: 50 }).error('Lost', { data: HUGE });
    expect(lines[0]!.length).toBeLessThanOrEqual('[switchboard] error: Lost '.length + 50 + 1);
  });
});

describe('helpers that meet peer values of any size or depth', () => {
  it('deep-freezes a value 10,000 levels deep without growing the call stack', () => {
    const value = deepObject() as { a: unknown };
    expect(() => deepFreeze(value)).not.toThrow();
    let level: unknown = value;
    for (let depth = 0; depth < 10_000; depth++) {
      expect(Object.isFrozen(level)).toBe(true);
      level = (level as { a: unknown }).a;
    }
  });

  it('passes a 10,000-deep message through a freezing memory pair', async () => {
    const [a, b] = createMemoryPair({ freeze: true });
    const received = new Promise((resolve) => b.messages.subscribe(resolve));
    await a.send({ jsonrpc: '2.0', method: 'notifications/deep', params: { value: deepObject() } } as never);
    expect(await received).toMatchObject({ method: 'notifications/deep' });
  });

  it("quotes a bounded excerpt of a schema problem's path and extra key", () => {
    const check = createAjvValidator().compile({ type: 'object', additionalProperties: false, properties: {} });
    const problems = check({ [HUGE]: 1 })!;
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('must NOT have additional properties');
    expect(problems[0]!.length).toBeLessThanOrEqual(BOUND);
  });

  it('names a clash of two megabyte names with a bounded excerpt', () => {
    const policy = namingPolicy({ collision: 'error' });
    const candidate = (upstream: string) => ({ upstream, policy, original: HUGE, item: upstream, serving: true });
    const { problems } = assignNames('tool', [candidate('first'), candidate('second')]);
    expect(problems).toHaveLength(1);
    expect(problems[0]!.message).toContain('already uses');
    expect(problems[0]!.message.length).toBeLessThanOrEqual(BOUND + 200);
  });
});
