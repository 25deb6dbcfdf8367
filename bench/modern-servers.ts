/**
 * The servers of the stateless-revision (2026-07-28) rows, built in the HTTP bench child
 * (`bench/http.ts --serve-http <name>`):
 * - `ours-dual`: our `Server` behind `createMcpHttpHandler` (both eras on `/mcp`; JSON answers on handshake-era
 *   sessions, as the `http` rows), with `echo` and `ask_name` (one `ctx.elicit`, so one `input_required` round
 *   on a modern request);
 * - `ours-fetch`: the same server as a web-standard fetch handler (`createMcpFetchHandler`), on node:http through
 *   the same adapter as `sdk-v2`, so the two fetch handlers meet on equal terms;
 * - `sdk-v2`: `@modelcontextprotocol/server` 2.4.0, `createMcpHandler` with a new `McpServer` per request from
 *   its factory (the package's documented pattern), `echo` with a zod input schema, on node:http through
 *   `nodeListenerOf` (what `toNodeHandler` of `@modelcontextprotocol/node` does: a web `Request` per request,
 *   the `Response` written back; that package is not installed here).
 */
import type http from 'node:http';
import type { ServerContext } from '../lib/server/context';
import { defineServer, type ServerDefinition } from '../lib/server/definition';
import { Server } from '../lib/server/server';
import type { ToolDefinition } from '../lib/server/tools';
import { createMcpHttpHandler } from '../transports/http/endpoint';
import { createMcpFetchHandler } from '../transports/http/fetch-handler';
import { echoTool } from './ours';

/** The tool of the round rows: asks for a name under the key `name`, then greets it. */
const askNameHandler: ToolDefinition['handler'] = async (_args, ctx: ServerContext) => {
  const answer = await ctx.elicit(
    { message: 'Name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } },
    { key: 'name' },
  );
  return { content: [{ type: 'text', text: `Hi, ${String(answer.content?.name)}` }] };
};

export const ASK_NAME_TOOL = 'ask_name';

function askNameTool(): ToolDefinition {
  return { name: ASK_NAME_TOOL, inputSchema: { type: 'object' }, handler: askNameHandler };
}

/** `echo` and `ask_name`: served over HTTP here, and in process by bench/modern-in-process.ts. */
export function dualEraDefinition(): ServerDefinition {
  return defineServer({ name: 'bench-switchboard', version: '1.0.0', tools: [echoTool(), askNameTool()] });
}

export function createOursDualServer(): http.RequestListener {
  return createMcpHttpHandler(new Server(dualEraDefinition()), { responseMode: 'json' });
}

export function createOursFetchServer(): http.RequestListener {
  const handler = createMcpFetchHandler(new Server(dualEraDefinition()), { responseMode: 'json' });
  return nodeListenerOf({ fetch: (request) => handler(request) });
}

/** A fetch-shaped handler served on node:http: the body read whole, one web `Request`, the `Response` streamed back. */
function nodeListenerOf(handler: { fetch(request: Request): Promise<Response> }): http.RequestListener {
  return (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const headers = new Headers();
      for (const [name, value] of Object.entries(request.headers)) {
        if (typeof value === 'string') headers.set(name, value);
        else if (Array.isArray(value)) for (const item of value) headers.append(name, item);
      }
      const method = request.method ?? 'GET';
      const body = method === 'GET' || method === 'HEAD' ? undefined : Buffer.concat(chunks).toString('utf8');
      const webRequest = new Request(`http://${request.headers.host ?? 'localhost'}${request.url ?? '/'}`, {
        method,
        headers,
        body,
      });
      handler.fetch(webRequest).then(
        async (webResponse) => {
          const headers: Record<string, string> = {};
          webResponse.headers.forEach((value, name) => void (headers[name] = value));
          response.writeHead(webResponse.status, headers);
          const reader = webResponse.body?.getReader();
          if (reader)
            for (let next = await reader.read(); !next.done; next = await reader.read()) response.write(next.value);
          response.end();
        },
        (error: unknown) => {
          console.error(error);
          response.writeHead(500).end();
        },
      );
    });
  };
}

export async function createSdkV2Server(): Promise<http.RequestListener> {
  const [{ createMcpHandler, McpServer }, { z }] = await Promise.all([
    import('@modelcontextprotocol/server'),
    import('zod'),
  ]);
  const inputSchema = z.object({ text: z.string() });
  const handler = createMcpHandler(() => {
    const server = new McpServer({ name: 'bench-sdk-v2', version: '1.0.0' });
    server.registerTool('echo', { inputSchema }, ({ text }) => ({ content: [{ type: 'text', text }] }));
    return server;
  });
  return nodeListenerOf(handler);
}
