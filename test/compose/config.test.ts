/**
 * Hub config files: the `mcpServers` shape of Claude Desktop and Claude Code, VS Code's `servers` with
 * `type`, our own options, every mistake reported at once, and a hub started from a file whose server is
 * a real child process.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '../../lib/client/client';
import { ConfigError, hubFromConfig, hubFromConfigFile, parseConfig } from '../../lib/compose/config';
import { closest, editDistance } from '../../lib/compose/suggest';
import { silentLogger } from '../../lib/core/logger';
import { createMemoryPair } from '../../transports/memory';
import { validateEmitted } from '../helpers/pair';
import { fixturePath } from '../helpers/paths';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

const problemsOf = (config: unknown, env: Record<string, string> = {}, file?: string): readonly string[] => {
  try {
    parseConfig(config, { env, ...(file && { file }) });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error('The config was accepted');
};

describe('parseConfig', () => {
  it('reads a Claude Desktop config: stdio servers with args, env and cwd', () => {
    const { options, warnings } = parseConfig(
      {
        mcpServers: {
          files: {
            command: 'npx',
            args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'],
            env: { DEBUG: '1', PORT: 3000 },
            cwd: 'work',
          },
          local: { command: './bin/server', autoApprove: ['read'] },
        },
      },
      { baseDir: '/etc/hub' },
    );
    expect(warnings).toEqual([]);
    expect(options.upstreams).toEqual([
      {
        name: 'files',
        source: {
          kind: 'stdio',
          command: 'npx',
          args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'],
          env: { DEBUG: '1', PORT: '3000' },
          cwd: '/etc/hub/work',
        },
      },
      { name: 'local', source: { kind: 'stdio', command: '/etc/hub/bin/server' } },
    ]);
  });

  it("reads VS Code's servers with a type, remote URLs with headers, and our options", () => {
    const { options } = parseConfig(
      {
        servers: {
          search: { type: 'http', url: 'https://example.com/mcp', headers: { Authorization: 'Bearer ${env:TOKEN}' } },
          legacy: { type: 'sse', url: 'http://127.0.0.1:8080/sse', lazy: true, idleTimeoutMs: 60000 },
          socket: { url: 'ws://127.0.0.1:9000/mcp', tools: ['read_*'] },
          peer: { type: 'framed', path: 'peer.sock', prefix: false },
          tcp: { type: 'framed', host: '10.0.0.2', port: 7000, restart: { maxRestarts: 2, initialDelayMs: 100 } },
          off: { command: 'nope', disabled: true },
        },
        inputs: [],
        switchboard: { name: 'my-hub', prefix: true, collision: 'rename', maxNameLength: 48, pageSize: 50 },
      },
      { env: { TOKEN: 's3cret' }, baseDir: '/srv' },
    );
    expect(options).toMatchObject({ name: 'my-hub', pageSize: 50, naming: { collision: 'rename', maxLength: 48 } });
    expect(options.upstreams).toEqual([
      {
        name: 'search',
        source: { kind: 'http', url: 'https://example.com/mcp', headers: { Authorization: 'Bearer s3cret' } },
        naming: { prefix: 'search' },
      },
      {
        name: 'legacy',
        source: { kind: 'http', url: 'http://127.0.0.1:8080/sse', transport: 'sse' },
        naming: { prefix: 'legacy' },
        lazy: true,
        idleTimeoutMs: 60000,
      },
      {
        name: 'socket',
        source: { kind: 'websocket', url: 'ws://127.0.0.1:9000/mcp' },
        naming: { prefix: 'socket' },
        tools: { allow: ['read_*'] },
      },
      { name: 'peer', source: { kind: 'framed', path: '/srv/peer.sock' } },
      {
        name: 'tcp',
        source: { kind: 'framed', host: '10.0.0.2', port: 7000 },
        naming: { prefix: 'tcp' },
        supervision: { maxRestarts: 2, initialDelayMs: 100 },
      },
    ]);
  });

  const withIgnoredSettings = () =>
    parseConfig({
      mcpServers: { 'my server': { command: 'x', prefix: true, envFile: '.env', autoApprove: ['read'] } },
      $schema: 'https://example.com/hub.schema.json',
    });

  it('makes a server name a valid prefix', () => {
    expect(withIgnoredSettings().options.upstreams[0]!.naming).toEqual({ prefix: 'my_server' });
  });

  it('warns about settings it reads but ignores', () => {
    const { warnings } = withIgnoredSettings();
    expect(warnings).toEqual(['mcpServers.my server.envFile is not supported: put the variables in "env"']);
  });

  it('refuses an unknown key at every level, naming the key, where it is and the file, with the closest key', () => {
    const problems = problemsOf(
      {
        mcpServer: {},
        mcpServers: {
          files: {
            comand: 'npx',
            command: 'npx',
            colour: 'blue',
            Lazy: true,
            restart: { maxRestart: 3, initialDelay: 10 },
            forward: { root: true },
            tools: { allow: ['a'], dney: ['b'] },
            instance: 'per-user',
          },
          web: { url: 'http://x', header: {}, args: [] },
        },
        switchboard: { nmae: 'hub', collison: 'rename', forward: { sampling: 'yes' }, unknownThing: 1 },
        extra: 1,
      },
      {},
      'hub.json',
    );
    expect(problems).toEqual([
      'Unknown key "mcpServer" in the top level of hub.json: did you mean "mcpServers"?',
      'Unknown key "extra" in the top level of hub.json',
      'Unknown key "nmae" in switchboard of hub.json: did you mean "name"?',
      'Unknown key "collison" in switchboard of hub.json: did you mean "collision"?',
      'Unknown key "unknownThing" in switchboard of hub.json',
      'switchboard.forward.sampling must be true or false, got "yes"',
      'Unknown key "comand" in mcpServers.files of hub.json: did you mean "command"?',
      'Unknown key "colour" in mcpServers.files of hub.json',
      'Unknown key "Lazy" in mcpServers.files of hub.json: did you mean "lazy"?',
      'Unknown key "maxRestart" in mcpServers.files.restart of hub.json: did you mean "maxRestarts"?',
      'Unknown key "initialDelay" in mcpServers.files.restart of hub.json: did you mean "initialDelayMs"?',
      'Unknown key "dney" in mcpServers.files.tools of hub.json: did you mean "deny"?',
      'mcpServers.files.instance must be "shared" or "per-client", got "per-user"',
      'Unknown key "root" in mcpServers.files.forward of hub.json: did you mean "roots"?',
      'Unknown key "header" in mcpServers.web of hub.json: did you mean "headers"?',
      // A key of another kind of server is known, but not here.
      'Unknown key "args" in mcpServers.web of hub.json: it is a setting of stdio servers, not http ones',
    ]);
  });

  it('reads switchboard.http: the HTTP limits and allow-lists, with unknown keys and bad values named', () => {
    const { http } = parseConfig({
      mcpServers: { a: { command: 'x' } },
      switchboard: { http: { maxSessionsPerClient: 4, headersTimeoutMs: 5000, allowedHosts: ['mcp.example'] } },
    });
    expect(http).toEqual({
      limits: { maxSessionsPerClient: 4, headersTimeoutMs: 5000 },
      allowedHosts: ['mcp.example'],
      allowedOrigins: [],
    });
    expect(parseConfig({ mcpServers: { a: { command: 'x' } } }).http).toEqual({
      limits: {},
      allowedHosts: [],
      allowedOrigins: [],
    });
    expect(
      problemsOf(
        {
          mcpServers: { a: { command: 'x' } },
          switchboard: { http: { maxSesions: 3, maxConnections: 0, allowedOrigins: 'x' } },
        },
        {},
        'hub.json',
      ),
    ).toEqual([
      'Unknown key "maxSesions" in switchboard.http of hub.json: did you mean "maxSessions"?',
      'switchboard.http.maxConnections must be a whole number of at least 1, got 0',
      'switchboard.http.allowedOrigins must be a list of strings, got "x"',
    ]);
  });

  it('reads the forward settings, the instance and the wait bound', () => {
    const { options } = parseConfig({
      mcpServers: {
        files: { command: 'x', instance: 'per-client', unavailableWaitMs: 2500, forward: { roots: true } },
      },
      switchboard: { forward: { sampling: false, elicitation: true, roots: false }, defaultLogLevel: 'warning' },
    });
    expect(options.forward).toEqual({ sampling: false, elicitation: true, roots: false });
    expect(options.defaultLogLevel).toBe('warning');
    expect(problemsOf({ mcpServers: { a: { command: 'x' } }, switchboard: { defaultLogLevel: 'loud' } })).toEqual([
      'switchboard.defaultLogLevel must be one of "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency", got "loud"',
    ]);
    expect(options.upstreams[0]).toMatchObject({
      instance: 'per-client',
      unavailableWaitMs: 2500,
      forward: { roots: true },
    });
  });

  it('reads the era of each server (unset: the hub probes, as a client does)', () => {
    const { options } = parseConfig({
      mcpServers: {
        probed: { command: 'x', era: 'auto' },
        modern: { url: 'http://h/mcp', era: 'modern' },
        old: { command: 'x' },
      },
    });
    expect(options.upstreams.map((upstream) => [upstream.name, upstream.era])).toEqual([
      ['probed', 'auto'],
      ['modern', 'modern'],
      ['old', undefined],
    ]);
  });

  it('reads "legacy", the old name of the handshake era, as "handshake"', () => {
    const { options } = parseConfig({
      mcpServers: { named: { command: 'x', era: 'handshake' }, old: { command: 'x', era: 'legacy' } },
    });
    expect(options.upstreams.map((upstream) => [upstream.name, upstream.era])).toEqual([
      ['named', 'handshake'],
      ['old', 'handshake'],
    ]);
  });

  it('refuses an era it does not know, and names the era key on a slip', () => {
    expect(problemsOf({ mcpServers: { a: { command: 'x', era: '2026-07-28' } } })).toEqual([
      'mcpServers.a.era must be one of "auto", "handshake", "modern", got "2026-07-28"',
    ]);
    expect(problemsOf({ mcpServers: { a: { command: 'x', eras: 'auto' } } })).toEqual([
      'Unknown key "eras" in mcpServers.a: did you mean "era"?',
    ]);
  });

  it('reports every mistake at once, each with where it is', () => {
    expect(
      problemsOf(
        {
          mcpServers: {
            a: {},
            b: { command: 42, args: 'x' },
            c: { url: 'not a url' },
            d: { type: 'grpc', url: 'http://x' },
            e: { command: 'x', collision: 'merge', maxNameLength: 8, tools: { allow: 'x' }, lazy: 'yes' },
            f: { url: 'http://x/${MISSING}' },
            g: { command: 'x', prefix: 'bad prefix' },
            h: 'npx server',
            i: { type: 'framed' },
          },
          switchboard: { separator: '/', listChangedDebounceMs: -1 },
        },
        {},
      ),
    ).toEqual([
      'switchboard.listChangedDebounceMs must be a whole number of at least 0, got -1',
      'switchboard naming: separator "/" may only use the characters A-Z a-z 0-9 _ - .',
      'mcpServers.a needs a "command" (a program to run) or a "url" (a server to reach)',
      'mcpServers.b.command must be a string, got 42',
      'mcpServers.b.args must be a list of strings, got "x"',
      'mcpServers.c.url is not a URL: "not a url"',
      'mcpServers.d.type must be one of "stdio", "http", "sse", "ws", "framed", got "grpc"',
      'mcpServers.e.maxNameLength must be a whole number of at least 16, got 8',
      'mcpServers.e.collision must be one of "error", "first-wins", "rename", got "merge"',
      'mcpServers.e.tools.allow must be a list of strings, got "x"',
      'mcpServers.e.lazy must be true or false, got "yes"',
      'mcpServers.f.url uses ${MISSING}, which is not set in the environment',
      'mcpServers.g naming: prefix "bad prefix" must be 1 to 128 characters of A-Z a-z 0-9 _ - .',
      'mcpServers.h must be an object, got "npx server"',
      'mcpServers.i needs a "path" (a unix socket) or a "port" for "type": "framed"',
    ]);
    expect(problemsOf({ mcpServers: [] })).toEqual(['mcpServers must be an object naming each server, got []']);
    expect(problemsOf({ tools: {} })).toEqual([
      'The config needs an "mcpServers" object (or "servers", as VS Code writes it) naming each server',
    ]);
    expect(problemsOf('{"mcpServers":{}}')).toEqual(['The config must be a JSON object, got "{\\"mcpServers\\":{}}"']);
    expect(problemsOf({ mcpServers: {} })).toEqual(['mcpServers names no server']);
  });
});

describe('the closest known key', () => {
  it('counts insertions, deletions, substitutions and swapped neighbours as one edit each', () => {
    expect(editDistance('command', 'command')).toBe(0);
    expect(editDistance('comand', 'command')).toBe(1);
    expect(editDistance('nmae', 'name')).toBe(1);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('kitten', 'sitting')).toBe(3);
  });

  it('suggests a key only when it is a plausible slip', () => {
    const keys = ['command', 'args', 'env', 'cwd', 'url', 'headers'];
    expect(closest('comand', keys)).toBe('command');
    expect(closest('ARGS', keys)).toBe('args');
    expect(closest('colour', keys)).toBeUndefined();
    expect(closest('x'.repeat(65), ['x'.repeat(64)])).toBeUndefined();
  });
});

describe('hubFromConfigFile', () => {
  /** A fresh directory, removed after the test. */
  function configDirectory(): string {
    const directory = mkdtempSync(join(tmpdir(), 'hub-config-'));
    cleanups.push(async () => rmSync(directory, { recursive: true, force: true }));
    return directory;
  }

  it('names the file when it is missing', async () => {
    const directory = configDirectory();
    await expect(hubFromConfigFile(join(directory, 'missing.json'))).rejects.toThrow(/Cannot read .*missing\.json/);
  });

  it('names the file when it is not JSON', async () => {
    const directory = configDirectory();
    writeFileSync(join(directory, 'broken.json'), '{ "mcpServers": ');
    await expect(hubFromConfigFile(join(directory, 'broken.json'))).rejects.toThrow(/broken\.json is not valid JSON/);
  });

  it('names the file and suggests the key for an unknown one', async () => {
    const directory = configDirectory();
    writeFileSync(join(directory, 'typo.json'), JSON.stringify({ mcpServers: { peer: { comand: 'x' } } }));
    const typo = await hubFromConfigFile(join(directory, 'typo.json')).catch((error: ConfigError) => error);
    expect(typo).toBeInstanceOf(ConfigError);
    expect((typo as ConfigError).message).toContain(
      `Unknown key "comand" in mcpServers.peer of ${join(directory, 'typo.json')}: did you mean "command"?`,
    );
  });

  it('reads paths relative to the file', async () => {
    const directory = configDirectory();
    writeFileSync(
      join(directory, 'hub.json'),
      JSON.stringify({ mcpServers: { peer: { type: 'framed', path: 'peer.sock' } } }),
    );
    const hub = await hubFromConfigFile(join(directory, 'hub.json'), { hub: { logger: silentLogger } });
    cleanups.push(() => hub.close());
    expect(hub.status()[0]).toMatchObject({
      name: 'peer',
      state: 'idle',
      source: `framed: ${join(directory, 'peer.sock')}`,
    });
  });
});

