/**
 * The tests' authorization server (`test/helpers/oauth-server.ts`), driven with `oauth4webapi` the way an
 * OAuth client drives a real one: discovery, registration, the authorization code flow with PKCE, refresh,
 * client credentials, introspection, client authentication, and the variations the auth tests build on.
 */
import {
  createRemoteJWKSet,
  decodeProtectedHeader,
  exportJWK,
  generateKeyPair,
  jwtVerify,
  SignJWT,
  type JWTPayload,
} from 'jose';
import * as oauth from 'oauth4webapi';
import { describe, expect, it } from 'vitest';
import { cleanups } from '../helpers/cleanups';
import {
  JWT_BEARER_GRANT,
  startAuthorizationServer,
  type AuthorizationServer,
  type AuthorizationServerOptions,
} from '../helpers/oauth-server';

const insecure = { [oauth.allowInsecureRequests]: true } as const;
const REDIRECT_URI = 'http://127.0.0.1:53682/callback';
const RESOURCE = 'http://127.0.0.1:9999/mcp';

async function start(options: AuthorizationServerOptions = {}): Promise<AuthorizationServer> {
  const server = await startAuthorizationServer(options);
  cleanups.push(() => server.close());
  return server;
}

async function discover(
  server: AuthorizationServer,
  algorithm: 'oauth2' | 'oidc' = 'oauth2',
): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(server.issuer);
  return oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm, ...insecure }));
}

/** A server with one public client (auth method none) registered for REDIRECT_URI. */
async function startWithPublicClient(options: AuthorizationServerOptions = {}) {
  const server = await start({ clients: [{ clientId: 'public-app', redirectUris: [REDIRECT_URI] }], ...options });
  return { server, as: await discover(server), client: { client_id: 'public-app' } satisfies oauth.Client };
}

interface AuthorizeRequest {
  scope?: string;
  resource?: string;
  redirectUri?: string;
  codeChallengeMethod?: string;
  omitChallenge?: boolean;
}

/** Sends the browser to /authorize and returns where it is redirected, with the PKCE verifier and state used. */
async function authorize(as: oauth.AuthorizationServer, client: oauth.Client, request: AuthorizeRequest = {}) {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint!);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', client.client_id);
  url.searchParams.set('redirect_uri', request.redirectUri ?? REDIRECT_URI);
  url.searchParams.set('state', state);
  if (!request.omitChallenge) {
    url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
    url.searchParams.set('code_challenge_method', request.codeChallengeMethod ?? 'S256');
  }
  if (request.scope !== undefined) url.searchParams.set('scope', request.scope);
  if (request.resource !== undefined) url.searchParams.set('resource', request.resource);
  const response = await fetch(url, { redirect: 'manual' });
  const location = response.headers.get('location');
  return { status: response.status, location: location === null ? undefined : new URL(location), verifier, state };
}

interface CodeFlow extends AuthorizeRequest {
  clientAuth?: oauth.ClientAuth;
  tokenResource?: string | null;
  verifier?: string;
}

/** The whole authorization code flow, up to the token response (oauth4webapi checks iss and state). */
async function codeFlow(as: oauth.AuthorizationServer, client: oauth.Client, flow: CodeFlow = {}) {
  const { location, verifier, state } = await authorize(as, client, flow);
  const parameters = oauth.validateAuthResponse(as, client, location!, state);
  const tokenResource = flow.tokenResource === undefined ? flow.resource : (flow.tokenResource ?? undefined);
  const response = await oauth.authorizationCodeGrantRequest(
    as,
    client,
    flow.clientAuth ?? oauth.None(),
    parameters,
    flow.redirectUri ?? REDIRECT_URI,
    flow.verifier ?? verifier,
    {
      ...insecure,
      ...(tokenResource !== undefined ? { additionalParameters: { resource: tokenResource } } : {}),
    },
  );
  return { parameters, tokens: await oauth.processAuthorizationCodeResponse(as, client, response) };
}

/**
 * The OAuth `error` a promise rejects with: oauth4webapi's ResponseBodyError / AuthorizationResponseError
 * carry it; a 401 with a `WWW-Authenticate: Basic` challenge (RFC 6749 §5.2) comes as a challenge error whose
 * response still holds the JSON body.
 */
