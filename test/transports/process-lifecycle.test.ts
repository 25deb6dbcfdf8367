/**
 * Every process ends with its owner: real child processes (test/fixtures/proc-server.mjs) that stall the
 * handshake, ignore the end of stdin and SIGTERM, or fork a grandchild, closed on every path (a hub stopped
 * at each phase of an upstream's connect, the CLI past its shutdown deadline included); at the moment each
 * close resolves, the process table (/proc) shows no child, grandchild or member of the child's process
 * group running (a zombie has ended: reaping an orphan is init's job).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom, filter, map, timeout } from 'rxjs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { closeWithin } from '../../lib/cli/serve';
import { Client } from '../../lib/client/client';
import { Hub } from '../../lib/compose/hub';
import { silentLogger } from '../../lib/core/logger';
import type { ShutdownPolicy } from '../../machines/child-process';
import { StdioClientTransport } from '../../transports/stdio';
import { buildCli, LongRunning, runToEnd } from '../helpers/cli-process';
import { isAlive, parseProcServerLine, processesInGroup, processesWithArgument } from '../helpers/processes';
import { fixturePath } from '../helpers/paths';
import { eventually } from '../helpers/wait';

const procServer = fixturePath('proc-server.mjs');
const SHUTDOWN = { stdinGraceMs: 200, terminateGraceMs: 200 };
const CLIENT_INFO = { name: 'lifecycle', version: '1' };

/** Marks every fixture process this file starts, so that whatever happens none outlives it. */
const OWNER = `--owner=${process.pid}`;
/** Every pid a test saw, killed after it whatever happened, so a failing test leaves nothing behind. */
const seen: number[] = [];
afterEach(() => {
  for (const pid of [...seen.splice(0), ...processesWithArgument(OWNER)]) {
    for (const target of [-pid, pid]) {
      try {
        process.kill(target, 'SIGKILL');
      } catch {
        // gone
      }
    }
  }
});

function serverTransport(...flags: string[]): StdioClientTransport {
  return transportWith(SHUTDOWN, ...flags);
}

function transportWith(shutdown: ShutdownPolicy, ...flags: string[]): StdioClientTransport {
  return new StdioClientTransport({ command: process.execPath, args: [procServer, OWNER, ...flags], shutdown });
}

/** The child's and grandchild's pids, from the fixture's first stderr line. */
async function spawned(transport: StdioClientTransport) {
  const found =
    transport.recentStderr.map(parseProcServerLine).find((line) => line !== undefined) ??
    (await firstValueFrom(
      transport.stderr$.pipe(
        map(parseProcServerLine),
        filter((line) => line !== undefined),
        timeout(10_000),
      ),
    ));
  seen.push(found.pid, ...(found.grandchild ? [found.grandchild] : []));
  return found;
}

type Tree = { readonly pid: number; readonly grandchild: number | undefined };
const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Nothing of the tree is left: the child, its grandchild, and every member of the child's group. */
function expectAllGone({ pid, grandchild }: Tree): void {
  expect(isAlive(pid)).toBe(false);
  if (grandchild !== undefined) expect(isAlive(grandchild)).toBe(false);
  expect(processesInGroup(pid)).toEqual([]);
}

