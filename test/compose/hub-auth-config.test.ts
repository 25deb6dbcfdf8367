/**
 * The authorization settings of a hub config: each server's `auth` (oauth, bearer from the environment,
 * client credentials) and the top-level `auth` of the hub's endpoint, read into the hub's options, and every
 * mistake in them reported with where it is, like the rest of the config.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../lib/compose/config';
import type { HttpSource } from '../../lib/compose/sources';
import { Hub } from '../../lib/compose/hub';
import { silentLogger } from '../../lib/core/logger';

const URL_A = 'https://a.example.com/mcp';

const problemsOf = (config: unknown, env: Record<string, string> = {}): readonly string[] => {
  try {
    parseConfig(config, { env });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error('The config was accepted');
};

/** The source of the one server `a`, with `auth` and whatever else `entry` says. */
const sourceOf = (entry: Record<string, unknown>, env: Record<string, string> = {}) =>
  parseConfig({ mcpServers: { a: { url: URL_A, ...entry } } }, { env }).options.upstreams[0]!.source as HttpSource;

const serverAuthProblems = (auth: unknown, env: Record<string, string> = {}, entry: Record<string, unknown> = {}) =>
  problemsOf({ mcpServers: { a: { url: URL_A, auth, ...entry } } }, env);

const ENDPOINT = {
  resource: 'https://hub.example.com/mcp',
  authorizationServers: ['https://login.example.com'],
  jwks: 'https://login.example.com/jwks',
};

describe("a server's auth", () => {
  it('reads oauth with its scope, client name and a pre-registered client (secrets from the environment)', () => {
    const auth = { type: 'oauth', scope: 'notes:read', clientName: 'hub', clientId: 'c1', clientSecret: '${SECRET}' };
    expect(sourceOf({ auth }, { SECRET: 'shh' }).auth).toEqual({ ...auth, clientSecret: 'shh' });
  });

  it('reads a bearer token from the environment variable tokenEnv names', () => {
    expect(sourceOf({ auth: { type: 'bearer', tokenEnv: 'TOKEN' } }, { TOKEN: 't0k3n' }).auth).toEqual({
      type: 'bearer',
      token: 't0k3n',
    });
  });

  it('reads client credentials, expanding ${VAR}', () => {
    const auth = { type: 'client_credentials', clientId: 'hub', clientSecret: '${SECRET}', scope: 'jobs' };
    expect(sourceOf({ auth }, { SECRET: 'shh' }).auth).toEqual({ ...auth, clientSecret: 'shh' });
  });

  it('is taken by SSE servers too', () => {
    expect(sourceOf({ type: 'sse', auth: { type: 'oauth' } })).toMatchObject({
      transport: 'sse',
      auth: { type: 'oauth' },
    });
  });

  it('refuses a bearer token whose variable is not set, naming it', () => {
    expect(serverAuthProblems({ type: 'bearer', tokenEnv: 'SEARCH_TOKEN' })).toEqual([
      'mcpServers.a.auth.tokenEnv names SEARCH_TOKEN, which is not set in the environment',
    ]);
  });

  it('refuses a bearer token whose variable is empty', () => {
    expect(serverAuthProblems({ type: 'bearer', tokenEnv: 'SEARCH_TOKEN' }, { SEARCH_TOKEN: '' })).toEqual([
      'mcpServers.a.auth.tokenEnv names SEARCH_TOKEN, which is empty in the environment',
    ]);
  });

  it('refuses a bearer auth without tokenEnv', () => {
    expect(serverAuthProblems({ type: 'bearer' })).toEqual(['mcpServers.a.auth.tokenEnv is required']);
  });

  it('refuses an Authorization header beside an auth', () => {
    expect(
      serverAuthProblems({ type: 'oauth' }, {}, { headers: { Authorization: 'Bearer x', 'X-Team': 'blue' } }),
    ).toEqual(['mcpServers.a.auth and an Authorization header are both given: keep one (the header is sent as it is)']);
  });

  it('keeps static headers working beside an auth', () => {
    expect(sourceOf({ headers: { 'X-Team': 'blue' }, auth: { type: 'oauth' } })).toMatchObject({
      headers: { 'X-Team': 'blue' },
      auth: { type: 'oauth' },
    });
  });

  it('refuses an unknown type, listing the known ones', () => {
    expect(serverAuthProblems({ type: 'basic' })).toEqual([
      'mcpServers.a.auth.type must be one of "oauth", "bearer", "client_credentials", got "basic"',
    ]);
  });

  it('refuses client credentials without a secret', () => {
    expect(serverAuthProblems({ type: 'client_credentials', clientId: 'hub' })).toEqual([
      'mcpServers.a.auth.clientSecret is required',
    ]);
  });

  it('refuses an oauth client secret without its client id', () => {
    expect(serverAuthProblems({ type: 'oauth', clientSecret: 'shh' })).toEqual([
      'mcpServers.a.auth has a "clientSecret" without the "clientId" it belongs to',
    ]);
  });

  it('names a key of another type as misplaced', () => {
    expect(serverAuthProblems({ type: 'bearer', tokenEnv: 'T', scope: 'x' }, { T: 't' })).toEqual([
      'Unknown key "scope" in mcpServers.a.auth: it is not a setting of "type": "bearer"',
    ]);
  });

  it('suggests the closest key for a misspelt one', () => {
    expect(serverAuthProblems({ type: 'bearer', tokenEnvv: 'T' })).toContain(
      'Unknown key "tokenEnvv" in mcpServers.a.auth: did you mean "tokenEnv"?',
    );
  });

  it('is not a setting of stdio servers', () => {
    expect(problemsOf({ mcpServers: { a: { command: 'node', auth: { type: 'oauth' } } } })).toEqual([
      'Unknown key "auth" in mcpServers.a: it is a setting of http, sse servers, not stdio ones',
    ]);
  });

  it('is refused beside an Authorization header when given to the Hub directly', () => {
    const source = {
      kind: 'http' as const,
      url: URL_A,
      headers: { authorization: 'Bearer x' },
      auth: { type: 'oauth' as const },
    };
    expect(() => new Hub({ upstreams: [{ name: 'a', source }], logger: silentLogger })).toThrow(
      'Hub: upstream a has both an Authorization header and auth (oauth): keep one',
    );
  });
});