async function oauthErrorOf(promise: Promise<unknown>): Promise<string> {
  const failure = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(failure, 'expected an OAuth error').toBeDefined();
  if (failure instanceof oauth.WWWAuthenticateChallengeError)
    return ((await failure.response.json()) as { error: string }).error;
  return (failure as { error?: string }).error ?? String(failure);
}

async function verifyAccessToken(server: AuthorizationServer, token: string, audience: string): Promise<JWTPayload> {
  const { payload } = await jwtVerify(token, createRemoteJWKSet(new URL(server.url('/jwks'))), {
    issuer: server.issuer,
    audience,
    typ: 'at+jwt',
  });
  return payload;
}

async function postForm(url: string, form: Record<string, string>, headers: Record<string, string> = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('metadata discovery', () => {
  it('serves RFC 8414 metadata whose issuer is the server it describes', async () => {
    const server = await start();
    expect((await discover(server)).issuer).toBe(server.issuer);
  });

  it('serves a path issuer at the path-inserted RFC 8414 location', async () => {
    const server = await start({ issuerPath: '/tenant1' });
    expect((await discover(server, 'oauth2')).token_endpoint).toBe(`${server.origin}/tenant1/token`);
  });

  it('serves a path issuer at the path-appended OpenID location', async () => {
    const server = await start({ issuerPath: '/tenant1', metadataAt: ['openid-configuration'] });
    expect((await discover(server, 'oidc')).issuer).toBe(`${server.origin}/tenant1`);
  });

  it('serves a path issuer at the path-inserted OpenID location', async () => {
    const server = await start({ issuerPath: '/tenant1', metadataAt: ['openid-configuration'] });
    const response = await fetch(`${server.origin}/.well-known/openid-configuration/tenant1`);
    expect(((await response.json()) as { issuer: string }).issuer).toBe(server.issuer);
  });

  it('serves only the locations asked for', async () => {
    const server = await start({ issuerPath: '/tenant1', metadataAt: ['openid-configuration-appended'] });
    expect((await fetch(`${server.origin}/.well-known/oauth-authorization-server/tenant1`)).status).toBe(404);
  });

  it('serves no metadata at all when told, as the 2025-03-26 fallback case needs', async () => {
    const server = await start({ metadataAt: [] });
    const statuses = await Promise.all(
      ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration'].map(
        async (path) => (await fetch(`${server.origin}${path}`)).status,
      ),
    );
    expect(statuses).toEqual([404, 404]);
  });

  it('can advertise a mismatching issuer, which a client must refuse', async () => {
    const server = await start({ metadataIssuer: 'http://127.0.0.1:1/elsewhere' });
    expect(await oauthErrorOf(discover(server))).toMatch(/issuer/);
  });

  it('advertises scopes_supported only when it is configured', async () => {
    const [without, withScopes] = await Promise.all([start(), start({ scopesSupported: ['mcp:read'] })]);
    expect([without.metadata.scopes_supported, withScopes.metadata.scopes_supported]).toEqual([
      undefined,
      ['mcp:read'],
    ]);
  });

  it('advertises the token endpoint auth methods it is configured with', async () => {
    const server = await start({ tokenEndpointAuthMethods: ['client_secret_post'] });
    expect((await discover(server)).token_endpoint_auth_methods_supported).toEqual(['client_secret_post']);
  });

  it('advertises PKCE S256 and the iss response parameter', async () => {
    const as = await discover(await start());
    expect([as.code_challenge_methods_supported, as.authorization_response_iss_parameter_supported]).toEqual([
      ['S256'],
      true,
    ]);
  });
});

describe('dynamic client registration (RFC 7591)', () => {
  async function register(as: oauth.AuthorizationServer, metadata: Partial<oauth.OmitSymbolProperties<oauth.Client>>) {
    return oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(as, { redirect_uris: [REDIRECT_URI], ...metadata }, insecure),
    );
  }

  it('registers a public client without a secret', async () => {
    const registered = await register(await discover(await start()), { token_endpoint_auth_method: 'none' });
    expect([typeof registered.client_id, registered.client_secret]).toEqual(['string', undefined]);
  });

  it('gives a client that names no method client_secret_basic and a secret (the RFC 7591 default)', async () => {
    const registered = await register(await discover(await start()), {});
    expect([registered.token_endpoint_auth_method, typeof registered.client_secret]).toEqual([
      'client_secret_basic',
      'string',
    ]);
  });

  it('refuses a token endpoint auth method it does not support', async () => {
    const as = await discover(await start({ tokenEndpointAuthMethods: ['none'] }));
    expect(await oauthErrorOf(register(as, { token_endpoint_auth_method: 'client_secret_post' }))).toBe(
      'invalid_client_metadata',
    );
  });

  it('refuses a client without redirect URIs for the authorization code grant', async () => {
    const as = await discover(await start());
    expect(await oauthErrorOf(register(as, { redirect_uris: [] }))).toBe('invalid_redirect_uri');
  });

  it('can be turned off: no registration endpoint is advertised', async () => {
    expect((await discover(await start({ dynamicRegistration: false }))).registration_endpoint).toBeUndefined();
  });

  it('lets a registered client complete the code flow', async () => {
    const as = await discover(await start());
    const registered = await register(as, { token_endpoint_auth_method: 'none' });
    const { tokens } = await codeFlow(as, { client_id: registered.client_id });
    expect(typeof tokens.access_token).toBe('string');
  });
});

