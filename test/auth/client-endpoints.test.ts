/**
 * The endpoints a peer names, against a hostile authorization server and resource metadata on 127.0.0.1 (issue
 * 23 items 1 and 9): every endpoint in the authorization server's metadata, the `resource_metadata` URL of a
 * challenge and the issuers the resource metadata names must be `https:` (or `http:` on this machine) without
 * credentials, or the client refuses before any interaction sees them (CVE-2025-6514: a `file:` authorization
 * endpoint handed to the browser opener). And the authorization code grant needs PKCE S256 advertised in the
 * metadata when there is metadata.
 */
import { describe, expect, it } from 'vitest';
import type * as oauth from 'oauth4webapi';
import {
  authorizationCodeGrant,
  headlessInteraction,
  type AuthorizationInteraction,
} from '../../lib/auth/client/authorization-code';
import { AuthHttp, AuthorizationError } from '../../lib/auth/client/http';
import { OAuthClient, type OAuthClientOptions } from '../../lib/auth/client/oauth-client';
import { loopbackInteraction } from '../../lib/auth/node/loopback-interaction';
import { startLoopbackRedirect } from '../../lib/auth/node/loopback-redirect';
import { cleanups, listenHttp } from '../helpers/http';
import { startAuthorizationServer, type AuthorizationServerOptions } from '../helpers/oauth-server';

const REDIRECT_URI = 'http://127.0.0.1:53682/callback';

/** An interaction that records where it is sent, then goes there as a browser would (the test AS approves). */
function recordingInteraction(): { interaction: AuthorizationInteraction; seen: URL[] } {
  const seen: URL[] = [];
  const headless = headlessInteraction(REDIRECT_URI);
  return {
    seen,
    interaction: {
      redirectUri: REDIRECT_URI,
      authorize: (url) => {
        seen.push(url);
        return headless.authorize(url);
      },
    },
  };
}

/** An MCP endpoint that answers 401 and whose resource metadata names `authorizationServers`. */
async function resourceNaming(authorizationServers: (origin: string) => unknown[]): Promise<string> {
  let url = '';
  const { origin } = await listenHttp((request, response) => {
    if (request.url === '/.well-known/oauth-protected-resource/mcp') {
      const metadata = { resource: url, authorization_servers: authorizationServers(origin) };
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(metadata));
      return;
    }
    response.writeHead(401, { 'www-authenticate': 'Bearer' }).end();
  });
  url = `${origin}/mcp`;
  return url;
}

/** The client's answer to a 401 from `url` carrying `challenge`: undefined when it got a token, else the error. */
async function authorizing(url: string, options: OAuthClientOptions, challenge = 'Bearer'): Promise<unknown> {
  const client = new OAuthClient(url, options);
  try {
    await client.refused({ status: 401, wwwAuthenticate: challenge, url: new URL(url), sentAuthorization: undefined });
    return client.currentTokens === undefined ? new Error('no token') : undefined;
  } catch (error) {
    return error;
  }
}

/** An authorization server started with `options`, closed after the test, and a resource it protects. */
async function authorizationServerWith(options: AuthorizationServerOptions) {
  const as = await startAuthorizationServer(options);
  cleanups.push(() => as.close());
  const url = await resourceNaming(() => [as.issuer]);
  return { as, url };
}

const ENDPOINT_FIELDS = [
  'authorization_endpoint',
  'token_endpoint',
  'registration_endpoint',
  'jwks_uri',
  'revocation_endpoint',
  'introspection_endpoint',
];

/** A hostile value, why it is refused, and a part of it that must not be echoed. */
const HOSTILE: readonly (readonly [string, RegExp, string])[] = [
  ['file:///C:/Windows/System32/calc.exe', /has the scheme "file:"/, 'calc.exe'],
  ['javascript:alert(document.cookie)', /has the scheme "javascript:"/, 'alert'],
  ['data:text/html,<script>alert(1)</script>', /has the scheme "data:"/, 'script'],
  ['http://example.com/endpoint', /is plain http: to a host other than this machine/, 'example.com'],
  ['https://user:hunter2@as.example/endpoint', /has credentials/, 'hunter2'],
];