describe("the hub endpoint's auth", () => {
  const endpointProblems = (auth: unknown) => problemsOf({ mcpServers: { a: { url: URL_A } }, auth });

  it('reads the resource server options of the HTTP endpoint', () => {
    const auth = { ...ENDPOINT, scopesSupported: ['hub:use'], requiredScopes: ['hub:use'] };
    expect(parseConfig({ mcpServers: { a: { url: URL_A } }, auth }).http.auth).toEqual(auth);
  });

  it('reads token introspection instead of a key set', () => {
    const introspection = { endpoint: 'https://login.example.com/introspect', clientId: 'hub', clientSecret: 'shh' };
    const { jwks: _, ...rest } = ENDPOINT;
    expect(parseConfig({ mcpServers: { a: { url: URL_A } }, auth: { ...rest, introspection } }).http.auth).toEqual({
      ...rest,
      introspection,
    });
  });

  it('needs a way to check tokens', () => {
    const { jwks: _, ...rest } = ENDPOINT;
    expect(endpointProblems(rest)).toEqual([
      'auth needs one way to check tokens: "jwks" (JWT access tokens) or "introspection" (opaque tokens)',
    ]);
  });

  it('needs the resource and an authorization server', () => {
    expect(endpointProblems({ jwks: ENDPOINT.jwks, authorizationServers: [] })).toEqual([
      'auth.resource is required',
      'auth.authorizationServers must name at least one issuer',
    ]);
  });

  it('refuses a resource that is not a URL', () => {
    expect(endpointProblems({ ...ENDPOINT, resource: 'hub' })).toEqual(['auth.resource is not a URL: "hub"']);
  });

  it('reads DPoP settings: off, or required, with a nonce, narrowed to some algorithms', () => {
    const read = (dpop: unknown) =>
      parseConfig({ mcpServers: { a: { url: URL_A } }, auth: { ...ENDPOINT, dpop } }).http.auth;
    expect(read(false)).toEqual({ ...ENDPOINT, dpop: false });
    const dpop = { required: true, nonce: true, algorithms: ['ES256'] };
    expect(read(dpop)).toEqual({ ...ENDPOINT, dpop });
  });

  it('refuses DPoP settings it cannot apply, naming each', () => {
    expect(endpointProblems({ ...ENDPOINT, dpop: { required: 'yes', algorithms: ['HS256'], nonces: true } })).toEqual([
      'Unknown key "nonces" in auth.dpop: did you mean "nonce"?',
      'auth.dpop.required must be true or false, got "yes"',
      expect.stringMatching(/^auth\.dpop\.algorithms\[0\] must be one of ES256, .*, got "HS256"$/),
    ]);
    expect(endpointProblems({ ...ENDPOINT, dpop: true })).toEqual(['auth.dpop must be false or an object, got true']);
  });

  it('names an unknown key with the closest known one', () => {
    expect(endpointProblems({ ...ENDPOINT, requiredScope: ['x'] })).toEqual([
      'Unknown key "requiredScope" in auth: did you mean "requiredScopes"?',
    ]);
  });
});
