/**
 * The server side under hostile input, in process (a memory pair copying through JSON text) and over stdio
 * (the fuzz server as a real child process): garbage lines of every kind interleaved with valid requests.
 * For every case: each request with a readable id gets exactly one response with that id and the right
 * outcome, unreadable ones get id-less errors with the right codes (-32700 unparsable, -32600 invalid
 * envelope, -32601 unknown method, -32602 bad params), error messages stay under 1 KiB, valid requests get
 * their own results, and afterwards the session still serves and holds no record; nothing reaches the
 * process as an uncaught exception or unhandled rejection. Also run by `npm run fuzz -- --cases N --seed S`.
 */
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { deepJsonrpcLine, nested, rawLine, traffic, type Traffic } from './arbitraries';
import { fuzzCases, fuzzParameters, fuzzTimeout } from './config';
import { watchProcessFaults, type ProcessFaults } from './process-faults';
import { initializeSession, memorySession, runServerCase, stdioSession, type ServerSession } from './server-harness';

/** The hostile lines (and their kin), each followed by a valid call. */
const HOSTILE_LINES: Record<string, string> = {
  'a "jsonrpc" member nesting objects 5,000 deep (~60 KB)': deepJsonrpcLine(5_000),
  'a "jsonrpc" member nesting objects 2,000 deep': deepJsonrpcLine(2_000, '"two-thousand"'),
  'params nesting arrays 5,000 deep': `{"jsonrpc":"2.0","id":7,"method":"ping","params":${nested(5_000, 'array')}}`,
  'an id of 1e400 (Infinity once parsed)': '{"jsonrpc":"2.0","id":1e400,"method":"ping"}',
  'a method name of 100,000 characters': `{"jsonrpc":"2.0","id":8,"method":"${'m'.repeat(100_000)}"}`,
  'a "jsonrpc" member of 200,000 characters': `{"jsonrpc":"${'2'.repeat(200_000)}","id":9,"method":"ping"}`,
};

const hostileCase = (line: string): Traffic => [{ garbage: rawLine(Buffer.from(line)) }, { valid: { kind: 'ping' } }];

let faults: ProcessFaults;
beforeAll(() => void (faults = watchProcessFaults()));
afterAll(() => faults.stop());
afterEach(() => expect(faults.seen.splice(0), 'nothing escaped to the process').toEqual([]));

describe.each([
  { transport: 'in process (memory pair, JSON text)', open: () => memorySession(), cases: 250, maxLines: 30 },
  {
    transport: 'in process at 2025-03-26 (batches served)',
    open: () => memorySession('2025-03-26'),
    cases: 200,
    maxLines: 30,
  },
  { transport: 'in a child process over stdio', open: () => stdioSession(), cases: 800, maxLines: 50 },
])('fuzz: a server $transport', ({ transport, open, cases, maxLines }) => {
  describe('the hostile lines of the issue', () => {
    let session: ServerSession;
    afterEach(() => session?.close());
    for (const [name, line] of Object.entries(HOSTILE_LINES)) {
      it(`answers ${name} with one bounded error, and serves the next call`, async () => {
        session = open();
        await initializeSession(session);
        await runServerCase(session, hostileCase(line));
        expect(session.failure()).toBeUndefined();
      });
    }
  });

  describe('random traffic', () => {
    let session: ServerSession;
    beforeAll(async () => {
      session = open();
      await initializeSession(session);
    }, 20_000);
    afterAll(() => session.close());

    it(
      `answers every request of ${fuzzCases(cases)} sessions of up to ${maxLines} lines exactly once, right, and stays up with nothing leaked`,
      async () => {
        await fc.assert(
          fc.asyncProperty(traffic(maxLines), (lines) => runServerCase(session, lines)),
          fuzzParameters(`server ${transport}`, cases),
        );
        expect(session.failure()).toBeUndefined();
      },
      // A hang guard, not a speed check: 800 stdio cases take 15 s alone, several times that beside other
      // test files on a 2-core machine.
      fuzzTimeout(120_000, cases),
    );
  });
});