describe('the authorization code flow', () => {
  it('issues an at+jwt access token, verifiable with its JWKS, for the resource asked for', async () => {
    const { server, as, client } = await startWithPublicClient();
    const { tokens } = await codeFlow(as, client, { resource: RESOURCE });
    const payload = await verifyAccessToken(server, tokens.access_token, RESOURCE);
    expect(payload).toMatchObject({ sub: 'user-1', client_id: 'public-app' });
  });

  it('writes the granted scope in the token and the response', async () => {
    const { server, as, client } = await startWithPublicClient({ scopesSupported: ['mcp:read', 'mcp:write'] });
    const { tokens } = await codeFlow(as, client, { resource: RESOURCE, scope: 'mcp:read' });
    expect([tokens.scope, (await verifyAccessToken(server, tokens.access_token, RESOURCE)).scope]).toEqual([
      'mcp:read',
      'mcp:read',
    ]);
  });

  it('gives an access token the configured lifetime', async () => {
    const { server, as, client } = await startWithPublicClient({ accessTokenTtlSec: 120 });
    const { tokens } = await codeFlow(as, client, { resource: RESOURCE });
    const payload = await verifyAccessToken(server, tokens.access_token, RESOURCE);
    expect([tokens.expires_in, payload.exp! - payload.iat!]).toEqual([120, 120]);
  });

  it('signs with RS256 when told', async () => {
    const { as, client } = await startWithPublicClient({ signingAlgorithm: 'RS256' });
    const { tokens } = await codeFlow(as, client);
    expect(decodeProtectedHeader(tokens.access_token).alg).toBe('RS256');
  });

  it('refuses a code verifier that does not match the challenge', async () => {
    const { as, client } = await startWithPublicClient();
    expect(await oauthErrorOf(codeFlow(as, client, { verifier: oauth.generateRandomCodeVerifier() }))).toBe(
      'invalid_grant',
    );
  });

  it('refuses a code used twice', async () => {
    const { as, client } = await startWithPublicClient();
    const { location, verifier, state } = await authorize(as, client);
    const parameters = oauth.validateAuthResponse(as, client, location!, state);
    const redeem = async () =>
      oauth.processAuthorizationCodeResponse(
        as,
        client,
        await oauth.authorizationCodeGrantRequest(
          as,
          client,
          oauth.None(),
          parameters,
          REDIRECT_URI,
          verifier,
          insecure,
        ),
      );
    await redeem();
    expect(await oauthErrorOf(redeem())).toBe('invalid_grant');
  });

  it('revokes the tokens of a code that is replayed (RFC 6749 §4.1.2)', async () => {
    const { server, as, client } = await startWithPublicClient({
      clients: [
        { clientId: 'public-app', redirectUris: [REDIRECT_URI] },
        { clientId: 'rs', clientSecret: 'rs-secret' },
      ],
    });
    const { location, verifier, state } = await authorize(as, client);
    const parameters = oauth.validateAuthResponse(as, client, location!, state);
    const redeem = async () =>
      oauth.processAuthorizationCodeResponse(
        as,
        client,
        await oauth.authorizationCodeGrantRequest(
          as,
          client,
          oauth.None(),
          parameters,
          REDIRECT_URI,
          verifier,
          insecure,
        ),
      );
    const first = await redeem();
    await oauthErrorOf(redeem());
    const { body } = await postForm(
      server.url('/introspect'),
      { token: first.access_token },
      { authorization: `Basic ${btoa('rs:rs-secret')}` },
    );
    expect(body.active).toBe(false);
  });

  it('refuses a code past its lifetime', async () => {
    let clock = 1_700_000_000_000;
    const { as, client } = await startWithPublicClient({ now: () => clock, codeTtlSec: 30 });
    const { location, verifier, state } = await authorize(as, client);
    const parameters = oauth.validateAuthResponse(as, client, location!, state);
    clock += 31_000;
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      oauth.None(),
      parameters,
      REDIRECT_URI,
      verifier,
      insecure,
    );
    expect(await oauthErrorOf(oauth.processAuthorizationCodeResponse(as, client, response))).toBe('invalid_grant');
  });

  it('refuses a token request whose resource differs from the authorization request', async () => {
    const { as, client } = await startWithPublicClient();
    expect(
      await oauthErrorOf(codeFlow(as, client, { resource: RESOURCE, tokenResource: 'http://127.0.0.1:9999/other' })),
    ).toBe('invalid_target');
  });

  it('refuses a token request that drops the resource of the authorization request', async () => {
    const { as, client } = await startWithPublicClient();
    expect(await oauthErrorOf(codeFlow(as, client, { resource: RESOURCE, tokenResource: null }))).toBe(
      'invalid_target',
    );
  });

  it('redirects invalid_request when there is no code challenge', async () => {
    const { as, client } = await startWithPublicClient();
    const { location } = await authorize(as, client, { omitChallenge: true });
    expect(location!.searchParams.get('error')).toBe('invalid_request');
  });

  it('redirects invalid_request for the plain challenge method', async () => {
    const { as, client } = await startWithPublicClient();
    const { location } = await authorize(as, client, { codeChallengeMethod: 'plain' });
    expect(location!.searchParams.get('error')).toBe('invalid_request');
  });

  it('redirects invalid_scope for a scope beyond scopes_supported', async () => {
    const { as, client } = await startWithPublicClient({ scopesSupported: ['mcp:read'] });
    const { location } = await authorize(as, client, { scope: 'mcp:read mcp:admin' });
    expect(location!.searchParams.get('error')).toBe('invalid_scope');
  });

  it('redirects access_denied when told to deny', async () => {
    const { as, client } = await startWithPublicClient({ denyAuthorization: true });
    expect(await oauthErrorOf(codeFlow(as, client))).toBe('access_denied');
  });

  it('answers an unregistered redirect URI itself instead of redirecting to it', async () => {
    const { as, client } = await startWithPublicClient();
    const { status, location } = await authorize(as, client, { redirectUri: 'http://evil.example/callback' });
    expect([status, location]).toEqual([400, undefined]);
  });

  it('accepts a registered loopback redirect URI on another port (RFC 8252)', async () => {
    const { as, client } = await startWithPublicClient();
    const { tokens } = await codeFlow(as, client, { redirectUri: 'http://127.0.0.1:41234/callback' });
    expect(typeof tokens.access_token).toBe('string');
  });
});

