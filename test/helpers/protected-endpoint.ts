/**
 * A server behind `createMcpHttpHandler` with `auth`, on 127.0.0.1, closed after the test: the resource is
 * the endpoint's own URL (`<origin><path>`), which `auth` receives to name it.
 */
import type { ResourceServerOptions } from '../../lib/auth/server/resource-server';
import { Server, type ServerOptions } from '../../lib/server/server';
import type { ServerDefinition } from '../../lib/server/definition';
import { createMcpHttpHandler, type McpHttpHandler } from '../../transports/http/endpoint';
import { cleanups } from './cleanups';
import { lateListener, listenHttp } from './http';

export interface ProtectedEndpoint {
  /** The MCP endpoint's URL, which is also the resource. */
  readonly url: string;
  readonly origin: string;
  /** Where the Protected Resource Metadata is served (RFC 9728's well-known path for the endpoint's path). */
  readonly metadataUrl: string;
}

export async function serveProtected(
  definition: ServerDefinition,
  auth: (url: string) => ResourceServerOptions,
  { path = '/mcp', server: serverOptions = {} }: { path?: string; server?: ServerOptions } = {},
): Promise<ProtectedEndpoint> {
  const server = new Server(definition, serverOptions);
  cleanups.push(() => server.close());
  let handler: McpHttpHandler | undefined;
  const { origin } = await listenHttp(lateListener(() => handler));
  const url = path === '/' ? origin : `${origin}${path}`;
  handler = createMcpHttpHandler(server, { path, auth: auth(url) });
  cleanups.push(() => handler!.close());
  const wellKnown = path === '/' ? '' : path;
  return { url, origin, metadataUrl: `${origin}/.well-known/oauth-protected-resource${wellKnown}` };
}
