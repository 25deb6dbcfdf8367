/**
 * OAuth over the deprecated HTTP+SSE transport (2024-11-05): the `authorization` option of
 * `LegacySseClientTransport`. The stream's GET meets the 401 first: the OAuth client authorizes against a
 * real authorization server (test/helpers/oauth-server.ts) and the GET is sent again with the token; a POST
 * refused with 403 insufficient_scope steps up and is sent again. Our server is the protected endpoint.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { headlessInteraction } from '../../lib/auth/client/authorization-code';
import { OAuthClient } from '../../lib/auth/client/oauth-client';
import { Client } from '../../lib/client/client';
import type { ServerContext } from '../../lib/server/context';
import { defineServer } from '../../lib/server/definition';
import { Server } from '../../lib/server/server';
import { createMcpHttpHandler, type McpHttpHandler } from '../../transports/http/endpoint';
import { LegacySseClientTransport } from '../../transports/http/legacy-sse-client';
import { cleanups, lateListener, listenHttp } from '../helpers/http';
import { startAuthorizationServer, type AuthorizationServer } from '../helpers/oauth-server';
import { text } from '../helpers/content';

const DEFINITION = defineServer({
  name: 'protected-sse',
  version: '1.0.0',
  tools: [
    {
      name: 'whoami',
      inputSchema: { type: 'object' },
      handler: (_args, ctx: ServerContext) => text(ctx.auth?.scopes.join(' ') ?? ''),
    },
    { name: 'write', inputSchema: { type: 'object' }, scopes: ['mcp:write'], handler: () => text('written') },
  ],
});

let as: AuthorizationServer;

beforeEach(async () => {
  as = await startAuthorizationServer({ scopesSupported: ['mcp:read', 'mcp:write'] });
  cleanups.push(() => as.close());
});

/**
 * Our server behind the HTTP endpoint, protected by the AS's tokens; the URL of its legacy SSE stream. The
 * resource is the origin: it covers `/sse` as well as `/mcp` (a client refuses metadata for another path).
 */
async function protectedSseUrl(): Promise<string> {
  const server = new Server(DEFINITION);
  cleanups.push(() => server.close());
  let handler: McpHttpHandler | undefined;
  const { origin } = await listenHttp(lateListener(() => handler));
  handler = createMcpHttpHandler(server, {
    auth: {
      resource: origin,
      authorizationServers: [as.issuer],
      jwks: as.url('/jwks'),
      scopesSupported: ['mcp:read', 'mcp:write'],
    },
  });
  cleanups.push(() => handler!.close());
  return `${origin}/sse`;
}

async function connect(url: string, authorization: OAuthClient): Promise<Client> {
  const client = new Client({ name: 'sse-oauth', version: '1.0.0' }, { era: 'handshake', eraCache: false });
  await client.connect(new LegacySseClientTransport(url, { authorization }));
  cleanups.push(() => client.close());
  return client;
}

const tokenRequests = () => as.events.filter((event) => event.endpoint === 'token');

describe('the HTTP+SSE client transport with an OAuth client', () => {
  it('authorizes at the stream’s 401 and opens the session with the token', async () => {
    const url = await protectedSseUrl();
    const client = await connect(
      url,
      new OAuthClient(url, { interaction: headlessInteraction('http://127.0.0.1:1/cb') }),
    );
    const result = await client.callTool('whoami', {});
    expect(result.content).toEqual([{ type: 'text', text: 'mcp:read mcp:write' }]);
  });

  it('gets one token for the stream and every POST after it', async () => {
    const url = await protectedSseUrl();
    const client = await connect(
      url,
      new OAuthClient(url, { interaction: headlessInteraction('http://127.0.0.1:1/cb') }),
    );
    await client.callTool('whoami', {});
    await client.callTool('whoami', {});
    expect(tokenRequests()).toHaveLength(1);
  });

  it('steps up when a POST is refused with 403 insufficient_scope, and sends it again', async () => {
    const url = await protectedSseUrl();
    const oauth = new OAuthClient(url, {
      interaction: headlessInteraction('http://127.0.0.1:1/cb'),
      scope: 'mcp:read',
    });
    const client = await connect(url, oauth);
    const result = await client.callTool('write', {});
    expect(result.content).toEqual([{ type: 'text', text: 'written' }]);
    expect(oauth.currentTokens?.scope?.split(' ').sort()).toEqual(['mcp:read', 'mcp:write']);
  });
});