describe('the iss authorization response parameter (RFC 9207)', () => {
  async function issOf(options: AuthorizationServerOptions) {
    const { as, client } = await startWithPublicClient(options);
    const { location, state } = await authorize(as, client);
    return { as, client, location: location!, state };
  }

  it('sends the issuer by default', async () => {
    const { as, location } = await issOf({});
    expect(location.searchParams.get('iss')).toBe(as.issuer);
  });

  it('can omit it while advertising it, which a client must refuse', async () => {
    const { as, client, location, state } = await issOf({ issParameter: 'omitted' });
    expect(() => oauth.validateAuthResponse(as, client, location, state)).toThrow(/iss/);
  });

  it('can omit it without advertising it, which a client accepts', async () => {
    const { as, client, location, state } = await issOf({ issParameter: 'omitted', advertiseIssParameter: false });
    expect(oauth.validateAuthResponse(as, client, location, state).get('code')).toBeTruthy();
  });

  it('can send another issuer, which a client must refuse', async () => {
    const { as, client, location, state } = await issOf({ issParameter: 'wrong' });
    expect(() => oauth.validateAuthResponse(as, client, location, state)).toThrow(/iss/);
  });

  it('can send the issuer with a trailing slash, which a client must not normalise away', async () => {
    const { as, client, location, state } = await issOf({ issParameter: 'trailing-slash' });
    expect(() => oauth.validateAuthResponse(as, client, location, state)).toThrow(/iss/);
  });
});

