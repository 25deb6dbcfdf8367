/**
 * The fixture server of the official MCP conformance suite (@modelcontextprotocol/conformance
 * 0.2.0-alpha.12), built with our runtime: the tools, resources and prompts its server scenarios call by
 * name, with the payloads their descriptions ask for (the handshake era's tools are in fixture-tools.ts, the
 * 2026-07-28 ones in fixture-modern.ts).
 *
 *   tsx test/conformance/fixture-server.ts --port 3000   # Streamable HTTP (and legacy SSE) on 127.0.0.1:3000/mcp
 *   tsx test/conformance/fixture-server.ts --stdio       # over stdin/stdout
 *   ... --store <dir>                                    # its tasks kept on disk (LMDB) in <dir>, across restarts
 *
 * The tasks scenarios' tools (`TASK_TOOLS`: greet, slow_compute, ...) are served beside the others, in both
 * wire forms: the 2026-07-28 extension and the 2025-11-25 experimental tasks.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { defineServer, type ServerDefinition } from '../../lib/server/definition';
import type { PromptDefinition } from '../../lib/server/prompts';
import { Server } from '../../lib/server/server';
import { createMcpHttpHandler, type McpHttpHandler } from '../../transports/http/endpoint';
import { StdioServerTransport } from '../../transports/stdio';
import { LmdbTaskStore } from '../../lib/tasks/lmdb-task-store';
import { modernPrompts, modernTools, triggerTargets } from './fixture-modern';
import { handshakeTools, PNG_BASE64 } from './fixture-tools';
import { TASK_TOOLS } from '../fixtures/tasks/task-tools';

const prompts: PromptDefinition[] = [
  {
    name: 'test_simple_prompt',
    description: 'A prompt without arguments',
    get: () => [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }],
  },
  {
    name: 'test_prompt_with_arguments',
    description: 'A prompt with two required arguments',
    arguments: [
      { name: 'arg1', description: 'First test argument', required: true },
      { name: 'arg2', description: 'Second test argument', required: true },
    ],
    get: ({ arg1, arg2 }) => [
      { role: 'user', content: { type: 'text', text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` } },
    ],
    complete: {
      arg1: (typed) => ['paris', 'park', 'party', 'test', 'testValue1'].filter((value) => value.startsWith(typed)),
    },
  },
  {
    name: 'test_prompt_with_embedded_resource',
    description: 'A prompt embedding the resource it is given',
    arguments: [{ name: 'resourceUri', description: 'URI of the resource to embed', required: true }],
    get: ({ resourceUri }) => [
      {
        role: 'user',
        content: {
          type: 'resource',
          resource: { uri: resourceUri!, mimeType: 'text/plain', text: 'Embedded resource content for testing.' },
        },
      },
      { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
    ],
  },
  {
    name: 'test_prompt_with_image',
    description: 'A prompt with an image',
    get: () => [
      { role: 'user', content: { type: 'image', data: PNG_BASE64, mimeType: 'image/png' } },
      { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
    ],
  },
];

/** The conformance suite's fixture: one immutable definition, shared by every session. */
export const fixtureDefinition: ServerDefinition = defineServer({
  name: 'switchboard-conformance-fixture',
  version: '1.0.0',
  tools: [...handshakeTools, ...modernTools, ...TASK_TOOLS],
  resources: [
    {
      uri: 'test://static-text',
      name: 'static-text',
      description: 'A static text resource',
      mimeType: 'text/plain',
      read: () => 'This is the content of the static text resource.',
    },
    {
      uri: 'test://static-binary',
      name: 'static-binary',
      description: 'A static PNG image',
      mimeType: 'image/png',
      read: () => ({ blob: PNG_BASE64, mimeType: 'image/png' }),
    },
    {
      uri: 'test://watched-resource',
      name: 'watched-resource',
      description: 'A resource to subscribe to',
      mimeType: 'text/plain',
      read: () => 'Watched resource content',
    },
  ],
  resourceTemplates: [
    {
      uriTemplate: 'test://template/{id}/data',
      name: 'template-data',
      description: 'Data for an id',
      mimeType: 'application/json',
      read: ({ id }) => ({
        mimeType: 'application/json',
        text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${String(id)}` }),
      }),
    },
  ],
  prompts: [...prompts, ...modernPrompts],
});

export interface ServedFixture {
  readonly url: string;
  readonly handler: McpHttpHandler;
  close(): Promise<void>;
}

/**
 * Serves the fixture (or `server`, a `Server` of it) over HTTP on 127.0.0.1 (`port` 0: any free port):
 * Streamable HTTP at /mcp, the legacy HTTP+SSE endpoints beside it.
 */
export async function serveFixture(port = 0, server = new Server(fixtureDefinition)): Promise<ServedFixture> {
  triggerTargets.add(server);
  const handler = createMcpHttpHandler(server, { path: '/mcp' });
  const httpServer = http.createServer(handler);
  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(port, '127.0.0.1', resolve);
  });
  const address = httpServer.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}/mcp`,
    handler,
    close: async () => {
      triggerTargets.delete(server);
      await handler.close();
      httpServer.closeAllConnections();
      await new Promise<void>((resolve) => httpServer.close(() => resolve()));
    },
  };
}

const USAGE = 'usage: fixture-server.ts (--port <n> | --stdio) [--store <dir>]\n';

/** The value after `flag` in `argv`: undefined when the flag is absent, null when no value follows it. */
function optionValue(argv: readonly string[], flag: string): string | null | undefined {
  const index = argv.indexOf(flag);
  if (index === -1) return undefined;
  const value = argv[index + 1];
  return value === undefined || value.startsWith('--') ? null : value;
}

/** A port number (0: any free one), or undefined for anything else. */
function portOf(text: string | null | undefined): number | undefined {
  const port = typeof text === 'string' && /^\d{1,5}$/.test(text) ? Number(text) : Number.NaN;
  return port <= 65535 ? port : undefined;
}

async function main(argv: readonly string[]): Promise<void> {
  const stdio = argv.includes('--stdio');
  const portText = optionValue(argv, '--port');
  const port = portOf(portText);
  const storePath = optionValue(argv, '--store');
  const valid = storePath !== null && (stdio ? portText === undefined : port !== undefined);
  if (!valid) {
    process.stderr.write(USAGE);
    process.exitCode = 2;
    return;
  }
  // The server does not close a store it is given: the fixture does, after the server.
  let store: LmdbTaskStore | undefined;
  try {
    store = storePath === undefined ? undefined : new LmdbTaskStore({ path: storePath });
  } catch (error) {
    process.stderr.write(`Cannot keep tasks in ${storePath}: ${(error as Error).message}\n`);
    process.exitCode = 1;
    return;
  }
  const server = new Server(fixtureDefinition, store ? { tasks: { store } } : {});
  const shutDown = async () => {
    await server.close();
    await store?.close();
  };
  if (stdio) {
    triggerTargets.add(server);
    const connection = server.connect(new StdioServerTransport({ redirectConsole: true }));
    await connection.closed;
    await shutDown();
    return;
  }
  const served = await serveFixture(port, server);
  process.stderr.write(`conformance fixture listening on ${served.url}\n`);
  const stop = () =>
    void served
      .close()
      .then(shutDown)
      .finally(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(`${(error as Error)?.stack ?? String(error)}\n`);
    process.exit(1);
  });
}
