/**
 * `npm start`: the demo servers on one local HTTP port, every message traced to stderr, and how to connect
 * printed on stdout. `--port <n>` (or `PORT`; default 3000, 0 picks a free one), `--host <address>` and
 * `--trace-file <path>` (the trace as NDJSON too).
 *
 * - notes (`/notes/mcp`): resources, a subscription, a resource template, a prompt, completion, a tool.
 * - tools (`/tools/mcp`): a typed result, progress, logging and cancellation.
 * - clock: a stdio program (examples/clock-server.ts), for a host to run as a child process.
 */
import { existsSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DEFAULT_HOST } from '../lib/cli/args';
import { describeError } from '../lib/cli/errors';
import { processIo } from '../lib/cli/io';
import { callLine, inspectorLine, mcpServersSnippet, nodeCommand, type StdioCommand } from '../lib/cli/hints';
import { listenHttp } from '../lib/cli/http-listener';
import { stopSignal } from '../lib/cli/signals';
import { CommandTrace } from '../lib/cli/trace';
import { Server } from '../lib/index';
import { createMcpHttpHandler, type McpHttpHandler } from '../transports/http/endpoint';
import notes from './notes-server';
import tools from './tools-server';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const say = (line = '') => process.stdout.write(line + '\n');

const { values } = parseArgs({
  options: { port: { type: 'string' }, host: { type: 'string' }, 'trace-file': { type: 'string' } },
});
const port = Number(values.port ?? process.env.PORT ?? 3000);
const host = values.host ?? DEFAULT_HOST;
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  process.stderr.write(`demo: the port must be a number from 0 to 65535 (0 picks a free one)\n`);
  process.exit(2);
}

const servers = { notes, tools: new Server(tools) };
// Traced as `switchboard serve --trace` traces: both eras, each session and each stateless request.
// `--trace-file <path>` also records it as NDJSON, for `switchboard trace view` (scripts/readme-screenshot.ts).
const trace = (await CommandTrace.open({ trace: true, traceFile: values['trace-file'] }, processIo))!;
const handlers = new Map<string, McpHttpHandler>(
  Object.entries(servers).map(([name, server]) => [
    `/${name}`,
    createMcpHttpHandler(trace.serving(server), {
      path: `/${name}/mcp`,
      legacy: { ssePath: `/${name}/sse`, messagePath: `/${name}/messages` },
    }),
  ]),
);

/** Each server's endpoints live under its own first path segment. */
function route(request: IncomingMessage, response: ServerResponse): void {
  const segment = /^\/[^/?]*/.exec(request.url ?? '')?.[0] ?? '';
  const handler = handlers.get(segment);
  if (handler) handler(request, response);
  else response.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found: try /notes/mcp or /tools/mcp\n');
}

const listener = await listenHttp(route, port, host).catch((error: unknown) => {
  const [message] = describeError(error);
  process.stderr.write(`demo: ${message} (choose another with --port <n> or PORT=<n>)\n`);
  process.exit(1);
});
const url = (name: string) => `${listener.origin}/${name}/mcp`;

// The CLI from this checkout: the built one when `npm run build` has made it, else from source through tsx.
const cli = existsSync(here('../dist/cli.js')) ? 'npx switchboard' : 'npx tsx lib/cli/main.ts';
const stdioServers: Record<string, StdioCommand> = {
  notes: nodeCommand(here('../lib/cli/main.ts'), ['serve', here('notes-server.ts')]),
  tools: nodeCommand(here('../lib/cli/main.ts'), ['serve', here('tools-server.ts')]),
  clock: nodeCommand(here('clock-server.ts'), []),
};

say(`mcp-switchboard demo on ${listener.origin}: every message is traced on stderr`);
say();
say(`  notes  ${url('notes')}  notes as resources (subscribe to notes://index), a prompt, completion`);
say(`  tools  ${url('tools')}  add, and a countdown with progress and cancellation`);
say(`  (2024-11-05 clients: ${listener.origin}/notes/sse and ${listener.origin}/tools/sse)`);
say();
say('Call them from another terminal:');
say(`  ${callLine(cli, url('tools'), 'tools/list')}`);
say(`  ${callLine(cli, url('tools'), 'tools/call', { name: 'add', arguments: { a: 2, b: 3 } })}`);
say(`  ${callLine(cli, url('notes'), 'resources/read', { uri: 'notes://index' })}`);
say(
  `  ${callLine(cli, url('notes'), 'tools/call', { name: 'add_note', arguments: { title: 'Hello', body: 'from the CLI' } })}`,
);
say(`  ${callLine(cli, url('notes'), 'prompts/get', { name: 'summarize', arguments: { id: 'groceries' } })}`);
say(
  `  ${cli} call tools/call '{"name":"now","arguments":{"timeZone":"Asia/Tokyo"}}' -- npx tsx examples/clock-server.ts`,
);
say();
say('With the MCP inspector:');
say(`  ${inspectorLine(url('tools'))}`);
say();
say('Over stdio, from Claude Desktop (claude_desktop_config.json; VS Code: .vscode/mcp.json with the same');
say('entries under "servers", each with "type": "stdio"):');
say(mcpServersSnippet(stdioServers));
say();
say('Ctrl-C stops the demo.');

await stopSignal();
await Promise.all([...handlers.values()].map((handler) => handler.close()));
await listener.close();
await trace.close();