describe('refresh tokens', () => {
  it('issues none unless offline_access was granted', async () => {
    const { as, client } = await startWithPublicClient();
    expect((await codeFlow(as, client, { scope: 'mcp:read' })).tokens.refresh_token).toBeUndefined();
  });

  it('issues one when offline_access was granted', async () => {
    const { as, client } = await startWithPublicClient();
    expect(typeof (await codeFlow(as, client, { scope: 'offline_access' })).tokens.refresh_token).toBe('string');
  });

  it('issues one every time when told to', async () => {
    const { as, client } = await startWithPublicClient({ refreshTokens: 'always' });
    expect(typeof (await codeFlow(as, client)).tokens.refresh_token).toBe('string');
  });

  async function refresh(as: oauth.AuthorizationServer, client: oauth.Client, token: string) {
    return oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), token, insecure),
    );
  }

  it('rotates: a refresh answers a new refresh token and a fresh access token for the same resource', async () => {
    const { server, as, client } = await startWithPublicClient();
    const { tokens } = await codeFlow(as, client, { scope: 'offline_access', resource: RESOURCE });
    const refreshed = await refresh(as, client, tokens.refresh_token!);
    await verifyAccessToken(server, refreshed.access_token, RESOURCE);
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
  });

  it('refuses a refresh token already used once', async () => {
    const { as, client } = await startWithPublicClient();
    const { tokens } = await codeFlow(as, client, { scope: 'offline_access' });
    await refresh(as, client, tokens.refresh_token!);
    expect(await oauthErrorOf(refresh(as, client, tokens.refresh_token!))).toBe('invalid_grant');
  });

  it('narrows the scope on refresh when asked', async () => {
    const { as, client } = await startWithPublicClient();
    const { tokens } = await codeFlow(as, client, { scope: 'offline_access mcp:read mcp:write' });
    const response = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, {
      ...insecure,
      additionalParameters: { scope: 'offline_access mcp:read' },
    });
    expect((await oauth.processRefreshTokenResponse(as, client, response)).scope).toBe('offline_access mcp:read');
  });

  it('refuses a refresh that asks for more scope than was granted', async () => {
    const { as, client } = await startWithPublicClient();
    const { tokens } = await codeFlow(as, client, { scope: 'offline_access mcp:read' });
    const response = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, {
      ...insecure,
      additionalParameters: { scope: 'mcp:admin' },
    });
    expect(await oauthErrorOf(oauth.processRefreshTokenResponse(as, client, response))).toBe('invalid_scope');
  });

  it('keeps a refresh token working when rotation is off', async () => {
    const { as, client } = await startWithPublicClient({ rotateRefreshTokens: false });
    const { tokens } = await codeFlow(as, client, { scope: 'offline_access' });
    await refresh(as, client, tokens.refresh_token!);
    expect(typeof (await refresh(as, client, tokens.refresh_token!)).access_token).toBe('string');
  });
});