describe('hubFromConfig', () => {
  it('builds a hub whose stdio server runs as a child, and serves its tools', async () => {
    const script = fixturePath('compose/stdio-upstream.ts');
    const hub = hubFromConfig(
      {
        mcpServers: { child: { command: process.execPath, args: ['--import', 'tsx', script], tools: ['echo', 'pid'] } },
        switchboard: { name: 'from-config', prefix: true, separator: '.' },
      },
      { hub: { logger: silentLogger } },
    );
    cleanups.push(() => hub.close());
    await hub.start();
    const [clientSide, hubSide] = createMemoryPair();
    validateEmitted(hub.connect(hubSide));
    const client = new Client({ name: 'c', version: '1' });
    validateEmitted(client);
    await client.connect(clientSide);
    expect(client.serverInfo).toEqual({ name: 'from-config', version: '1.0.0' });
    expect((await client.listTools()).map((tool) => tool.name)).toEqual(['child.echo', 'child.pid']);
    expect(await client.callTool('child.pid')).toEqual({
      content: [{ type: 'text', text: String(hub.status()[0]!.pid) }],
    });
    await client.close();
  });

  // "legacy" is the handshake era's old name, still accepted.
  it.each(['handshake', 'legacy'])(
    'speaks 2026-07-28 to a server it probes (the default), the handshake to one whose entry says era "%s", and calls through both',
    async (era) => {
      const script = fixturePath('compose/stdio-upstream.ts');
      const child = { command: process.execPath, args: ['--import', 'tsx', script], tools: ['echo'] };
      const hub = hubFromConfig(
        { mcpServers: { probed: child, old: { ...child, era } }, switchboard: { prefix: true } },
        { hub: { logger: silentLogger } },
      );
      cleanups.push(() => hub.close());
      await hub.start();
      const versions = Object.fromEntries(hub.status().map((status) => [status.name, status.protocolVersion]));
      expect(versions).toEqual({ probed: '2026-07-28', old: '2025-11-25' });
      expect(hub.upstream('old')!.client!.connectedEra).toBe('handshake');
      const [clientSide, hubSide] = createMemoryPair();
      validateEmitted(hub.connect(hubSide));
      const client = new Client({ name: 'c', version: '1' });
      await client.connect(clientSide);
      expect(await client.callTool('probed__echo', { n: 1 })).toEqual({
        content: [{ type: 'text', text: 'child:{"n":1}' }],
      });
      expect(await client.callTool('old__echo', { n: 2 })).toEqual({
        content: [{ type: 'text', text: 'child:{"n":2}' }],
      });
      await client.close();
    },
  );
});