describe('the endpoints in the authorization server metadata', () => {
  it('an honest server: the interaction goes to its authorization endpoint and a token comes back', async () => {
    const { as, url } = await authorizationServerWith({});
    const { interaction, seen } = recordingInteraction();
    expect(await authorizing(url, { interaction })).toBeUndefined();
    expect(seen.map((at) => `${at.origin}${at.pathname}`)).toEqual([as.url('/authorize')]);
  });

  describe.each(ENDPOINT_FIELDS)('%s', (field) => {
    it.each(HOSTILE)('refuses %s before any interaction or request', async (value, why, secret) => {
      const { as, url } = await authorizationServerWith({ metadataOverrides: { [field]: value } });
      const { interaction, seen } = recordingInteraction();
      const error = await authorizing(url, { interaction });
      expect(error).toBeInstanceOf(AuthorizationError);
      expect((error as Error).message).toContain(`"${field}" in the authorization server metadata at ${as.origin}`);
      expect((error as Error).message).toMatch(why);
      expect((error as Error).message).not.toContain(secret);
      expect(seen).toEqual([]);
      expect(as.events.map((event) => event.endpoint)).toEqual(['metadata']);
    });
  });

  it('names the field without echoing a huge value', async () => {
    const { url } = await authorizationServerWith({
      metadataOverrides: { authorization_endpoint: `${'x'.repeat(200_000)}:payload` },
    });
    const { interaction, seen } = recordingInteraction();
    const error = (await authorizing(url, { interaction })) as Error;
    expect(error.message).toMatch(/"authorization_endpoint" .* has the scheme "x{20}…"/);
    expect(error.message.length).toBeLessThan(400);
    expect(seen).toEqual([]);
  });

  it('refuses an endpoint that is not a string', async () => {
    const { url } = await authorizationServerWith({ metadataOverrides: { token_endpoint: { href: 'https://x' } } });
    const error = (await authorizing(url, { interaction: recordingInteraction().interaction })) as Error;
    expect(error.message).toMatch(/"token_endpoint" in .* is not a string: refusing to authorize/);
  });

  it('refuses a hostile endpoint for a machine grant too', async () => {
    const { as, url } = await authorizationServerWith({
      clients: [{ clientId: 'robot', clientSecret: 'robot-secret' }],
      metadataOverrides: { token_endpoint: 'http://example.com/token' },
    });
    const grant = { type: 'client_credentials', clientId: 'robot', clientSecret: 'robot-secret' } as const;
    const error = (await authorizing(url, { grant })) as Error;
    expect(error.message).toMatch(/"token_endpoint" .* is plain http:/);
    expect(as.events.map((event) => event.endpoint)).toEqual(['metadata']);
  });
});

describe('the URLs the protected resource names', () => {
  it.each(HOSTILE)('refuses an authorization server %s', async (value, why, secret) => {
    const url = await resourceNaming(() => [value]);
    const { interaction, seen } = recordingInteraction();
    const error = await authorizing(url, { interaction });
    expect(error).toBeInstanceOf(AuthorizationError);
    expect((error as Error).message).toContain('"authorization_servers" in the protected resource metadata at');
    expect((error as Error).message).toMatch(why);
    expect((error as Error).message).not.toContain(secret);
    expect(seen).toEqual([]);
  });

  it('refuses a hostile authorization server even when it is not the first named', async () => {
    const as = await startAuthorizationServer();
    cleanups.push(() => as.close());
    const url = await resourceNaming(() => [as.issuer, 'file:///etc/passwd']);
    const error = (await authorizing(url, { interaction: recordingInteraction().interaction })) as Error;
    expect(error.message).toMatch(/"authorization_servers" .* has the scheme "file:"/);
    expect(as.events).toEqual([]);
  });

  it.each(HOSTILE)('refuses a challenge whose resource_metadata is %s', async (value, why, secret) => {
    const url = await resourceNaming(() => ['http://127.0.0.1:1']);
    const error = await authorizing(
      url,
      { interaction: recordingInteraction().interaction },
      `Bearer resource_metadata="${value}"`,
    );
    expect(error).toBeInstanceOf(AuthorizationError);
    expect((error as Error).message).toContain(`"resource_metadata" in the WWW-Authenticate challenge of ${url}`);
    expect((error as Error).message).toMatch(why);
    expect((error as Error).message).not.toContain(secret);
  });

  it('follows a resource_metadata URL on another origin (RFC 9728 allows it): only its scheme is checked', async () => {
    const as = await startAuthorizationServer();
    cleanups.push(() => as.close());
    let resource = '';
    const elsewhere = await listenHttp((_request, response) => {
      const metadata = { resource, authorization_servers: [as.issuer] };
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(metadata));
    });
    const { origin } = await listenHttp((_request, response) => response.writeHead(404).end());
    resource = `${origin}/mcp`;
    const { interaction, seen } = recordingInteraction();
    const challenge = `Bearer resource_metadata="${elsewhere.origin}/prm"`;
    expect(await authorizing(resource, { interaction }, challenge)).toBeUndefined();
    expect(elsewhere.seen.map((request) => request.url)).toEqual(['/prm']);
    expect(seen).toHaveLength(1);
  });
});