describe('token endpoint client authentication', () => {
  const SECRET = 's3cret:with/odd chars+';

  async function secretClientFlow(
    serverMethods: AuthorizationServerOptions['tokenEndpointAuthMethods'],
    registeredAs: 'client_secret_basic' | 'client_secret_post',
    clientAuth: oauth.ClientAuth,
  ) {
    const server = await start({
      tokenEndpointAuthMethods: serverMethods,
      clients: [
        { clientId: 'confidential-app', clientSecret: SECRET, redirectUris: [REDIRECT_URI], authMethod: registeredAs },
      ],
    });
    const as = await discover(server);
    return { server, result: codeFlow(as, { client_id: 'confidential-app' }, { clientAuth }) };
  }

  it('accepts client_secret_basic from a client registered for it', async () => {
    const { server, result } = await secretClientFlow(
      undefined,
      'client_secret_basic',
      oauth.ClientSecretBasic(SECRET),
    );
    await result;
    expect(server.events.find((event) => event.endpoint === 'token')).toMatchObject({
      authMethod: 'client_secret_basic',
      status: 200,
    });
  });

  it('accepts client_secret_post from a client registered for it', async () => {
    const { server, result } = await secretClientFlow(undefined, 'client_secret_post', oauth.ClientSecretPost(SECRET));
    await result;
    expect(server.events.find((event) => event.endpoint === 'token')).toMatchObject({
      authMethod: 'client_secret_post',
      status: 200,
    });
  });

  it('refuses client_secret_post from a client registered for client_secret_basic', async () => {
    const { result } = await secretClientFlow(undefined, 'client_secret_basic', oauth.ClientSecretPost(SECRET));
    expect(await oauthErrorOf(result)).toBe('invalid_client');
  });

  it('refuses a method the server does not accept', async () => {
    const { result } = await secretClientFlow(
      ['client_secret_basic'],
      'client_secret_post',
      oauth.ClientSecretPost(SECRET),
    );
    expect(await oauthErrorOf(result)).toBe('invalid_client');
  });

  it('refuses a wrong secret', async () => {
    const { result } = await secretClientFlow(undefined, 'client_secret_basic', oauth.ClientSecretBasic('wrong'));
    expect(await oauthErrorOf(result)).toBe('invalid_client');
  });

  it('challenges a client that failed HTTP Basic authentication with WWW-Authenticate (RFC 6749 §5.2)', async () => {
    const { result } = await secretClientFlow(undefined, 'client_secret_basic', oauth.ClientSecretBasic('wrong'));
    const failure = await result.catch((caught: unknown) => caught);
    expect((failure as oauth.WWWAuthenticateChallengeError).cause?.[0]?.scheme).toBe('basic');
  });

  it('refuses a confidential client that sends no credentials', async () => {
    const { result } = await secretClientFlow(undefined, 'client_secret_basic', oauth.None());
    expect(await oauthErrorOf(result)).toBe('invalid_client');
  });

  it('accepts private_key_jwt signed with a registered key', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const server = await start({
      tokenEndpointAuthMethods: ['private_key_jwt'],
      clients: [
        {
          clientId: 'jwt-app',
          authMethod: 'private_key_jwt',
          jwks: { keys: [{ ...(await exportJWK(publicKey)), alg: 'ES256' }] },
          redirectUris: [REDIRECT_URI],
        },
      ],
    });
    const { tokens } = await codeFlow(
      await discover(server),
      { client_id: 'jwt-app' },
      { clientAuth: oauth.PrivateKeyJwt(privateKey) },
    );
    expect(typeof tokens.access_token).toBe('string');
  });

  it('refuses private_key_jwt signed with another key', async () => {
    const registered = await generateKeyPair('ES256', { extractable: true });
    const other = await generateKeyPair('ES256');
    const server = await start({
      tokenEndpointAuthMethods: ['private_key_jwt'],
      clients: [
        {
          clientId: 'jwt-app',
          authMethod: 'private_key_jwt',
          jwks: { keys: [{ ...(await exportJWK(registered.publicKey)), alg: 'ES256' }] },
          redirectUris: [REDIRECT_URI],
        },
      ],
    });
    expect(
      await oauthErrorOf(
        codeFlow(
          await discover(server),
          { client_id: 'jwt-app' },
          { clientAuth: oauth.PrivateKeyJwt(other.privateKey) },
        ),
      ),
    ).toBe('invalid_client');
  });
});

