/**
 * The official MCP conformance suite (0.1.16, `--suite all`: the 30 active and 2 pending server
 * scenarios) against our fixture server over our Streamable HTTP handler on 127.0.0.1. Every scenario
 * must pass every check it makes, with no failure and no warning, and everything our server emits must
 * be valid against the official schema; the totals are printed at the end.
 * Also: the fixture's `--stdio` main serves the same definition to our client.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../../lib/client/client';
import { StdioClientTransport } from '../../transports/stdio';
import { Server } from '../../lib/server/server';
import { fixtureDefinition, serveFixture, type ServedFixture } from './fixture-server';
import { describeProblems, formatTotals, runServerSuite, totalsOf, type SuiteRun } from './run-suite';
import { validateEveryConnection } from './validate-connections';

/** Scenario -> the checks it passes against a complete fixture (counted from the scenario sources). */
const EXPECTED_PASSES: Readonly<Record<string, number>> = {
  'completion-complete': 1,
  'dns-rebinding-protection': 2,
  'elicitation-sep1034-defaults': 5,
  'elicitation-sep1330-enums': 5,
  'json-schema-2020-12': 4,
  'logging-set-level': 1,
  ping: 1,
  'prompts-get-embedded-resource': 1,
  'prompts-get-simple': 1,
  'prompts-get-with-args': 1,
  'prompts-get-with-image': 1,
  'prompts-list': 1,
  'resources-list': 1,
  'resources-read-binary': 1,
  'resources-read-text': 1,
  'resources-subscribe': 1,
  'resources-templates-read': 1,
  'resources-unsubscribe': 1,
  'server-initialize': 1,
  // Priming event, retry field, and the result after the stream was closed mid-call and resumed.
  'server-sse-polling': 3,
  'server-sse-multiple-streams': 2,
  'tools-call-audio': 1,
  'tools-call-elicitation': 1,
  'tools-call-embedded-resource': 1,
  'tools-call-error': 1,
  'tools-call-image': 1,
  'tools-call-mixed-content': 1,
  'tools-call-sampling': 1,
  'tools-call-with-logging': 1,
  'tools-call-with-progress': 1,
  'tools-call-simple-text': 1,
  'tools-list': 1,
};

let served: ServedFixture;
let run: SuiteRun;

beforeAll(async () => {
  // Everything the fixture emits to the suite is checked against the official schema too.
  served = await serveFixture(0, validateEveryConnection(new Server(fixtureDefinition)));
  run = await runServerSuite(served.url, { suite: 'all' });
}, 90_000);

afterAll(async () => {
  await served?.close();
  if (run) console.log(formatTotals(totalsOf(run.scenarios)));
});

describe('the official conformance suite against our Streamable HTTP server', () => {
  it('runs all 32 server scenarios and exits 0', () => {
    expect(run.scenarios.map((result) => result.scenario)).toEqual(Object.keys(EXPECTED_PASSES).sort());
    expect(run.exitCode, run.output.slice(-4000)).toBe(0);
  });

  it.each(Object.entries(EXPECTED_PASSES))('%s: %i checks pass, none fails or warns', (scenario, passes) => {
    const result = run.scenarios.find((candidate) => candidate.scenario === scenario);
    expect(result, `no results for ${scenario}`).toBeDefined();
    expect({ failed: result!.failed, warnings: result!.warnings }, describeProblems(result!)).toEqual({
      failed: 0,
      warnings: 0,
    });
    expect(result!.passed).toBe(passes);
  });
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
