/**
 * The hub against real upstream processes: supervision that never gives up (calls made while an upstream
 * restarts wait for it, or get a tool error saying it is down, never "Unknown tool"), `stop()` ending every
 * upstream child whatever its state, and what one downstream client sets (roots, log level, subscriptions)
 * never reaching another through a shared upstream. And the idle stop, on the runtime's clock.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { filter, firstValueFrom } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { Client } from '../../lib/client/client';
import { Hub, type HubOptions } from '../../lib/compose/hub';
import type { UpstreamOptions } from '../../lib/compose/upstream';
import { Runtime } from '../../lib/core/runtime';
import { McpError } from '../../lib/jsonrpc/errors';
import type { TraceEvent } from '../../lib/trace/types';
import { cleanups, eventually, within } from '../helpers/http';
import { deferred, recordingLogger, serverWith, tool } from '../helpers/fixtures';
import { connectToHub } from '../helpers/hub';
import { validateEmitted } from '../helpers/pair';
import { isAlive } from '../helpers/processes';
import { fixturePath } from '../helpers/paths';
import { firstText } from '../helpers/content';

const FLAKY = fixturePath('hub-flaky-upstream.mjs');
const MUTE = fixturePath('hub-mute-upstream.mjs');
const UPSTREAM = fixturePath('hub-upstream.ts');
const EVERYTHING = fileURLToPath(
  new URL('../../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url),
);

function newHub(upstreams: UpstreamOptions[], options: Partial<HubOptions> = {}): Hub {
  const hub = new Hub({
    upstreams,
    logger: recordingLogger(),
    listChangedDebounceMs: 1,
    onUpstreamClient: (_name, client) => validateEmitted(client),
    ...options,
  });
  cleanups.push(() => hub.close());
  return hub;
}

/** A scratch directory for the fixtures' pid and start-count files, removed after the test. */
function scratch(): { dir: string; file: (name: string) => string; pids: (name: string) => number[] } {
  const dir = mkdtempSync(join(tmpdir(), 'hub-hardening-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string) => join(dir, name);
  const pids = (name: string) => {
    try {
      return readFileSync(file(name), 'utf8').split('\n').filter(Boolean).map(Number);
    } catch {
      return [];
    }
  };
  return { dir, file, pids };
}

/** Kills whatever a failed test left running (a passing test leaves nothing: it checks). */
function reapAfterwards(pids: () => number[]): void {
  cleanups.push(() => {
    for (const pid of pids()) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  });
}

const flaky = (name: string, env: Record<string, string>, extra: Partial<UpstreamOptions> = {}): UpstreamOptions => ({
  name,
  source: { kind: 'stdio', command: process.execPath, args: [FLAKY], env },
  ...extra,
});

/** The result of a call, or the JSON-RPC error it got, as one value to assert on. */
const outcome = (promise: Promise<{ content: readonly unknown[]; isError?: boolean }>) =>
  promise.then(
    (result) => ({ isError: result.isError === true, text: firstText(result) }),
    (error: McpError) => ({ code: error.code, message: error.message }),
  );

describe('a hub that never gives up', () => {
  it('answers calls made while an upstream restarts once it is back, never with Unknown tool', async () => {
    const hub = newHub([
      {
        name: 'child',
        source: { kind: 'stdio', command: process.execPath, args: ['--import', 'tsx', UPSTREAM] },
        supervision: { initialDelayMs: 300 },
      },
    ]);
    await hub.start();
    const client = await connectToHub(hub);
    const before = hub.upstream('child')!.status.pid!;
    expect(firstText(await client.callTool('pid'))).toBe(String(before));

    // The call that crashes it gets a tool error; the five made right after wait for the restart.
    const crashed = await outcome(client.callTool('crash'));
    expect(crashed).toMatchObject({
      isError: true,
      text: expect.stringMatching(/Upstream child did not answer tools\/call/),
    });
    const during = await Promise.all(Array.from({ length: 5 }, () => outcome(client.callTool('pid'))));
    const after = hub.upstream('child')!.status.pid!;
    expect(after).not.toBe(before);
    expect(during).toEqual(Array.from({ length: 5 }, () => ({ isError: false, text: String(after) })));
    expect((await client.listTools()).map((tool) => tool.name)).toContain('pid');
    await hub.stop();
    expect([before, after].filter(isAlive)).toEqual([]);
  });

  it('fails a call with a tool error saying since when the upstream is down and when it tries next, after the wait bound', async () => {
    const { file } = scratch();
    const hub = newHub([
      flaky(
        'flaky',
        { HUB_FIXTURE_COUNT_FILE: file('count'), HUB_FIXTURE_CRASH_FIRST: '0' },
        { supervision: { initialDelayMs: 20_000 }, unavailableWaitMs: 200 },
      ),
    ]);
    const changes: TraceEvent[] = [];
    hub.trace$.pipe(filter((event) => event.actor === 'upstream')).subscribe((event) => changes.push(event));
    await hub.start();
    const client = await connectToHub(hub);
    const upstream = hub.upstream('flaky')!;
    const pid = upstream.status.pid!;
    expect(firstText(await client.callTool('alive'))).toBe(`alive ${pid}`);

    const backingOff = firstValueFrom(upstream.status$.pipe(filter((status) => status.state === 'reconnecting')));
    process.kill(pid, 'SIGKILL');
    await within(backingOff, 'the upstream is backing off');
    const status = upstream.status;
    expect(status).toMatchObject({ serving: true, failures: 1, lastError: expect.stringMatching(/SIGKILL/) });
    expect(status.nextAttemptAt).toBe(status.since + 20_000);
    expect(status.downSince).toBe(status.since);
    expect(changes.at(-1)).toMatchObject({
      from: 'ready',
      to: 'reconnecting',
      reason: expect.stringContaining(`next attempt in 20000 ms, at ${new Date(status.nextAttemptAt!).toISOString()}`),
    });

    // Still listed (no flapping), and a call gets the hub's tool error, not -32602.
    expect((await client.listTools()).map((tool) => tool.name)).toEqual(['alive', 'hang']);
    const result = await outcome(client.callTool('alive'));
    expect(result).toEqual({
      isError: true,
      text:
        `Upstream flaky is down (reconnecting since ${new Date(status.downSince!).toISOString()}, 1 failure in a row), ` +
        `so tools/call cannot reach it (waited 200 ms). Last error: ${status.lastError}. ` +
        `Next attempt at ${new Date(status.nextAttemptAt!).toISOString()}.`,
    });
    // Its prompt stays listed too; getting it fails with the same explanation (the hub's own error, -32603).
    expect((await client.listPrompts()).map((prompt) => prompt.name)).toEqual(['hello']);
    const prompt = await client.getPrompt('hello').catch((error: McpError) => error);
    expect(prompt).toBeInstanceOf(McpError);
    expect(prompt).toMatchObject({
      code: -32603,
      message: expect.stringMatching(
        /^Upstream flaky is down \(reconnecting since .*\), so prompts\/get cannot reach it/,
      ),
    });
  });

  it('brings the tools back after 20 crashes in a row', async () => {
    const { file, pids } = scratch();
    reapAfterwards(() => pids('pids'));
    const hub = newHub([
      flaky(
        'flaky',
        { HUB_FIXTURE_COUNT_FILE: file('count'), HUB_FIXTURE_CRASH_FIRST: '20', HUB_FIXTURE_PID_FILE: file('pids') },
        { supervision: { initialDelayMs: 1, maxDelayMs: 20 }, unavailableWaitMs: 30_000 },
      ),
    ]);
    const upstream = hub.upstream('flaky')!;
    const failures: number[] = [];
    upstream.status$.subscribe((status) => status.state === 'reconnecting' && failures.push(status.failures));
    await hub.start();
    await within(
      firstValueFrom(upstream.status$.pipe(filter((status) => status.state === 'ready'))),
      'the upstream is up after its crash loop',
      30_000,
    );
    expect(failures).toEqual(Array.from({ length: 20 }, (_, index) => index + 1));
    const client = await connectToHub(hub);
    expect((await client.listTools()).map((tool) => tool.name)).toEqual(['alive', 'hang']);
    expect(firstText(await client.callTool('alive'))).toBe(`alive ${upstream.status.pid}`);
    await hub.stop();
    expect(pids('pids').filter(isAlive)).toEqual([]);
  }, 40_000);
});

describe('stopping the hub', () => {
  it('ends every upstream child whatever its state, and fails the calls in flight clearly', async () => {
    const { file, pids } = scratch();
    reapAfterwards(() => pids('pids'));
    const env = { HUB_FIXTURE_PID_FILE: file('pids') };
    // Lazy, so that `start` does not wait for them: started by hand below.
    const mute = (name: string, ...args: string[]): UpstreamOptions => ({
      name,
      source: { kind: 'stdio', command: process.execPath, args: [MUTE, ...args], env },
      lazy: true,
    });
    const hub = newHub([
      flaky('ready', env),
      // Never answers initialize: still connecting (its connect timeout is the default 30 s).
      mute('starting'),
      // The same, and it ignores the end of its stdin and SIGTERM: only SIGKILL (after 2 s + 2 s) ends it.
      mute('stubborn', '--stubborn'),
      // Crashes on every start: backing off for a minute.
      flaky(
        'backing-off',
        { ...env, HUB_FIXTURE_COUNT_FILE: file('count'), HUB_FIXTURE_CRASH_FIRST: '1000' },
        { supervision: { initialDelayMs: 60_000 } },
      ),
      flaky('lazy', env, { lazy: true }),
    ]);
    await hub.start();
    hub.upstream('starting')!.start();
    hub.upstream('stubborn')!.start();
    const state = (name: string) => hub.upstream(name)!.status.state;
    await eventually(
      () => state('ready') === 'ready' && state('backing-off') === 'reconnecting' && pids('pids').length === 4,
      'every upstream is where the test wants it',
    );
    expect([state('starting'), state('stubborn'), state('lazy')]).toEqual(['connecting', 'connecting', 'idle']);
    const client = await connectToHub(hub);
    const inFlight = outcome(client.callTool('hang'));
    await eventually(() => hub.upstream('ready')!.client!.pendingRequestCount > 0, 'the call reached the upstream');

    const stopping = Date.now();
    await within(hub.stop(), 'the hub to stop', 10_000);
    const took = Date.now() - stopping;
    expect(pids('pids')).toHaveLength(4);
    expect(pids('pids').filter(isAlive)).toEqual([]);
    // Well under the 30 s connect timeout it would otherwise have waited for (the stubborn child needs 4 s).
    expect(took).toBeLessThan(10_000);
    expect(await inFlight).toEqual({
      isError: true,
      text: 'Upstream ready did not answer tools/call: it was stopped (the hub is stopping)',
    });
    expect(hub.status().map((status) => status.state)).toEqual(Array(5).fill('disposed'));
  }, 20_000);
});

describe('isolation between downstream clients', () => {
  const child = (extra: Partial<UpstreamOptions> = {}): UpstreamOptions => ({
    name: 'child',
    source: { kind: 'stdio', command: process.execPath, args: ['--import', 'tsx', UPSTREAM] },
    ...extra,
  });
  const textOf = async (client: Client, tool: string) => firstText(await client.callTool(tool));
  /** Calls `tool` until it answers `want` (what reaches an upstream arrives a little after the call that sent it). */
  const poll = (client: Client, tool: string, want: string) =>
    within(
      (async () => {
        while ((await textOf(client, tool)) !== want) await new Promise((resolve) => setTimeout(resolve, 20));
      })(),
      `${tool} to answer ${want}`,
    );
  const logsOf = (client: Client) => {
    const lines: string[] = [];
    client.notifications$.pipe(filter((message) => message.method === 'notifications/message')).subscribe({
      next: (message) => lines.push(String((message.params as { data: unknown }).data)),
      // The hub ends a client's connection when it stops: the stream errors then, as it should.
      error: () => undefined,
    });
    return lines;
  };

  it('offers a shared upstream no client’s roots by default', async () => {
    // The witness is offered the clients' roots explicitly: once it sees both, the hub knows them.
    const hub = newHub([child(), { ...child({ forward: { roots: true } }), name: 'witness', naming: { prefix: 'w' } }]);
    await hub.start();
    const a = await connectToHub(hub, { roots: [{ uri: 'file:///work/a' }] }, 'a');
    const b = await connectToHub(hub, { roots: [{ uri: 'file:///work/b' }] }, 'b');
    const witness = (await a.listTools()).find((tool) => tool.name.startsWith('w') && tool.name.endsWith('roots'))!;
    await within(
      (async () => {
        while ((await textOf(a, witness.name)) !== '["file:///work/a","file:///work/b"]') {
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      })(),
      'the witness to see both clients’ roots',
    );
    expect(await textOf(a, 'roots')).toBe('no roots capability');
    expect(await textOf(b, 'roots')).toBe('no roots capability');
  });

  it('runs one instance per client where the config asks: each sees its own client’s roots and level only', async () => {
    const hub = newHub([child({ instance: 'per-client' })]);
    await hub.start();
    const probe = hub.status()[0]!;
    expect(probe).toMatchObject({ name: 'child', state: 'stopped', stopReason: 'idle', serving: true, tools: 6 });
    const a = await connectToHub(hub, { roots: [{ uri: 'file:///work/a' }] }, 'a');
    const b = await connectToHub(hub, { roots: [{ uri: 'file:///work/b' }] }, 'b');
    expect((await a.listTools()).map((tool) => tool.name)).toContain('roots');

    const pidA = Number(await textOf(a, 'pid'));
    const pidB = Number(await textOf(b, 'pid'));
    expect(pidA).not.toBe(pidB);
    expect(hub.status().map((status) => status.name)).toEqual([
      'child',
      expect.stringMatching(/^child\[.+\]$/),
      expect.stringMatching(/^child\[.+\]$/),
    ]);
    expect(await textOf(a, 'roots')).toBe('["file:///work/a"]');
    expect(await textOf(b, 'roots')).toBe('["file:///work/b"]');

    await a.setLoggingLevel('debug');
    await b.setLoggingLevel('error');
    const seenByB = logsOf(b);
    await a.setRoots([{ uri: 'file:///work/a2' }]);
    await poll(a, 'roots', '["file:///work/a2"]');
    await poll(a, 'level', 'debug');
    await poll(b, 'level', 'error');
    expect(await textOf(b, 'roots')).toBe('["file:///work/b"]');
    // A's instance logs at every level: none of it reaches B.
    expect(await textOf(a, 'chatter')).toBe('logged');
    expect(await textOf(b, 'pid')).toBe(String(pidB));
    expect(seenByB).toEqual([]);

    // A goes away: its instance ends; B's goes on as it was.
    await a.close();
    await eventually(() => !isAlive(pidA), 'the instance of the client that left has exited');
    expect(await textOf(b, 'roots')).toBe('["file:///work/b"]');
    expect(hub.status()).toHaveLength(2);
    await hub.stop();
    expect(isAlive(pidB)).toBe(false);
  }, 20_000);

  it('gives each client its own server-everything behind a per-client upstream, which sees that client’s roots only', async () => {
    const hub = newHub([
      {
        name: 'everything',
        source: { kind: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'] },
        instance: 'per-client',
      },
    ]);
    await hub.start();
    const a = await connectToHub(hub, { roots: [{ uri: 'file:///work/alpha', name: 'alpha' }] }, 'a');
    const b = await connectToHub(hub, { roots: [{ uri: 'file:///work/beta', name: 'beta' }] }, 'b');
    // The probe was offered roots (an empty list), so the roots tool is in the catalog from the start.
    expect((await a.listTools()).map((tool) => tool.name)).toContain('get-roots-list');
    const rootsText = async (client: Client) => firstText(await client.callTool('get-roots-list'));
    const [seenByA, seenByB] = await Promise.all([rootsText(a), rootsText(b)]);
    expect(seenByA).toContain('file:///work/alpha');
    expect(seenByA).not.toContain('file:///work/beta');
    expect(seenByB).toContain('file:///work/beta');
    expect(seenByB).not.toContain('file:///work/alpha');
    const instances = hub.status().slice(1);
    expect(instances.map((status) => status.state)).toEqual(['ready', 'ready']);
    const pids = instances.map((status) => status.pid!);
    await hub.stop();
    expect(pids.filter(isAlive)).toEqual([]);
  }, 20_000);

  it('sends a shared upstream’s logs to each client at the level that client asked for, or the default one', async () => {
    const hub = newHub([child()]);
    await hub.start();
    const a = await connectToHub(hub, {}, 'a');
    const b = await connectToHub(hub, {}, 'b');
    const quiet = await connectToHub(hub, {}, 'quiet'); // never asks for a level: gets the hub's default, info
    const seen = { a: logsOf(a), b: logsOf(b), quiet: logsOf(quiet) };
    const lines = (...levels: string[]) => levels.map((level) => `a ${level} line`);
    const round = async (by: Client, counts: [number, number, number]) => {
      const before = [seen.a.length, seen.b.length, seen.quiet.length];
      expect(await textOf(by, 'chatter')).toBe('logged');
      await eventually(
        () =>
          seen.a.length === before[0]! + counts[0] &&
          seen.b.length === before[1]! + counts[1] &&
          seen.quiet.length === before[2]! + counts[2],
        'the log lines arrived',
      );
    };

    await round(a, [3, 3, 3]);
    await a.setLoggingLevel('debug');
    await b.setLoggingLevel('error');
    await poll(b, 'level', 'debug'); // the upstream logs what its most verbose client needs
    await round(b, [4, 1, 3]);
    // B asking for warnings changes nothing for A or for the client that never asked.
    await b.setLoggingLevel('warning');
    await round(a, [4, 2, 3]);
    expect(seen.a).toEqual([
      ...lines('info', 'warning', 'error'),
      ...lines('debug', 'info', 'warning', 'error'),
      ...lines('debug', 'info', 'warning', 'error'),
    ]);
    expect(seen.b).toEqual([...lines('info', 'warning', 'error'), ...lines('error'), ...lines('warning', 'error')]);
    expect(seen.quiet).toEqual([
      ...lines('info', 'warning', 'error'),
      ...lines('info', 'warning', 'error'),
      ...lines('info', 'warning', 'error'),
    ]);
  });

  it('keeps a client’s subscription when another unsubscribes or goes away, and updates only subscribers', async () => {
    const hub = newHub([child()]);
    await hub.start();
    const a = await connectToHub(hub, {}, 'a');
    const b = await connectToHub(hub, {}, 'b');
    const c = await connectToHub(hub, {}, 'c');
    // What reaches each client on the wire, whatever its own subscriptions do with it.
    const received = new Map<Client, number>([a, b, c].map((client) => [client, 0]));
    for (const client of [a, b, c]) {
      client.notifications$
        .pipe(filter((message) => message.method === 'notifications/resources/updated'))
        .subscribe(() => received.set(client, received.get(client)! + 1));
    }
    const count = (client: Client) => received.get(client)!;
    /** Touches the note until `client` has one more update (its subscription may still be on its way). */
    const touchUntil = async (client: Client, by: Client) => {
      const before = count(client);
      await within(
        (async () => {
          while (count(client) === before) {
            await textOf(by, 'touch');
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
        })(),
        'an update',
      );
    };
    const subA = a.subscribeResource('memo://note').subscribe();
    b.subscribeResource('memo://note').subscribe();
    await touchUntil(a, c);
    await touchUntil(b, c);
    expect(count(c)).toBe(0); // not subscribed: never told

    subA.unsubscribe();
    // Once A's unsubscribe has been applied (a round where B is told and A is not), A is never told again.
    await within(
      (async () => {
        for (;;) {
          const aBefore = count(a);
          await touchUntil(b, c);
          if (count(a) === aBefore) return;
        }
      })(),
      'the unsubscribe to be applied',
    );
    const aAfterUnsubscribe = count(a);
    await touchUntil(b, c);
    await touchUntil(b, c);
    expect(count(a)).toBe(aAfterUnsubscribe);

    // B subscribed, C subscribes, B goes away: C still gets them.
    c.subscribeResource('memo://note').subscribe();
    await touchUntil(c, a);
    await b.close();
    await touchUntil(c, a);
    expect(count(a)).toBe(aAfterUnsubscribe);
  });
});

describe("the idle stop, on the runtime's clock", () => {
  const IDLE_MS = 60_000;

  /** A hub on a simulated runtime clock, with one in-process upstream whose `wait` tool answers on `release`. */
  async function idleHub() {
    const clock = new SimulatedClock();
    const call = { entered: deferred(), release: deferred() };
    const upstreamServer = serverWith([
      tool('wait', async () => {
        call.entered.resolve();
        await call.release.promise;
        return { content: [{ type: 'text', text: 'done' }] };
      }),
    ]);
    const hub = newHub(
      [{ name: 'napper', source: { kind: 'in-process', server: upstreamServer }, idleTimeoutMs: IDLE_MS }],
      {
        runtime: new Runtime({ clock }),
      },
    );
    await hub.start();
    const upstream = hub.upstream('napper')!;
    return { clock, call, hub, upstream, client: await connectToHub(hub) };
  }

  it('stops an upstream nobody uses once the runtime clock passes its idle timeout, keeping its tools listed', async () => {
    const { clock, upstream, client } = await idleHub();
    clock.increment(IDLE_MS - 1);
    expect(upstream.status.state).toBe('ready');
    clock.increment(1);
    expect(upstream.status).toMatchObject({ state: 'stopped', stopReason: 'idle', serving: true });
    expect((await client.listTools()).map((listed) => listed.name)).toEqual(['wait']);
  });

  it('keeps an upstream up while a call is in flight, and stops it a whole timeout after the call ends', async () => {
    const { clock, call, upstream, client } = await idleHub();
    const answer = client.callTool('wait');
    await within(call.entered.promise, 'the call to reach the upstream');
    clock.increment(3 * IDLE_MS);
    expect(upstream.status.state).toBe('ready');
    call.release.resolve();
    expect(firstText(await answer)).toBe('done');
    clock.increment(IDLE_MS - 1);
    expect(upstream.status.state).toBe('ready');
    clock.increment(1);
    expect(upstream.status.state).toBe('stopped');
  });
});