describe('client credentials and jwt-bearer grants', () => {
  const machine = { clientId: 'machine', clientSecret: 'machine-secret', authMethod: 'client_secret_post' as const };

  async function clientCredentials(server: AuthorizationServer, clientId: string, auth: oauth.ClientAuth) {
    const as = await discover(server);
    const client = { client_id: clientId };
    return oauth.processClientCredentialsResponse(
      as,
      client,
      await oauth.clientCredentialsGrantRequest(as, client, auth, { resource: RESOURCE }, insecure),
    );
  }

  it('gives a confidential client a token for itself and the resource', async () => {
    const server = await start({ clients: [machine] });
    const tokens = await clientCredentials(server, 'machine', oauth.ClientSecretPost('machine-secret'));
    expect(await verifyAccessToken(server, tokens.access_token, RESOURCE)).toMatchObject({
      sub: 'machine',
      client_id: 'machine',
    });
  });

  it('refuses a public client', async () => {
    const server = await start({ clients: [{ clientId: 'public-app' }] });
    expect(await oauthErrorOf(clientCredentials(server, 'public-app', oauth.None()))).toBe('unauthorized_client');
  });

  async function jwtBearer(server: AuthorizationServer, assertion: string) {
    const as = await discover(server);
    const client = { client_id: 'machine' };
    const response = await oauth.genericTokenEndpointRequest(
      as,
      client,
      oauth.ClientSecretPost('machine-secret'),
      JWT_BEARER_GRANT,
      { assertion, resource: RESOURCE },
      insecure,
    );
    return oauth.processGenericTokenEndpointResponse(as, client, response);
  }

  async function workloadIdentity() {
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const issuer = 'https://workload-identity.example';
    return { issuer, privateKey, jwks: { keys: [{ ...(await exportJWK(publicKey)), alg: 'ES256' }] } };
  }

  it('exchanges an assertion from a trusted issuer for a token of its subject', async () => {
    const identity = await workloadIdentity();
    const server = await start({
      clients: [machine],
      grantTypes: [JWT_BEARER_GRANT],
      trustedAssertionIssuers: { [identity.issuer]: identity.jwks },
    });
    const assertion = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256' })
      .setIssuer(identity.issuer)
      .setSubject('workload-7')
      .setAudience(server.issuer)
      .setExpirationTime('5m')
      .sign(identity.privateKey);
    const tokens = await jwtBearer(server, assertion);
    expect((await verifyAccessToken(server, tokens.access_token, RESOURCE)).sub).toBe('workload-7');
  });

  it('refuses an assertion from an issuer it does not trust', async () => {
    const identity = await workloadIdentity();
    const server = await start({ clients: [machine], grantTypes: [JWT_BEARER_GRANT] });
    const assertion = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256' })
      .setIssuer(identity.issuer)
      .setSubject('workload-7')
      .setAudience(server.issuer)
      .setExpirationTime('5m')
      .sign(identity.privateKey);
    expect(await oauthErrorOf(jwtBearer(server, assertion))).toBe('invalid_grant');
  });

  it('refuses a grant type it was not configured with', async () => {
    const server = await start({ clients: [machine], grantTypes: ['authorization_code'] });
    expect(await oauthErrorOf(clientCredentials(server, 'machine', oauth.ClientSecretPost('machine-secret')))).toBe(
      'unsupported_grant_type',
    );
  });
});

describe('introspection (RFC 7662)', () => {
  const resourceServer = {
    clientId: 'resource-server',
    clientSecret: 'rs-secret',
    authMethod: 'client_secret_basic' as const,
  };

  async function introspect(server: AuthorizationServer, token: string) {
    const as = await discover(server);
    const client = { client_id: 'resource-server' };
    return oauth.processIntrospectionResponse(
      as,
      client,
      await oauth.introspectionRequest(as, client, oauth.ClientSecretBasic('rs-secret'), token, insecure),
    );
  }

  it('describes an active token it issued', async () => {
    const server = await start({ clients: [resourceServer] });
    const token = await server.issueToken({ audience: RESOURCE, scope: 'mcp:read', clientId: 'app' });
    expect(await introspect(server, token)).toMatchObject({
      active: true,
      aud: RESOURCE,
      scope: 'mcp:read',
      client_id: 'app',
      sub: 'user-1',
    });
  });

  it('answers inactive for a revoked token', async () => {
    const server = await start({ clients: [resourceServer] });
    const token = await server.issueToken({ audience: RESOURCE });
    server.revoke(token);
    expect((await introspect(server, token)).active).toBe(false);
  });

  it('answers inactive for an expired token', async () => {
    let clock = 1_700_000_000_000;
    const server = await start({ clients: [resourceServer], now: () => clock });
    const token = await server.issueToken({ ttlSec: 60 });
    clock += 61_000;
    expect((await introspect(server, token)).active).toBe(false);
  });

  it('answers inactive for a refresh token its client revoked at /revoke (RFC 7009)', async () => {
    const { server, as, client } = await startWithPublicClient({
      clients: [{ clientId: 'public-app', redirectUris: [REDIRECT_URI] }, resourceServer],
    });
    const { tokens } = await codeFlow(as, client, { scope: 'offline_access' });
    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, client, oauth.None(), tokens.refresh_token!, insecure),
    );
    expect((await introspect(server, tokens.refresh_token!)).active).toBe(false);
  });

  it('refuses a caller without client authentication', async () => {
    const server = await start({ clients: [{ clientId: 'public-app' }] });
    const { status, body } = await postForm(server.url('/introspect'), {
      token: await server.issueToken(),
      client_id: 'public-app',
    });
    expect([status, body.error]).toEqual([401, 'invalid_client']);
  });
});

