/**
 * Our client against a real peer: the official reference server `@modelcontextprotocol/server-everything`,
 * once spawned over stdio by `StdioClientTransport`, once started in its `streamableHttp` mode and reached
 * over HTTP by `StreamableHttpClientTransport`; the same body of tests runs on both. The client declares
 * sampling, elicitation (form and URL) and roots, so the server registers its conditional tools and
 * exercises every server→client path. Everything our client emits is checked against the official schema
 * (`validateEmitted`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isAlive } from '../helpers/processes';
import { filter, firstValueFrom, Subject, timeout, type Observable } from 'rxjs';
import { Client } from '../../lib/client/client';
import type { ElicitFormParams, ElicitUrlParams } from '../../lib/protocol/client-features';
import type { CreateMessageParams } from '../../lib/protocol/client-features';
import { McpError } from '../../lib/jsonrpc/errors';
import { StreamableHttpClientTransport } from '../../transports/http/streamable-client';
import { StdioClientTransport } from '../../transports/stdio';
import type { Transport } from '../../transports/transport';
import { validateEmitted } from '../helpers/pair';
import { recordEmitted } from '../helpers/schema';
import { nextEvent, within } from '../helpers/wait';
import { textOf } from '../helpers/content';

const serverEntry = fileURLToPath(
  new URL('../../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url),
);
const FAST_SHUTDOWN = { stdinGraceMs: 1000, terminateGraceMs: 1000 };
const ROOTS = [
  { uri: 'file:///tmp/switchboard-root-a', name: 'Root A' },
  { uri: 'file:///tmp/switchboard-root-b', name: 'Root B' },
];
const CONDITIONAL_TOOLS = [
  'get-roots-list',
  'trigger-sampling-request',
  'trigger-elicitation-request',
  'trigger-url-elicitation',
];

/** How the tests reach the server: a fresh transport per session, and what to release afterwards. */
interface Peer {
  readonly name: string;
  /** Before the first test (the HTTP server runs once for the whole run). */
  setUp?(): Promise<void>;
  tearDown?(): Promise<void>;
  transport(): Transport;
  /** After the client closed: make sure nothing is left of this session. */
  release(transport: Transport): Promise<void>;
}

const stdioPeer: Peer = {
  name: 'stdio',
  transport: () =>
    new StdioClientTransport({ command: process.execPath, args: [serverEntry, 'stdio'], shutdown: FAST_SHUTDOWN }),
  async release(transport) {
    const pid = (transport as StdioClientTransport).pid;
    await transport.close();
    if (pid !== undefined && isAlive(pid)) process.kill(-pid, 'SIGKILL');
  },
};

/**
 * Makes the server listen on 127.0.0.1 (it binds every interface by default) and report the port it got
 * for `PORT=0` on stderr (it only logs the port it was given).
 */
const REPORT_PORT = `data:text/javascript,${encodeURIComponent(`
import net from 'node:net';
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if ((typeof args[0] === 'number' || typeof args[0] === 'string') && typeof args[1] !== 'string') args.splice(1, 0, '127.0.0.1');
  this.once('listening', () => process.stderr.write('switchboard-test-port ' + this.address().port + '\\n'));
  return listen.apply(this, args);
};`)}`;

/** server-everything in `streamableHttp` mode, one process for the run; sessions come and go. */
function streamableHttpPeer(): Peer & { readonly stdout: Observable<string> } {
  let child: ChildProcess | undefined;
  let url = '';
  const stdout = new Subject<string>();
  return {
    name: 'Streamable HTTP',
    stdout,
    async setUp() {
      child = spawn(process.execPath, ['--import', REPORT_PORT, serverEntry, 'streamableHttp'], {
        env: { ...process.env, PORT: '0' },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      });
      createInterface({ input: child.stdout! }).on('line', (line) => stdout.next(line));
      const port = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child!.stderr! }).on('line', (line) => {
          const found = /^switchboard-test-port (\d+)$/.exec(line);
          if (found) resolve(found[1]!);
        });
        child!.once('exit', (code) => reject(new Error(`server-everything exited with ${code}`)));
      });
      url = `http://127.0.0.1:${port}/mcp`;
    },
    async tearDown() {
      const pid = child?.pid;
      if (pid === undefined) return;
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      if (isAlive(pid)) process.kill(-pid, 'SIGKILL');
      await exited;
    },
    transport: () => new StreamableHttpClientTransport(url, { reconnect: { initialDelayMs: 50 } }),
    release: (transport) => transport.close(),
  };
}

