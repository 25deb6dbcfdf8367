/**
 * The official MCP conformance suite (0.2.0-alpha.12) against our fixture server over our Streamable HTTP
 * handler on 127.0.0.1, both requirement sets, one after the other on one endpoint (both eras served at
 * once): `--requirements 2025-11-25` (the handshake era, with its pending and added-after-release
 * scenarios) and `--requirements 2026-07-28` (stateless, with its pending scenarios). Every scenario the set
 * requires or runs as pending must pass every check it makes, with no failure and no warning; the tasks
 * extension scenarios (reported, never scored) are a later issue and only have to run. Everything our server
 * emits is validated against its era's official schema, besides the suite's own `wire-schema-valid`.
 * Also: the fixture's `--stdio` main serves the same definition to our client.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../../lib/client/client';
import { StdioClientTransport } from '../../transports/stdio';
import { Server } from '../../lib/server/server';
import { validateEveryModernExchange } from '../helpers/modern-wire';
import { fixtureDefinition, serveFixture, type ServedFixture } from './fixture-server';
import {
  describeProblems,
  formatTotals,
  listScenarios,
  runServerSuite,
  totalsOf,
  type Requirements,
  type SuiteRun,
} from './run-suite';
import { validateEveryConnection } from './validate-connections';

const SETS: readonly Requirements[] = ['2025-11-25', '2026-07-28'];
/** Reported by the suite but not scored: the tasks extension (SEP-2663) is later work. */
const isTasksExtension = (scenario: string) => scenario.startsWith('tasks-');

let served: ServedFixture;
let modernProblems: string[];
const runs = new Map<Requirements, SuiteRun>();
const listed = new Map<Requirements, string[]>();

beforeAll(async () => {
  const server = validateEveryConnection(new Server(fixtureDefinition));
  modernProblems = validateEveryModernExchange(server);
  served = await serveFixture(0, server);
  for (const requirements of SETS) {
    listed.set(requirements, await listScenarios('server', requirements));
    runs.set(requirements, await runServerSuite(served.url, { requirements, timeoutMs: 150_000 }));
  }
}, 360_000);

afterAll(async () => {
  await served?.close();
  for (const [requirements, run] of runs) {
    const judged = run.scenarios.filter((result) => !isTasksExtension(result.scenario));
    console.log(formatTotals(totalsOf(judged), `server, --requirements ${requirements}, tasks aside`));
  }
});

describe.each(SETS)(
  'the official conformance suite, --requirements %s, against our Streamable HTTP server',
  (requirements) => {
    it('runs every server scenario the set lists (required, pending, extension)', () => {
      const ran = runs.get(requirements)!.scenarios.map((result) => result.scenario);
      expect(ran).toEqual([...listed.get(requirements)!].sort());
    });

    it('passes every scenario but the tasks extension, each with at least one passed check and no failure or warning', () => {
      const judged = runs.get(requirements)!.scenarios.filter((result) => !isTasksExtension(result.scenario));
      expect(judged.length).toBeGreaterThan(30);
      const problems = judged
        .filter((result) => result.failed + result.warnings > 0 || result.passed === 0)
        .map((result) => `${result.scenario} (${result.passed} passed)\n${describeProblems(result)}`);
      expect(problems, problems.join('\n\n')).toEqual([]);
    });
  },
);

it('everything the server emitted on the stateless path is valid against the 2026-07-28 schema', () => {
  expect(runs.get('2026-07-28')!.scenarios.length).toBeGreaterThan(0);
  expect(modernProblems).toEqual([]);
});

describe('the fixture over stdio', () => {
  it('serves the same definition to our client', async () => {
    const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', path.join(root, 'test/conformance/fixture-server.ts'), '--stdio'],
      cwd: root,
    });
    const client = new Client({ name: 'conformance-stdio', version: '1.0.0' });
    try {
      await client.connect(transport);
      const tools = await client.listTools();
      expect(tools.map((tool) => tool.name)).toContain('test_reconnection');
      // stdio has no streams to close: the tool says so and still answers.
      const result = await client.callTool('test_reconnection', {});
      expect(result.content).toEqual([
        {
          type: 'text',
          text: 'Reconnection test completed without closing the stream (this request cannot be resumed).',
        },
      ]);
    } finally {
      await client.close();
      await transport.exited;
    }
  });
});