describe('PKCE S256 in the authorization server metadata', () => {
  it.each([
    ['is absent', undefined],
    ['is a string, not a list', 'S256'],
    ['lists only plain', ['plain']],
  ])('refuses to authorize when code_challenge_methods_supported %s', async (_case, methods) => {
    const { as, url } = await authorizationServerWith({
      metadataOverrides: { code_challenge_methods_supported: methods },
    });
    const { interaction, seen } = recordingInteraction();
    const error = await authorizing(url, { interaction });
    expect(error).toBeInstanceOf(AuthorizationError);
    expect((error as Error).message).toBe(
      `The authorization server ${as.issuer} does not advertise PKCE with S256 support (code_challenge_methods_supported): refusing to authorize`,
    );
    expect(seen).toEqual([]);
  });

  it('goes on with PKCE when there is no metadata at all (the 2025-03-26 default endpoints)', async () => {
    const { as, url } = await authorizationServerWith({ metadataAt: [] });
    const { interaction, seen } = recordingInteraction();
    expect(await authorizing(url, { interaction })).toBeUndefined();
    expect(seen[0]?.searchParams.get('code_challenge_method')).toBe('S256');
    expect(as.events.find((event) => event.endpoint === 'token')?.pkce).toBe('matched');
  });

  it('does not concern the machine grants (no authorization endpoint, no PKCE)', async () => {
    const { url } = await authorizationServerWith({
      clients: [{ clientId: 'robot', clientSecret: 'robot-secret' }],
      metadataOverrides: { code_challenge_methods_supported: undefined },
    });
    const grant = { type: 'client_credentials', clientId: 'robot', clientSecret: 'robot-secret' } as const;
    expect(await authorizing(url, { grant })).toBeUndefined();
  });
});

describe('the authorization URL as it leaves for the user', () => {
  it('is checked again by the grant, whatever built the metadata', async () => {
    const as: oauth.AuthorizationServer = {
      issuer: 'https://as.example',
      authorization_endpoint: 'file:///C:/Windows/System32/calc.exe',
      token_endpoint: 'https://as.example/token',
      code_challenge_methods_supported: ['S256'],
    };
    const { interaction, seen } = recordingInteraction();
    const client = { issuer: as.issuer, clientId: 'c', tokenEndpointAuthMethod: 'none' };
    const grant = authorizationCodeGrant(
      { as, client, interaction, scopes: [], resource: 'https://m.example' },
      new AuthHttp(),
    );
    await expect(grant).rejects.toThrow(/"authorization_endpoint" .* has the scheme "file:"/);
    expect(seen).toEqual([]);
  });

  it('is never shown by the command line interaction unless https: (or http: on this machine)', async () => {
    const redirect = await startLoopbackRedirect({ port: 0, timeoutMs: 2000 });
    cleanups.push(() => redirect.close());
    const shown: URL[] = [];
    const interaction = loopbackInteraction(redirect, (url) => shown.push(url));
    for (const hostile of ['file:///C:/Windows/System32/calc.exe', 'javascript:alert(1)', 'http://example.com/a']) {
      await expect(interaction.authorize(new URL(hostile))).rejects.toBeInstanceOf(AuthorizationError);
    }
    expect(shown).toEqual([]);
  });
});