const httpPeer = streamableHttpPeer();

interface Session {
  readonly client: Client;
  readonly transport: Transport;
  readonly sampling: CreateMessageParams[];
  readonly forms: ElicitFormParams[];
  readonly urls: ElicitUrlParams[];
  /** Methods of the server→client requests our client received, in order. */
  readonly served: string[];
  /**
   * Settles when the server first asks for roots/list: it registers its conditional tools on
   * `notifications/initialized`, then asks for roots (350 ms later), so by then the tools are listed.
   */
  readonly rootsAsked: Promise<unknown>;
}

const open: { session: Session; peer: Peer }[] = [];

/** What our form handler answers: the required field and a few others, the rest left to the defaults. */
const FORM_ANSWER = { name: 'Ada Lovelace', check: true, number: 7 };

/** Our client, not yet connected, with handlers that record what the server asked of them. */
function newSession(peer: Peer, formAnswer: Record<string, string | number | boolean> = FORM_ANSWER): Session {
  const sampling: CreateMessageParams[] = [];
  const forms: ElicitFormParams[] = [];
  const urls: ElicitUrlParams[] = [];
  const served: string[] = [];
  const transport = peer.transport();
  const client = new Client(
    { name: 'switchboard-peer-test', version: '1.0.0' },
    {
      sampling: (params) => {
        sampling.push(params);
        return { role: 'assistant', content: { type: 'text', text: 'Sampled by switchboard' }, model: 'test-model' };
      },
      elicitation: {
        form: (params) => {
          forms.push(params);
          return { action: 'accept', content: formAnswer };
        },
        url: (params) => {
          urls.push(params);
          return { action: 'accept' };
        },
      },
      roots: ROOTS,
    },
  );
  // roots/list arrives after initialized: record it from the first message on.
  const inboundRequests = client.trace$.pipe(filter((event) => event.kind === 'request' && event.direction === 'in'));
  inboundRequests.subscribe((event) => served.push(event.method!));
  const rootsAsked = firstValueFrom(inboundRequests.pipe(filter((event) => event.method === 'roots/list')));
  rootsAsked.catch(() => undefined); // a session closed before it was asked
  return { client, transport, sampling, forms, urls, served, rootsAsked };
}

/** A session for one test, everything it emits schema-checked, closed after the test. */
async function connect(peer: Peer, formAnswer?: Record<string, string | number | boolean>): Promise<Session> {
  const session = newSession(peer, formAnswer);
  validateEmitted(session.client);
  open.push({ session, peer });
  await session.client.connect(session.transport, { timeout: 10_000 });
  return session;
}

/**
 * One session shared by the tests of a describe (one server process over stdio), opened before them and
 * closed after them; what it emitted is schema-checked after each test.
 */
function sharedSession(peer: Peer): () => Session {
  let session: Session | undefined;
  let emitted: ReturnType<typeof recordEmitted> | undefined;
  beforeAll(async () => {
    session = newSession(peer);
    emitted = recordEmitted(session.client);
    await session.client.connect(session.transport, { timeout: 10_000 });
  }, 15_000);
  afterEach(() => emitted?.assertValid());
  afterAll(async () => {
    if (!session) return;
    await session.client.close();
    await peer.release(session.transport);
  });
  return () => session!;
}

/** The tools list once the conditional tools are registered. */
async function toolsWhenReady(session: Session): Promise<string[]> {
  await within(session.rootsAsked, 'the roots/list request that follows the conditional tools', 10_000);
  return (await session.client.listTools({ timeout: 5000 })).map((tool) => tool.name);
}

afterEach(async () => {
  for (const { session, peer } of open.splice(0)) {
    await session.client.close();
    await peer.release(session.transport);
  }
});