describe('StdioClientTransport and Client: the child is gone when close resolves', () => {
  it('spawns nothing before start, and a close before start resolves at once', async () => {
    const transport = serverTransport('--fork');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(transport.pid).toBeUndefined();
    await transport.close();
    expect(await transport.exited).toMatchObject({ kind: 'stopped' });
    await expect(transport.start()).rejects.toThrow(/closed before it started/);
    expect(transport.pid).toBeUndefined();
  });

  it('a send before start starts the child', async () => {
    const transport = serverTransport();
    const first = firstValueFrom(transport.messages.pipe(timeout(10_000)));
    await transport.send({ jsonrpc: '2.0', id: 7, method: 'ping' });
    expect(transport.pid).toBeGreaterThan(0);
    expect(await first).toMatchObject({ id: 7 });
    const tree = await spawned(transport);
    await transport.close();
    expectAllGone(tree);
  });

  it('delivers messages to a subscriber that came before start', async () => {
    const transport = serverTransport();
    const first = firstValueFrom(transport.messages.pipe(timeout(10_000)));
    await transport.start();
    const tree = await spawned(transport);
    await transport.send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: CLIENT_INFO },
    });
    expect(await first).toMatchObject({ id: 1, result: { serverInfo: { name: 'proc-server' } } });
    await transport.close();
    expectAllGone(tree);
  });

  it('Client.close() resolves only once a child that ignores stdin EOF and SIGTERM, and its grandchild, are gone', async () => {
    const transport = serverTransport('--ignore-eof', '--ignore-term', '--fork');
    const client = new Client(CLIENT_INFO);
    await client.connect(transport);
    const tree = await spawned(transport);
    expect(isAlive(tree.pid)).toBe(true);
    expect(isAlive(tree.grandchild!)).toBe(true);
    await client.close();
    // Checked before awaiting `exited`: `close()` itself must wait for the tree to be gone.
    expectAllGone(tree);
    expect(await transport.exited).toMatchObject({ kind: 'stopped', signal: 'SIGKILL' });
  });

  it('a handshake that times out leaves nothing running when connect rejects', async () => {
    const transport = serverTransport('--mute', '--ignore-eof', '--ignore-term', '--fork');
    const client = new Client(CLIENT_INFO);
    const tree = spawned(transport);
    await expect(client.connect(transport, { timeout: 300 })).rejects.toThrow(/timed out/i);
    expectAllGone(await tree);
  });

  it('a handshake the server answers wrongly leaves nothing running when connect rejects', async () => {
    const transport = serverTransport('--bad-handshake', '--ignore-eof', '--ignore-term', '--fork');
    const client = new Client(CLIENT_INFO);
    const tree = spawned(transport);
    await expect(client.connect(transport)).rejects.toThrow(/1999-01-01/);
    expectAllGone(await tree);
  });

  it('a close before the handshake completes leaves nothing running', async () => {
    const transport = serverTransport('--mute', '--ignore-eof', '--ignore-term', '--fork');
    const client = new Client(CLIENT_INFO);
    const connecting = client.connect(transport, { timeout: 30_000 }).catch((error: Error) => error);
    const tree = await spawned(transport);
    await client.close();
    expectAllGone(tree);
    expect(await connecting).toBeInstanceOf(Error);
  });

  it('a close during the era probe (server/discover unanswered) leaves nothing running', async () => {
    const transport = serverTransport('--mute', '--ignore-eof', '--ignore-term', '--fork');
    // No verdict cached: the client probes before any handshake.
    const client = new Client(CLIENT_INFO, { eraCache: false });
    const connecting = client.connect(transport, { timeout: 30_000 }).catch((error: Error) => error);
    const tree = await spawned(transport);
    await client.close();
    expectAllGone(tree);
    expect(await connecting).toBeInstanceOf(Error);
  });

  it('a close right after connect begins (the child may not have started yet) leaves nothing running', async () => {
    const transport = serverTransport('--mute', '--ignore-eof', '--ignore-term', '--fork');
    const client = new Client(CLIENT_INFO);
    const connecting = client.connect(transport).catch((error: Error) => error);
    await client.close();
    const pid = transport.pid;
    if (pid !== undefined) {
      seen.push(pid);
      expect(isAlive(pid)).toBe(false);
      expect(processesInGroup(pid)).toEqual([]);
    }
    expect(await connecting).toBeInstanceOf(Error);
  });
});

