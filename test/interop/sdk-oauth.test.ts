/**
 * The official SDK v1 client's OAuth support against our protected server (issue 15 §5): its
 * `StreamableHTTPClientTransport` with an `authProvider` (an `OAuthClientProvider` kept in memory here),
 * our `Server` behind `createMcpHttpHandler` with `auth` (JWT by the authorization server's JWKS), and the
 * tests' authorization server, over real HTTP on 127.0.0.1.
 *
 * The SDK 1.x flow: a 401 runs discovery, registration and the authorization request, hands the URL to
 * `redirectToAuthorization` and fails the request with `UnauthorizedError`; the application calls
 * `transport.finishAuth(code)` when the redirect comes back and sends again. The provider here follows the
 * URL itself (the authorization server approves at once) and calls `finishAuth` with the code.
 */
import { Client as SdkClient } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { describe, expect, it } from 'vitest';
import { Server } from '../../lib/server/server';
import { createMcpHttpHandler, type McpHttpHandler } from '../../transports/http/endpoint';
import { cleanups, lateListener, listenHttp, type LocalHttpServer } from '../helpers/http';
import {
  startAuthorizationServer,
  type AuthorizationServer,
  type AuthorizationServerOptions,
} from '../helpers/oauth-server';
import { protectedToolsDefinition } from '../helpers/protected-tools';

const REDIRECT_URI = 'http://127.0.0.1:53682/callback';

const DEFINITION = protectedToolsDefinition();

/** An `OAuthClientProvider` in memory whose "browser" follows the authorization URL and finishes the flow. */
class HeadlessProvider implements OAuthClientProvider {
  /** The transport whose `finishAuth` takes the code (set before each connection). */
  transport: StreamableHTTPClientTransport | undefined;
  /** Every authorization URL the SDK asked the user to visit. */
  readonly authorizationUrls: URL[] = [];
  private client: OAuthClientInformationMixed | undefined;
  private saved: OAuthTokens | undefined;
  private verifier = '';

  get redirectUrl(): string {
    return REDIRECT_URI;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'sdk-v1-interop',
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  clientInformation() {
    return this.client;
  }

  saveClientInformation(client: OAuthClientInformationMixed) {
    this.client = client;
  }

  tokens() {
    return this.saved;
  }

  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }

  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }

  codeVerifier() {
    return this.verifier;
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    this.authorizationUrls.push(url);
    const response = await fetch(url, { redirect: 'manual' });
    await response.body?.cancel();
    const code = new URL(response.headers.get('location')!).searchParams.get('code');
    if (code === null) throw new Error(`the authorization server answered ${response.headers.get('location')}`);
    await this.transport!.finishAuth(code);
  }
}

interface Setup {
  readonly as: AuthorizationServer;
  readonly url: string;
  /** The requests our MCP server received. */
  readonly mcp: LocalHttpServer;
  readonly provider: HeadlessProvider;
}

/**
 * Our protected server without `scopesSupported` or `requiredScopes`: the SDK asks for no scope at first,
 * and a call of `write` is what needs `mcp:write`.
 */
async function setup(authorizationServer: AuthorizationServerOptions = {}): Promise<Setup> {
  const as = await startAuthorizationServer(authorizationServer);
  cleanups.push(() => as.close());
  const server = new Server(DEFINITION);
  cleanups.push(() => server.close());
  let handler: McpHttpHandler | undefined;
  const mcp = await listenHttp(lateListener(() => handler));
  const url = `${mcp.origin}/mcp`;
  handler = createMcpHttpHandler(server, {
    path: '/mcp',
    auth: { resource: url, authorizationServers: [as.issuer], jwks: as.url('/jwks') },
  });
  cleanups.push(() => handler!.close());
  return { as, url, mcp, provider: new HeadlessProvider() };
}

/** An SDK client connected through `s.provider`; its first attempt is answered by the authorization flow. */
async function connectSdk(s: Setup): Promise<SdkClient> {
  const first = await attempt(s);
  if (!(first instanceof UnauthorizedError))
    throw new Error(`expected the first attempt to be refused, got ${String(first)}`);
  const connected = await attempt(s);
  if (connected instanceof Error) throw connected;
  return connected;
}

