/**
 * The official MCP conformance suite (0.2.0-alpha.12) against our fixture server over our Streamable HTTP
 * handler on 127.0.0.1, both requirement sets, one after the other on one endpoint (both eras served at
 * once): `--requirements 2025-11-25` (the handshake era, with its pending and added-after-release
 * scenarios) and `--requirements 2026-07-28` (stateless, with its pending scenarios and the tasks extension's,
 * which the suite reports but does not score). Every scenario the set runs must pass every check it makes,
 * with no failure and no warning, but the one the suite skips whole (`SKIPPED_BY_SUITE`). Everything our
 * server emits is validated against its era's official schema, besides the suite's own `wire-schema-valid`.
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
import { TASK_TOOLS, taskTools } from '../fixtures/tasks/task-tools';

const SETS: readonly Requirements[] = ['2025-11-25', '2026-07-28'];
/**
 * Scenarios the suite runs but skips whole, every check SKIPPED: `tasks-status-notifications` waits for a
 * harness that listens for `notifications/tasks` on the `subscriptions/listen` stream (SEP-2663 moved them there).
 */
const SKIPPED_BY_SUITE = new Set(['tasks-status-notifications']);
/** The tasks extension's scenarios (SEP-2663), in the 2026-07-28 set. */
const isTasksExtension = (scenario: string) => scenario.startsWith('tasks-');

let served: ServedFixture;
let modernProblems: string[];
const runs = new Map<Requirements, SuiteRun>();
const listed = new Map<Requirements, string[]>();

beforeAll(async () => {
  // slow_compute's seconds last 100 ms here: the suite waits out the 1 and 2 s ones (and cancels the others).
  const server = validateEveryConnection(new Server(fixtureDefinition.withTools(...taskTools({ secondMs: 100 }))));
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
    const judged = run.scenarios.filter((result) => !SKIPPED_BY_SUITE.has(result.scenario));
    const tasks = judged.filter((result) => isTasksExtension(result.scenario));
    console.log(formatTotals(totalsOf(judged), `server, --requirements ${requirements}, skipped by the suite aside`));
    if (tasks.length > 0) console.log(formatTotals(totalsOf(tasks), `server, --requirements ${requirements}, tasks-*`));
  }
});

describe.each(SETS)(
  'the official conformance suite, --requirements %s, against our Streamable HTTP server',
  (requirements) => {
    it('runs every server scenario the set lists (required, pending, extension)', () => {
      const ran = runs.get(requirements)!.scenarios.map((result) => result.scenario);
      expect(ran).toEqual([...listed.get(requirements)!].sort());
    });

    it('passes every scenario it runs (the tasks extension included), each with a passed check and no failure or warning', () => {
      const judged = runs.get(requirements)!.scenarios.filter((result) => !SKIPPED_BY_SUITE.has(result.scenario));
      expect(judged.length).toBeGreaterThan(30);
      const problems = judged
        .filter((result) => result.failed + result.warnings > 0 || result.passed === 0)
        .map((result) => `${result.scenario} (${result.passed} passed)\n${describeProblems(result)}`);
      expect(problems, problems.join('\n\n')).toEqual([]);
    });

    it('skips no check but those of the scenarios the suite skips whole', () => {
      const scenarios = runs.get(requirements)!.scenarios;
      const skipping = scenarios
        .filter((result) => result.checks.some((check) => check.status === 'SKIPPED'))
        .map((result) => result.scenario);
      expect(skipping).toEqual(scenarios.map((result) => result.scenario).filter((name) => SKIPPED_BY_SUITE.has(name)));
      for (const result of scenarios.filter((each) => SKIPPED_BY_SUITE.has(each.scenario))) {
        expect(result.checks.map((check) => check.status)).toEqual(['SKIPPED']);
      }
    });
  },
);

it('runs and passes the ten scenarios of the tasks extension with --requirements 2026-07-28', () => {
  const tasks = runs.get('2026-07-28')!.scenarios.filter((result) => isTasksExtension(result.scenario));
  expect(tasks).toHaveLength(10);
  const passed = tasks.filter((result) => result.passed > 0 && result.failed + result.warnings === 0);
  expect(passed.map((result) => result.scenario)).toEqual(
    tasks.map((result) => result.scenario).filter((name) => !SKIPPED_BY_SUITE.has(name)),
  );
});

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
      const names = (await client.listTools()).map((tool) => tool.name);
      expect(names).toContain('test_reconnection');
      // The tasks scenarios' tools, beside the others (in real time here).
      expect(names).toEqual(expect.arrayContaining(TASK_TOOLS.map((tool) => tool.name)));
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