describe("a hub stopped at each phase of an upstream's connect: nothing of it runs once close resolves", () => {
  const STUBBORN = ['--ignore-eof', '--ignore-term', '--fork'];

  /**
   * A hub whose one upstream (speaking `era`) opens each attempt's transport in turn, the last one again after
   * that. Each test passes a flag of its own (the fixture ignores it): the era verdict a probe caches is kept
   * by command line, so no test inherits another's.
   */
  function hubOver(era: 'auto' | 'handshake', ...attempts: (() => StdioClientTransport)[]) {
    const opened: StdioClientTransport[] = [];
    const open = () => {
      const transport = attempts[Math.min(opened.length, attempts.length - 1)]!();
      opened.push(transport);
      return transport;
    };
    const hub = new Hub({
      logger: silentLogger,
      upstreams: [{ name: 'up', era, source: { kind: 'transport', open } }],
    });
    const starting = hub.start().catch((error: Error) => error);
    /** The tree of the `index`th transport opened, once its child has reported it. */
    const tree = async (index: number) => {
      await eventually(() => opened.length > index, `attempt ${index + 1} of the upstream`);
      return spawned(opened[index]!);
    };
    return { hub, starting, opened, tree };
  }

  it('before its child is spawned', async () => {
    const { hub, starting, opened } = hubOver('auto', () => serverTransport('--phase=unspawned', ...STUBBORN));
    await hub.close();
    expect(processesWithArgument(OWNER)).toEqual([]);
    expect(opened.every((transport) => transport.pid === undefined)).toBe(true);
    await starting;
  });

  for (const [phase, era] of [
    ['its era probe (server/discover)', 'auto'],
    ['its initialize', 'handshake'],
  ] as const) {
    it(`while ${phase} is unanswered`, async () => {
      const flag = `--phase=${era}-${Date.now()}`;
      const { hub, starting, tree } = hubOver(era, () => serverTransport('--mute', flag, ...STUBBORN));
      const first = await tree(0);
      expect(hub.upstream('up')!.status.state).toBe('connecting');
      await hub.close();
      expectAllGone(first);
      await starting;
    });
  }

  it('once it is ready', async () => {
    const { hub, starting, tree } = hubOver('auto', () => serverTransport('--phase=ready', ...STUBBORN));
    expect(await starting).toBeUndefined();
    const first = await tree(0);
    await hub.close();
    expectAllGone(first);
  });

  it('restarted while its stopped child is still on its shutdown ladder: close waits for both children', async () => {
    const { hub, starting, tree } = hubOver(
      'handshake',
      // Ends only at SIGKILL, 1.5 s + 1.5 s after its stop; the next attempt's child ends at the end of stdin.
      () => transportWith({ stdinGraceMs: 1500, terminateGraceMs: 1500 }, '--mute', ...STUBBORN),
      () => serverTransport('--mute'),
    );
    const first = await tree(0);
    const upstream = hub.upstream('up')!;
    const stopping = upstream.stop();
    upstream.start();
    const second = await tree(1);
    await hub.close();
    expectAllGone(first);
    expectAllGone(second);
    await stopping;
    await starting;
  });
});

describe("the CLI's shutdown deadline", () => {
  it('past it, every child process group is killed and the stop returns only once the close saw them end', async () => {
    const transport = transportWith({ stdinGraceMs: 60_000, terminateGraceMs: 60_000 }, '--ignore-eof', '--fork');
    await transport.start();
    const tree = await spawned(transport);
    let closed = false;
    const served = { close: () => transport.close().then(() => void (closed = true)) };
    const lines: string[] = [];
    await closeWithin(served, 200, { out: () => undefined, err: (line) => lines.push(line) });
    // The SIGKILL must have taken effect, not merely been sent: the transport's close says when it has.
    expect(closed).toBe(true);
    expectAllGone(tree);
    expect(lines).toEqual(['switchboard: stopping took over 200 ms: killed 1 child process group(s)']);
    expect(await transport.exited).toMatchObject({ kind: 'stopped', signal: 'SIGKILL' });
  });
});