/** One connection attempt with a new transport: the connected client, or why it failed. */
async function attempt(s: Setup): Promise<SdkClient | Error> {
  const transport = new StreamableHTTPClientTransport(new URL(s.url), { authProvider: s.provider });
  s.provider.transport = transport;
  const client = new SdkClient({ name: 'sdk-v1-interop', version: '1.0.0' });
  cleanups.push(() => client.close());
  return client.connect(transport).then(
    () => client,
    (error: Error) => error,
  );
}

function textOf(result: Awaited<ReturnType<SdkClient['callTool']>>): string {
  return (result.content as { text: string }[])[0]!.text;
}

describe('the SDK v1 client with an OAuthClientProvider against our protected server', () => {
  it('has its first connection refused with UnauthorizedError (its flow ran meanwhile)', async () => {
    const s = await setup();
    expect(await attempt(s)).toBeInstanceOf(UnauthorizedError);
  });

  it('discovers our protected resource metadata at the URL of our challenge', async () => {
    const s = await setup();
    await connectSdk(s);
    expect(s.mcp.seen.map((request) => `${request.method} ${request.url}`)).toContain(
      'GET /.well-known/oauth-protected-resource/mcp',
    );
  });

  it('registers, then gets a token with PKCE for our resource', async () => {
    const s = await setup();
    await connectSdk(s);
    expect(
      s.as.events
        .filter((event) => ['register', 'authorize', 'token'].includes(event.endpoint))
        .map(({ endpoint, status, pkce, resource }) => ({ endpoint, status, pkce, resource })),
    ).toEqual([
      { endpoint: 'register', status: 201, pkce: undefined, resource: undefined },
      { endpoint: 'authorize', status: 302, pkce: undefined, resource: s.url },
      { endpoint: 'token', status: 200, pkce: 'matched', resource: s.url },
    ]);
  });

  it('lists our tools with its token', async () => {
    const s = await setup();
    const client = await connectSdk(s);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['whoami', 'write']);
  });

  it('calls a tool whose ctx.auth is the token’s subject', async () => {
    const s = await setup();
    const client = await connectSdk(s);
    const caller = JSON.parse(textOf(await client.callTool({ name: 'whoami', arguments: {} })));
    expect(caller).toMatchObject({ subject: 'user-1', issuer: s.as.issuer });
  });

  describe('a tool needing a scope its token lacks (403 insufficient_scope)', () => {
    it('fails the call with UnauthorizedError while the SDK re-authorizes', async () => {
      const s = await setup();
      const client = await connectSdk(s);
      const failure = await client.callTool({ name: 'write', arguments: {} }).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(UnauthorizedError);
    });

    it('makes the SDK ask for the scope our challenge names', async () => {
      const s = await setup();
      const client = await connectSdk(s);
      await client.callTool({ name: 'write', arguments: {} }).catch(() => undefined);
      // The first authorization asked for no scope (the server names none): logged as ''.
      expect(s.as.events.filter((event) => event.endpoint === 'authorize').map((event) => event.scope)).toEqual([
        '',
        'mcp:write',
      ]);
    });

    it('is called once the stepped-up token is in', async () => {
      const s = await setup();
      const client = await connectSdk(s);
      await client.callTool({ name: 'write', arguments: {} }).catch(() => undefined);
      expect(textOf(await client.callTool({ name: 'write', arguments: {} }))).toBe('written');
    });

    it('with a refresh token held, is refreshed instead of stepped up, and fails 403', async () => {
      // SDK 1.x's auth() refreshes whenever it holds a refresh token, without the challenge's scope; the
      // refreshed token has the old scopes, so the retried call is refused again and the SDK gives up.
      const s = await setup({ refreshTokens: 'always' });
      const client = await connectSdk(s);
      const failure = await client.callTool({ name: 'write', arguments: {} }).catch((error: unknown) => error);
      expect({
        failure,
        refreshes: s.as.events.filter((event) => event.grantType === 'refresh_token').length,
        authorizations: s.as.events.filter((event) => event.endpoint === 'authorize').length,
      }).toMatchObject({
        failure: { code: 403, message: expect.stringMatching(/after trying upscoping/) },
        refreshes: 1,
        authorizations: 1,
      });
    });
  });
});