describe('URL client_ids (Client ID Metadata Documents)', () => {
  const CLIENT_ID = 'https://app.example/oauth/client.json';
  const document = { client_id: CLIENT_ID, redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none' as const };

  it('accepts a URL client_id without registration when supported', async () => {
    const server = await start({
      clientIdMetadataDocumentSupported: true,
      resolveClientIdMetadataDocument: async () => document,
    });
    const { tokens } = await codeFlow(await discover(server), { client_id: CLIENT_ID });
    expect(typeof tokens.access_token).toBe('string');
  });

  it('fetches the document from the URL by default', async () => {
    const documentHost = await start({ metadataAt: [] });
    const server = await start({ clientIdMetadataDocumentSupported: true });
    // Any 127.0.0.1 URL answering the document will do: the other server's 404 proves the fetch happens.
    const { status } = await authorize(await discover(server), { client_id: `${documentHost.origin}/client.json` });
    expect([status, documentHost.events.map((event) => event.path)]).toEqual([400, ['/client.json']]);
  });

  it('refuses a document that names another client_id', async () => {
    const server = await start({
      clientIdMetadataDocumentSupported: true,
      resolveClientIdMetadataDocument: async () => ({ ...document, client_id: 'https://other.example/' }),
    });
    expect((await authorize(await discover(server), { client_id: CLIENT_ID })).status).toBe(400);
  });

  it('refuses a URL client_id when not supported, and does not advertise support', async () => {
    const server = await start({ resolveClientIdMetadataDocument: async () => document });
    const as = await discover(server);
    expect([as.client_id_metadata_document_supported, (await authorize(as, { client_id: CLIENT_ID })).status]).toEqual([
      undefined,
      400,
    ]);
  });
});

describe('keys and direct issuance', () => {
  it('signs issueToken tokens that verify against its JWKS', async () => {
    const server = await start();
    expect(
      (await verifyAccessToken(server, await server.issueToken({ audience: RESOURCE, subject: 'alice' }), RESOURCE))
        .sub,
    ).toBe('alice');
  });

  it('keeps publishing the previous key after a rotation, so earlier tokens still verify', async () => {
    const server = await start();
    const before = await server.issueToken({ audience: RESOURCE });
    await server.rotateKeys();
    const after = await server.issueToken({ audience: RESOURCE });
    await Promise.all([verifyAccessToken(server, before, RESOURCE), verifyAccessToken(server, after, RESOURCE)]);
    expect(decodeProtectedHeader(after).kid).not.toBe(decodeProtectedHeader(before).kid);
  });

  it('stops publishing a retired key', async () => {
    const server = await start();
    const before = await server.issueToken({ audience: RESOURCE });
    await server.rotateKeys({ retirePrevious: true });
    expect(server.jwks().keys.map((key) => key.kid)).not.toContain(decodeProtectedHeader(before).kid);
  });
});

describe('the request log and the lifecycle', () => {
  it('records what a token request carried', async () => {
    const { server, as, client } = await startWithPublicClient();
    await codeFlow(as, client, { resource: RESOURCE, scope: 'offline_access' });
    expect(server.events.find((event) => event.endpoint === 'token')).toEqual({
      endpoint: 'token',
      method: 'POST',
      path: '/token',
      status: 200,
      grantType: 'authorization_code',
      clientId: 'public-app',
      resource: RESOURCE,
      scope: 'offline_access',
      authMethod: 'none',
      pkce: 'matched',
    });
  });

  it('records a refused verifier as a PKCE mismatch', async () => {
    const { server, as, client } = await startWithPublicClient();
    await oauthErrorOf(codeFlow(as, client, { verifier: oauth.generateRandomCodeVerifier() }));
    expect(server.events.find((event) => event.endpoint === 'token')).toMatchObject({
      pkce: 'mismatched',
      error: 'invalid_grant',
      status: 400,
    });
  });

  it('listens on 127.0.0.1 only: the IPv6 loopback on the same port is refused', async () => {
    const server = await start();
    const port = new URL(server.origin).port;
    expect(
      await fetch(`http://[::1]:${port}/jwks`).then(
        () => 'answered',
        () => 'refused',
      ),
    ).toBe('refused');
  });

  it('refuses connections once closed, even with a keep-alive connection open before', async () => {
    const server = await startAuthorizationServer();
    await fetch(server.url('/jwks'));
    await server.close();
    expect(
      await fetch(server.url('/jwks')).then(
        () => 'answered',
        () => 'refused',
      ),
    ).toBe('refused');
  });
});
