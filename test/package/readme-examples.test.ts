/**
 * The complete server and client the README shows are examples/weather-server.ts and weather-client.ts, word
 * for word but for their imports (the package's names there, the sources' paths here), and they work: the
 * client runs the server over stdio, and the server answers over Streamable HTTP in both eras.
 */
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { Client } from '../../lib/client/client';
import { StreamableHttpClientTransport } from '../../transports/http/streamable-client';
import { LongRunning, ROOT, runToEnd, tsxCommand } from '../helpers/cli-process';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const AS_PUBLISHED: readonly [from: string, to: string][] = [
  ["'../lib/index'", "'mcp-switchboard'"],
  ["'../transports/http/index'", "'mcp-switchboard/transports/http'"],
  ["'../transports/stdio'", "'mcp-switchboard/transports/stdio'"],
];

/** The README's code block right after the `<!-- examples/<file> -->` marker. */
function readmeBlock(file: string): string {
  const marker = `<!-- examples/${file} -->\n\`\`\`ts\n`;
  const start = README.indexOf(marker);
  if (start === -1) throw new Error(`The README shows no examples/${file}`);
  const body = start + marker.length;
  return README.slice(body, README.indexOf('```\n', body));
}

function asPublished(file: string): string {
  let text = readFileSync(new URL(`../../examples/${file}`, import.meta.url), 'utf8');
  for (const [from, to] of AS_PUBLISHED) text = text.replaceAll(from, to);
  return text;
}

describe('the complete server and client of the README', () => {
  it.each(['weather-server.ts', 'weather-client.ts'])('shows examples/%s as it is', (file) => {
    expect(readmeBlock(file)).toBe(asPublished(file));
  });

  it('the client starts the server over stdio, lists its tools and calls one with progress', async () => {
    const server = tsxCommand('examples/weather-server.ts');
    const run = await runToEnd(tsxCommand('examples/weather-client.ts', ...server), { cwd: ROOT, timeoutMs: 60_000 });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('connected to weather');
    expect(run.stdout).toContain('tools: forecast');
    expect(run.stdout).toContain('progress: looking up Oslo');
    expect(run.stdout).toContain('forecast: {"city":"Oslo","temperature":16,"unit":"celsius"}');
  });

  describe('the server over Streamable HTTP', () => {
    let served: LongRunning | undefined;
    afterAll(() => served?.stop('SIGTERM', 5_000));

    it.each(['handshake', 'modern'] as const)('answers a typed call in the %s era', async (era) => {
      if (!served) served = LongRunning.run(tsxCommand('examples/weather-server.ts', '0'));
      const [, url] = await served.waitFor('stdout', /Streamable HTTP at (\S+)/);
      const client = await new Client({ name: 'readme', version: '1' }, { era }).connect(
        new StreamableHttpClientTransport(url!),
      );
      const result = await client.callTool('forecast', { city: 'Lima', unit: 'fahrenheit' });
      expect(result.structuredContent).toEqual({ city: 'Lima', temperature: 60.8, unit: 'fahrenheit' });
      expect(client.connectedEra).toBe(era);
      await client.close();
    });
  });
});
