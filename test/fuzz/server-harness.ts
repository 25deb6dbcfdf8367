/**
 * Drives one fuzz case against a server session whatever carries it (a memory pair, a stdio child): sends
 * the case's lines, then a ping as a sentinel; waits until every expected response arrived; makes a second
 * round trip so that a response sent twice would show; checks the answers; and checks that the session still
 * serves a valid call and holds no record.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { expect } from 'vitest';
import { Server, type ServerConnection } from '../../lib/server/server';
import { createMemoryPair, type MemoryTransport } from '../../transports/memory';
import type { Traffic } from './arbitraries';
import { FUZZ_MAX_MESSAGE_BYTES, fuzzDefinition } from './definition';
import { checkResponses, planTraffic, type Framing } from './oracle';
import { fixturePath } from '../helpers/paths';

/** A server session seen from the wire. */
export interface ServerSession {
  readonly framing: Framing;
  readonly maxBytes: number;
  /** The revision the session negotiates: batches are served at 2025-03-26 only. */
  readonly protocolVersion: string;
  /** Every message received so far, parsed. */
  readonly received: readonly any[];
  send(lines: readonly Buffer[]): Promise<void>;
  /** Why the session can no longer be used (the child exited, the connection closed), or undefined. */
  failure(): string | undefined;
  close(): Promise<void>;
}

const RESPONSE_DEADLINE_MS = 10_000;
let sentinels = 0;

async function waitUntil(session: ServerSession, check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + RESPONSE_DEADLINE_MS;
  while (!check()) {
    const failure = session.failure();
    if (failure) throw new Error(`The server session failed while waiting for ${what}: ${failure}`);
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** Sends `line` and resolves with the response carrying `id` (nothing else may arrive meanwhile but what `others` allows). */
async function roundTrip(session: ServerSession, id: string, line: string): Promise<any> {
  await session.send([Buffer.from(line)]);
  let found: any;
  await waitUntil(
    session,
    () => (found = session.received.find((message) => message?.id === id)) !== undefined,
    `the answer to ${id}`,
  );
  return found;
}

function ping(id: string): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"ping"}`;
}

/** The handshake, as a raw client does it. */
export async function initializeSession(session: ServerSession): Promise<void> {
  const { protocolVersion } = session;
  const response = await roundTrip(
    session,
    'init',
    JSON.stringify({
      jsonrpc: '2.0',
      id: 'init',
      method: 'initialize',
      params: { protocolVersion, capabilities: {}, clientInfo: { name: 'fuzz', version: '0' } },
    }),
  );
  expect(response.result?.protocolVersion).toBe(protocolVersion);
  await session.send([Buffer.from('{"jsonrpc":"2.0","method":"notifications/initialized"}')]);
}

/** One case: the traffic's answers are right, the session still works and holds no record afterwards. */
export async function runServerCase(session: ServerSession, traffic: Traffic): Promise<void> {
  const batches = session.protocolVersion === '2025-03-26';
  const { lines, expectations, responseCount, batchAnswers } = planTraffic(
    traffic,
    session.framing,
    session.maxBytes,
    batches,
  );
  const start = session.received.length;
  const first = `sentinel-${++sentinels}`;
  await session.send([...lines, Buffer.from(ping(first))]);
  const wanted = responseCount + 1;
  await waitUntil(
    session,
    () => session.received.length - start >= wanted && session.received.slice(start).some((m) => m?.id === first),
    `${wanted} responses`,
  ).catch((error: Error) => {
    // Say what did arrive: the checker names what is missing or wrong.
    try {
      checkResponses(
        expectations,
        session.received
          .slice(start)
          .flat()
          .filter((m) => m?.id !== first),
      );
    } catch (mismatch) {
      throw new Error(`${error.message}; ${(mismatch as Error).message}`);
    }
    throw error;
  });
  // A second round trip: whatever the case still had to say (a duplicate answer) arrives before its answer.
  const second = `sentinel-${++sentinels}`;
  await roundTrip(session, second, ping(second));
  const answers = session.received.slice(start).filter((m) => m?.id !== first && m?.id !== second);
  expect(answers.filter(Array.isArray).length, 'one array answers each batch that calls for an answer').toBe(
    batchAnswers,
  );
  for (const answer of answers.filter(Array.isArray))
    expect(answer.length, 'a batch answer is not empty').toBeGreaterThan(0);
  checkResponses(expectations, answers.flat());

  // Still serving, and nothing left behind: `stats` is the only handler running, no request of ours pending.
  const statsId = `stats-${sentinels}`;
  const stats = await roundTrip(
    session,
    statsId,
    JSON.stringify({ jsonrpc: '2.0', id: statsId, method: 'tools/call', params: { name: 'stats', arguments: {} } }),
  );
  expect(JSON.parse(stats.result.content[0].text)).toEqual({ pendingRequests: 0, activeHandlers: 1 });
}

// ---- sessions ----------------------------------------------------------------------------------------

/** The fuzz server in process, behind a memory pair that copies through JSON text (frames, not lines). */
export function memorySession(
  protocolVersion = '2025-11-25',
): ServerSession & { readonly connection: ServerConnection } {
  const [peerSide, serverSide]: [MemoryTransport, MemoryTransport] = createMemoryPair({
    codec: 'json',
    maxMessageBytes: FUZZ_MAX_MESSAGE_BYTES,
  });
  const server = new Server(fuzzDefinition);
  const connection = server.connect(serverSide);
  const received: any[] = [];
  let ended: string | undefined;
  peerSide.messages.subscribe({
    next: (message) => void received.push(message),
    error: (error) => void (ended = `the transport failed: ${error}`),
    complete: () => void (ended = 'the transport closed'),
  });
  return {
    framing: 'messages',
    maxBytes: FUZZ_MAX_MESSAGE_BYTES,
    protocolVersion,
    received,
    connection,
    async send(lines) {
      for (const line of lines) await peerSide.sendRaw(line.toString('utf8'));
    },
    failure: () => ended ?? (connection.state === 'closed' ? 'the server connection closed' : undefined),
    async close() {
      await peerSide.close();
      await server.close();
    },
  };
}

const fuzzServerScript = fixturePath('fuzz-server.ts');

/** The fuzz server as a real child process over stdio; stdout is read as lines of JSON. */
export function stdioSession(
  protocolVersion = '2025-11-25',
): ServerSession & { readonly child: ChildProcessWithoutNullStreams; stderr(): string } {
  const child = spawn(process.execPath, ['--import', 'tsx', fuzzServerScript], { stdio: 'pipe' });
  const received: any[] = [];
  let exit: string | undefined;
  let stderr = '';
  let partial = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop()!;
    for (const part of parts) {
      try {
        received.push(JSON.parse(part));
      } catch {
        received.push({ unparsable: part.slice(0, 200) });
      }
    }
  });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => void (stderr = (stderr + chunk).slice(-4000)));
  child.on('exit', (code, signal) => void (exit = `the child exited (code ${code}, signal ${signal}): ${stderr}`));
  child.stdin.on('error', () => undefined);
  return {
    framing: 'lines',
    maxBytes: FUZZ_MAX_MESSAGE_BYTES,
    protocolVersion,
    received,
    child,
    stderr: () => stderr,
    async send(lines) {
      if (exit) throw new Error(exit);
      const data = Buffer.concat(lines.flatMap((line) => [line, Buffer.from('\n')]));
      if (!child.stdin.write(data)) await new Promise((resolve) => child.stdin.once('drain', resolve));
    },
    failure: () => exit,
    async close() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.stdin.end();
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
    },
  };
}