describe.each([stdioPeer, httpPeer])('server-everything over $name', { timeout: 15_000 }, (peer) => {
  beforeAll(() => peer.setUp?.(), 15_000);
  afterAll(() => peer.tearDown?.());

  describe('the handshake', () => {
    const session = sharedSession(peer);

    it('reports the server info', () => {
      expect(session().client.serverInfo).toMatchObject({ name: 'mcp-servers/everything' });
      expect(typeof session().client.serverInfo?.version).toBe('string');
    });

    it('negotiates protocol 2025-11-25', () => {
      expect(session().client.protocolVersion).toBe('2025-11-25');
    });

    it("reports the server's capabilities", () => {
      expect(session().client.serverCapabilities).toMatchObject({
        tools: { listChanged: true },
        prompts: { listChanged: true },
        resources: { subscribe: true, listChanged: true },
        logging: {},
        completions: {},
      });
    });

    it("reports the server's instructions", () => {
      expect(typeof session().client.instructions).toBe('string');
      expect(session().client.instructions!.length).toBeGreaterThan(20);
    });

    it('declares sampling, form and URL elicitation, and roots', () => {
      expect(session().client.capabilities).toEqual({
        sampling: {},
        elicitation: { form: {}, url: {} },
        roots: { listChanged: true },
      });
    });
  });

  it('lists the conditional tools after their list_changed notifications', async () => {
    const session = await connect(peer);
    const { client } = session;
    const changes: { params?: unknown }[] = [];
    const watching = client.notifications$
      .pipe(filter((n) => n.method === 'notifications/tools/list_changed'))
      .subscribe((note) => changes.push(note));
    const names = await toolsWhenReady(session);
    watching.unsubscribe();
    for (const name of [
      'echo',
      'get-sum',
      'get-structured-content',
      'get-tiny-image',
      'get-resource-links',
      'trigger-long-running-operation',
      'toggle-simulated-logging',
      'toggle-subscriber-updates',
      ...CONDITIONAL_TOOLS,
    ]) {
      expect(names).toContain(name);
    }
    // The async (task) variants need task capabilities we do not declare.
    expect(names).not.toContain('trigger-sampling-request-async');
    expect(names).not.toContain('trigger-elicitation-request-async');
    // The notifications may all have arrived before we subscribed (over HTTP, before the standalone stream
    // opened); when seen, they are bare.
    for (const note of changes) expect(note.params ?? {}).toEqual({});
  });

  describe('plain tools', () => {
    const session = sharedSession(peer);

    it('calls echo', async () => {
      expect(textOf(await session().client.callTool('echo', { message: 'hello peer' }))).toBe('Echo: hello peer');
    });

    it('calls get-sum', async () => {
      expect(textOf(await session().client.callTool('get-sum', { a: 2, b: 40 }))).toContain('42');
    });

    it('calls get-tiny-image and gets a PNG', async () => {
      const image = await session().client.callTool('get-tiny-image', {});
      const block = image.content.find((item) => item.type === 'image') as
        { type: 'image'; data: string; mimeType: string } | undefined;
      expect(block?.mimeType).toBe('image/png');
      expect(Buffer.from(block!.data, 'base64').subarray(1, 4).toString('latin1')).toBe('PNG');
    });
  });

  it('checks get-structured-content against its outputSchema', async () => {
    const { client } = await connect(peer);
    const tool = (await client.listTools()).find((t) => t.name === 'get-structured-content');
    expect(tool?.outputSchema).toMatchObject({ type: 'object', required: ['temperature', 'conditions', 'humidity'] });
    const result = await client.callTool('get-structured-content', { location: 'Chicago' });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({
      temperature: expect.any(Number),
      conditions: expect.any(String),
      humidity: expect.any(Number),
    });
  });

  it('returns resource links that can be read back', async () => {
    const { client } = await connect(peer);
    const result = await client.callTool('get-resource-links', { count: 2 });
    const links = result.content.filter((block) => block.type === 'resource_link') as { uri: string }[];
    expect(links).toHaveLength(2);
    for (const link of links) {
      expect(link.uri).toMatch(/^demo:\/\/resource\/dynamic\/(text|blob)\/\d+$/);
      const read = await client.readResource(link.uri);
      expect(read.contents[0]?.uri).toBe(link.uri);
    }
  });

  it('reports increasing progress from trigger-long-running-operation', async () => {
    const { client } = await connect(peer);
    const progress: { progress: number; total?: number }[] = [];
    const result = await client.callTool(
      'trigger-long-running-operation',
      { duration: 1, steps: 4 },
      { timeout: 8000, onProgress: (p) => progress.push({ progress: p.progress, total: p.total }) },
    );
    expect(textOf(result)).toMatch(/complete/i);
    expect(progress).toHaveLength(4);
    for (let i = 1; i < progress.length; i++) expect(progress[i]!.progress).toBeGreaterThan(progress[i - 1]!.progress);
    expect(progress.at(-1)).toEqual({ progress: 4, total: 4 });
  });

  it('answers trigger-sampling-request with our sampling handler', async () => {
    const session = await connect(peer);
    const { client, sampling, served } = session;
    await toolsWhenReady(session);
    const result = await client.callTool('trigger-sampling-request', { prompt: 'Say hi', maxTokens: 33 });
    expect(sampling).toHaveLength(1);
    const request = sampling[0]!;
    expect(request.maxTokens).toBe(33);
    expect(request.systemPrompt).toBe('You are a helpful test server.');
    expect(request.messages).toHaveLength(1);
    expect(request.messages[0]).toMatchObject({
      role: 'user',
      content: { type: 'text', text: expect.stringContaining('Say hi') },
    });
    expect(textOf(result)).toContain('Sampled by switchboard');
    expect(served).toContain('sampling/createMessage');
  });

  it('answers trigger-elicitation-request with our form handler, defaults applied', async () => {
    const session = await connect(peer);
    const { client, forms } = session;
    await toolsWhenReady(session);
    const result = await client.callTool('trigger-elicitation-request', {});
    // The server's schema passed our restricted-schema checks, or the handler would not have run.
    expect(forms).toHaveLength(1);
    const form = forms[0]!;
    expect(form.mode ?? 'form').toBe('form');
    expect(form.requestedSchema.required).toEqual(['name']);
    expect(Object.keys(form.requestedSchema.properties)).toEqual(
      expect.arrayContaining(['name', 'check', 'email', 'homepage', 'birthdate', 'integer', 'number']),
    );
    expect(result.isError).toBeFalsy();
    const text = textOf(result);
    expect(text).toContain('Ada Lovelace');
    // Fields we left out got the schema's defaults before the answer was sent.
    expect(text).toContain('It was a dark and stormy night.');
    expect(text).toMatch(/"integer": 42/);
    expect(text).toMatch(/"number": 7/);
  });

  // The form has `number: { type: 'number', default: 3.14 }`. Left out, our client fills in 3.14, but the
  // official ElicitResult schema only carries string, integer, boolean or string[] values: what we send is
  // invalid (validateEmitted fails this test). Kept strict on purpose: see the report.
  it('applies a fractional number default and still sends a schema-valid ElicitResult', async () => {
    const session = await connect(peer, { name: 'Ada Lovelace', check: true });
    const { client, forms } = session;
    await toolsWhenReady(session);
    const result = await client.callTool('trigger-elicitation-request', {});
    expect(forms).toHaveLength(1);
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toContain('Ada Lovelace');
  });

  describe('URL elicitation', () => {
    const session = sharedSession(peer);
    const url = 'https://example.com/authorize?state=xyz';

    it('answers trigger-url-elicitation with our URL handler', async () => {
      const { client, urls } = session();
      await toolsWhenReady(session());
      const result = await client.callTool('trigger-url-elicitation', { url, elicitationId: 'elicit-1' });
      expect(urls).toHaveLength(1);
      expect(urls[0]).toMatchObject({ mode: 'url', url, elicitationId: 'elicit-1', message: expect.any(String) });
      expect(result.isError).toBeFalsy();
      expect(textOf(result)).toMatch(/accept/i);
    });

    it('sees -32042 on the error path', async () => {
      await toolsWhenReady(session());
      const failure = await session()
        .client.callTool('trigger-url-elicitation', { url, elicitationId: 'elicit-2', errorPath: true })
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(failure).toBeInstanceOf(McpError);
      expect((failure as McpError).code).toBe(-32042);
    });
  });

  describe('roots', () => {
    const session = sharedSession(peer);

    it('is asked for roots/list first, after initialize', async () => {
      const rootsLog = firstValueFrom(
        session().client.logs$.pipe(
          filter((log) => String(log.data).includes('Roots updated')),
          timeout(5000),
        ),
      );
      expect(String((await rootsLog).data)).toContain('2 root(s)');
      expect(session().served[0]).toBe('roots/list');
    });

    it('get-roots-list shows our roots', async () => {
      await toolsWhenReady(session());
      const text = textOf(await session().client.callTool('get-roots-list', {}));
      for (const root of ROOTS) {
        expect(text).toContain(root.uri);
        expect(text).toContain(root.name);
      }
    });
  });

  describe('resources', () => {
    const session = sharedSession(peer);
    const staticDocuments = async () =>
      (await session().client.listResources()).filter((r) => r.uri.startsWith('demo://resource/static/document/'));

    it('lists the static resources', async () => {
      expect((await staticDocuments()).length).toBeGreaterThanOrEqual(7);
    });

    it('lists the resource templates', async () => {
      const templates = await session().client.listResourceTemplates();
      expect(templates.map((t) => t.uriTemplate)).toEqual(
        expect.arrayContaining([
          'demo://resource/dynamic/text/{resourceId}',
          'demo://resource/dynamic/blob/{resourceId}',
        ]),
      );
    });

    it('reads a static resource', async () => {
      const statics = await staticDocuments();
      const doc = statics.find((r) => r.uri.endsWith('/features.md')) ?? statics[0]!;
      const staticRead = await session().client.readResource(doc.uri);
      expect(staticRead.contents[0]).toMatchObject({ uri: doc.uri, text: expect.any(String) });
      expect((staticRead.contents[0] as { text: string }).text.length).toBeGreaterThan(0);
    });

    it('reads a templated text resource', async () => {
      const text = await session().client.readResource('demo://resource/dynamic/text/7');
      expect(text.contents[0]).toMatchObject({
        uri: 'demo://resource/dynamic/text/7',
        text: expect.stringContaining('7'),
      });
    });

    it('reads a templated blob resource', async () => {
      const blob = await session().client.readResource('demo://resource/dynamic/blob/7');
      const contents = blob.contents[0] as { uri: string; blob?: string };
      expect(contents.uri).toBe('demo://resource/dynamic/blob/7');
      expect(typeof contents.blob).toBe('string');
      expect(Buffer.from(contents.blob!, 'base64').length).toBeGreaterThan(0);
    });
  });

  it('delivers resources/updated to a subscription after toggle-subscriber-updates', async () => {
    const { client } = await connect(peer);
    const uri = 'demo://resource/dynamic/text/1';
    const updated = firstValueFrom(client.subscribeResource(uri).pipe(timeout(8000)));
    // Let resources/subscribe reach the server before updates are switched on.
    await client.ping();
    const toggle = await client.callTool('toggle-subscriber-updates', {});
    expect(toggle.isError).toBeFalsy();
    expect(await updated).toMatchObject({ uri });
    await client.callTool('toggle-subscriber-updates', {});
  });

  describe('prompts', () => {
    const session = sharedSession(peer);

    it('lists prompts', async () => {
      const prompts = await session().client.listPrompts();
      expect(prompts.map((p) => p.name)).toEqual(
        expect.arrayContaining(['simple-prompt', 'args-prompt', 'completable-prompt', 'resource-prompt']),
      );
    });

    it('gets args-prompt with its argument', async () => {
      const result = await session().client.getPrompt('args-prompt', { city: 'Oslo' });
      expect(result.messages[0]).toMatchObject({
        role: 'user',
        content: { type: 'text', text: expect.stringContaining('Oslo') },
      });
    });

    it('gets an McpError for args-prompt without its argument', async () => {
      const missing = await session()
        .client.getPrompt('args-prompt', {})
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(missing).toBeInstanceOf(McpError);
    });
  });

  it('completes completable-prompt department "E" to Engineering', async () => {
    const { client } = await connect(peer);
    const completion = await client.complete({
      ref: { type: 'ref/prompt', name: 'completable-prompt' },
      argument: { name: 'department', value: 'E' },
    });
    expect(completion.values).toEqual(['Engineering']);
  });

  it('sets the logging level and receives simulated logs on logs$', async () => {
    const { client } = await connect(peer);
    await client.setLoggingLevel('debug');
    const log = firstValueFrom(
      client.logs$.pipe(
        filter((entry) => !String(entry.data).includes('Roots updated')),
        timeout(8000),
      ),
    );
    expect((await client.callTool('toggle-simulated-logging', {})).isError).toBeFalsy();
    const entry = await log;
    expect(['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency']).toContain(entry.level);
    expect(entry.data).toBeDefined();
    await client.callTool('toggle-simulated-logging', {});
  });

  if (peer === stdioPeer) {
    it('close() leaves no process behind', async () => {
      const { client, transport } = await connect(peer);
      const pid = (transport as StdioClientTransport).pid!;
      expect(pid).toBeGreaterThan(0);
      expect(isAlive(pid)).toBe(true);
      await client.close();
      await transport.close();
      expect(() => process.kill(pid, 0)).toThrow();
      expect(() => process.kill(-pid, 0)).toThrow();
    });
  } else {
    it('close() ends the session on the server with DELETE', async () => {
      const { client, transport } = await connect(peer);
      const sessionId = transport.sessionId!;
      expect(sessionId).toMatch(/^[\x21-\x7e]+$/);
      const ended = `Received session termination request for session ${sessionId}`;
      const logged = nextEvent(httpPeer.stdout, (line) => line === ended, 'the termination line');
      await client.close();
      await logged;
    });
  }
});