describe('the switchboard CLI ends its children', () => {
  let dir: string;
  let cli: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchboard-lifecycle-'));
    cli = (await buildCli(join(dir, 'dist'))).cli;
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const switchboard = (...args: string[]) => [process.execPath, cli, ...args];

  it('`call --timeout 1000 tools/list -- sleep 77` leaves no sleep running', async () => {
    const marker = `77.${process.pid}${Date.now() % 1000}`;
    const run = await runToEnd(switchboard('call', '--timeout', '1000', 'tools/list', '--', 'sleep', marker));
    const left = processesWithArgument(marker);
    seen.push(...left);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/timed out/i);
    expect(left).toEqual([]);
  });

  it('`call` against a server that ignores stdin EOF and SIGTERM returns within ~5 s with the tree gone', async () => {
    const began = Date.now();
    const run = await runToEnd(
      switchboard(
        'call',
        'tools/list',
        '--',
        process.execPath,
        procServer,
        OWNER,
        '--ignore-eof',
        '--ignore-term',
        '--fork',
      ),
    );
    const tree = parseProcServerLine(run.stderr)!;
    seen.push(tree.pid, tree.grandchild!);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ tools: [] });
    expect(Date.now() - began).toBeLessThan(8000);
    expectAllGone(tree);
  });

  describe('serve', () => {
    /** A hub config whose one upstream is the fixture; it reports its pids in `pidFile`. */
    const hubConfig = (name: string, ...flags: string[]) => {
      const path = join(dir, `${name}.json`);
      const pidFile = join(dir, `${name}.pids`);
      const args = [procServer, OWNER, '--pid-file', pidFile, ...flags];
      writeFileSync(path, JSON.stringify({ mcpServers: { up: { command: process.execPath, args } } }));
      return { path, pidFile };
    };

    async function upstreamTree(pidFile: string) {
      const deadline = Date.now() + 20_000;
      for (;;) {
        const line = existsSync(pidFile) ? readFileSync(pidFile, 'utf8') : '';
        const tree = parseProcServerLine(line);
        if (tree) {
          seen.push(tree.pid, ...(tree.grandchild ? [tree.grandchild] : []));
          return tree;
        }
        if (Date.now() > deadline) throw new Error(`No upstream reported in ${pidFile}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }

    /** Stops `served` the way `stop` says and expects it gone within 5 s (plus start-up slack), tree and all. */
    async function expectStopsCleanly(served: LongRunning, stop: 'SIGTERM' | 'SIGINT' | 'stdin EOF', tree: Tree) {
      const began = Date.now();
      const exit =
        stop === 'stdin EOF'
          ? (served.endStdin(),
            await Promise.race([served.finished(), delay(10_000).then(() => served.stop('SIGKILL'))]))
          : await served.stop(stop, 10_000);
      expect(exit.signal).toBeNull();
      expect(Date.now() - began).toBeLessThan(6000);
      // At once: the hub returns only when its upstreams' groups have ended (no fixed wait here).
      expectAllGone(tree);
      expect(processesInGroup(served.pid)).toEqual([]);
      expect(served.stderr).not.toMatch(/gave up waiting/i);
    }

    for (const stop of ['SIGTERM', 'SIGINT', 'stdin EOF'] as const) {
      it(`a hub on ${stop}: ends a ready upstream that ignores stdin EOF and SIGTERM, then exits`, async () => {
        const { path, pidFile } = hubConfig(
          `ready-${stop.replace(' ', '-')}`,
          '--ignore-eof',
          '--ignore-term',
          '--fork',
        );
        const served = LongRunning.withStdin(switchboard('serve', path));
        const tree = await upstreamTree(pidFile);
        await delay(300); // the handshake is one round trip: the upstream is ready by now
        await expectStopsCleanly(served, stop, tree);
      });
    }

    for (const stop of ['SIGTERM', 'stdin EOF'] as const) {
      it(`a hub on ${stop} while its upstream is still connecting (never answers): ends it and exits`, async () => {
        const name = `connecting-${stop.replace(' ', '-')}`;
        const { path, pidFile } = hubConfig(name, '--mute', '--ignore-eof', '--ignore-term', '--fork');
        const served = LongRunning.withStdin(switchboard('serve', path));
        const tree = await upstreamTree(pidFile);
        await expectStopsCleanly(served, stop, tree);
      });
    }

    it('a second SIGTERM while stopping kills every upstream child at once and exits', async () => {
      const { path, pidFile } = hubConfig('twice', '--ignore-eof', '--ignore-term', '--fork');
      const served = LongRunning.withStdin(switchboard('serve', path));
      const tree = await upstreamTree(pidFile);
      await delay(300);
      process.kill(served.pid, 'SIGTERM');
      await delay(300);
      const began = Date.now();
      const exit = await served.stop('SIGTERM', 10_000);
      expect(exit.code).toBe(130);
      expect(Date.now() - began).toBeLessThan(1500);
      expect(served.stderr).toMatch(/SIGTERM again while stopping: stopped at once \(killed 1 child process group/);
      // "At once" means the SIGKILL is sent and the hub exits without waiting: the kernel finishes the kill
      // by itself. A process the SIGKILL missed would still run when this bounded wait ends.
      const ended = () => !isAlive(tree.pid) && !isAlive(tree.grandchild!) && processesInGroup(tree.pid).length === 0;
      await eventually(ended, 'the SIGKILLed tree to end').catch(() => undefined);
      expectAllGone(tree);
    });

    it('a module server on SIGTERM exits cleanly', async () => {
      const module = join(dir, 'plain.mjs');
      writeFileSync(
        module,
        `import { defineServer } from './dist/index.mjs';\nexport default defineServer({ name: 'plain', version: '1', tools: [] });\n`,
      );
      const served = LongRunning.withStdin(switchboard('serve', module));
      // Serving, so its signal handlers are in place (a fixed wait lost the race on a loaded machine).
      const initialize = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: CLIENT_INFO };
      served.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: initialize })}\n`);
      await served.waitFor('stdout', /"result"/);
      const began = Date.now();
      const exit = await served.stop('SIGTERM', 10_000);
      expect(exit).toEqual({ code: 0, signal: null });
      expect(Date.now() - began).toBeLessThan(5000);
    });
  });
});
