/**
 * DPoP (RFC 9449) at our resource server, over real HTTP on 127.0.0.1: a token bound to a key (`cnf.jkt`)
 * is served only with the `DPoP` scheme and a valid proof, and each part of the proof is checked (method,
 * URL, age, replay, the token's hash, the key, the algorithm, the server's nonce); the `dpop` options; and
 * our `OAuthClient` against our server with the tests' authorization server issuing DPoP-bound tokens, in
 * both protocol eras. Tokens for the resource-server tests come from a stand-in issuer (helpers/jwt-issuer.ts).
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import {
  calculateJwkThumbprint,
  decodeJwt,
  exportJWK,
  generateKeyPair,
  SignJWT,
  type JWK,
  type JWTPayload,
  type JWTHeaderParameters,
} from 'jose';
import { beforeEach, describe, expect, it } from 'vitest';
import { headlessInteraction, MemoryTokenStore, OAuthClient } from '../../lib/auth';
import { DEFAULT_DPOP_ALGORITHMS } from '../../lib/auth/server/dpop-proof';
import { ProofReplayCache } from '../../lib/auth/server/dpop-replay';
import { ResourceServer, type ResourceServerOptions } from '../../lib/auth/server/resource-server';
import { Client } from '../../lib/client/client';
import { META } from '../../lib/protocol/modern';
import { Server } from '../../lib/server/server';
import { createMcpHttpHandler, type McpHttpHandler } from '../../transports/http/endpoint';
import { StreamableHttpClientTransport } from '../../transports/http/streamable-client';
import { cleanups, lateListener, listenHttp } from '../helpers/http';
import { startTestIssuer, type TestIssuer } from '../helpers/jwt-issuer';
import { mirroredHeaders, postModern } from '../helpers/modern-http';
import { startAuthorizationServer, type AuthorizationServer } from '../helpers/oauth-server';
import { protectedToolsDefinition } from '../helpers/protected-tools';
import { serveProtected, type ProtectedEndpoint } from '../helpers/protected-endpoint';

const ENVELOPE = {
  [META.protocolVersion]: '2026-07-28',
  [META.clientCapabilities]: {},
  [META.clientInfo]: { name: 'dpop-test', version: '1' },
};

let issuer: TestIssuer;
beforeEach(async () => {
  issuer = await startTestIssuer();
});

// ---- proofs --------------------------------------------------------------------------------------------

interface ProofKey {
  readonly alg: string;
  readonly privateKey: CryptoKey;
  readonly publicJwk: JWK;
  /** Its RFC 7638 thumbprint: what a token bound to it names in `cnf.jkt`. */
  readonly jkt: string;
}

async function proofKey(alg = 'ES256'): Promise<ProofKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  return { alg, privateKey, publicJwk, jkt: await calculateJwkThumbprint(publicJwk) };
}

const athOf = (token: string) => createHash('sha256').update(token).digest('base64url');

/** A proof by `key` for a POST to `url` with `token`; `claims` and `header` override its parts (undefined drops one). */
async function proof(
  key: ProofKey,
  url: string,
  token: string,
  claims: Record<string, unknown> = {},
  header: Partial<JWTHeaderParameters> = {},
): Promise<string> {
  const payload: JWTPayload = {
    htm: 'POST',
    htu: url,
    ath: athOf(token),
    jti: crypto.randomUUID(),
    iat: Math.floor(Date.now() / 1000),
    ...claims,
  };
  for (const name of Object.keys(payload)) if (payload[name] === undefined) delete payload[name];
  return new SignJWT(payload)
    .setProtectedHeader({ alg: key.alg, typ: 'dpop+jwt', jwk: key.publicJwk, ...header })
    .sign(key.privateKey);
}

/** A compact JWS with `header` and `payload` and a made-up signature (HMAC with a key of the attacker's choice). */
async function hmacProof(header: Record<string, unknown>, payload: JWTPayload): Promise<string> {
  return new SignJWT(payload)
    .setProtectedHeader({ alg: 'HS256', ...header })
    .sign(new TextEncoder().encode('a shared secret the attacker picked'));
}

function unsignedProof(header: Record<string, unknown>, payload: JWTPayload): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ ...header, alg: 'none' })}.${part(payload)}.`;
}

// ---- the protected endpoint ------------------------------------------------------------------------------

/** Our server behind `createMcpHttpHandler` with `auth` (JWT by the issuer's JWKS, `resource` the endpoint's URL). */
function protectedEndpoint(auth: Partial<ResourceServerOptions> = {}): Promise<ProtectedEndpoint> {
  return serveProtected(protectedToolsDefinition(), (url) => ({
    resource: url,
    authorizationServers: [issuer.issuer],
    jwks: issuer.jwksUrl,
    ...auth,
  }));
}

interface Answer {
  readonly status: number;
  readonly challenge: string | null;
  readonly nonce: string | null;
  readonly body: Record<string, any>;
}

/** A 2026-07-28 `tools/call` of `name` to `url` with `headers`. */
async function call(url: string, headers: Record<string, string>, name = 'whoami'): Promise<Answer> {
  const params = { name, arguments: {} };
  const response = await postModern(
    url,
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { ...params, _meta: ENVELOPE } },
    { ...mirroredHeaders('tools/call', params), ...headers },
  );
  return {
    status: response.status,
    challenge: response.headers.get('www-authenticate'),
    nonce: response.headers.get('dpop-nonce'),
    body: (await response.json()) as Record<string, any>,
  };
}

const dpopHeaders = (token: string, proofValue: string) => ({ authorization: `DPoP ${token}`, dpop: proofValue });

/** The principal `whoami` saw. */
const caller = (answer: Answer) => JSON.parse(answer.body.result.content[0].text) as Record<string, any>;

/** A bound token for `endpoint`, and the key it is bound to. */
async function boundToken(endpoint: ProtectedEndpoint, claims: JWTPayload = {}) {
  const key = await proofKey();
  return { key, token: await issuer.sign(endpoint.url, { cnf: { jkt: key.jkt }, ...claims }) };
}

const refusedWith = (error: string) => ({
  status: 401,
  challenge: expect.stringMatching(new RegExp(`^DPoP error="${error}", error_description="(?:[^"\\\\]|\\\\.)+", `)),
});

describe('a token bound to a key (cnf.jkt)', () => {
  it('is refused as a Bearer token without a proof: 401 DPoP invalid_token', async () => {
    const endpoint = await protectedEndpoint();
    const { token } = await boundToken(endpoint);
    const answer = await call(endpoint.url, { authorization: `Bearer ${token}` });
    expect(answer).toMatchObject(refusedWith('invalid_token'));
  });

  it('is refused as a Bearer token when introspection says it is bound', async () => {
    const endpoint = await protectedEndpoint({
      jwks: undefined,
      introspection: { endpoint: issuer.introspectionUrl, clientId: 'rs' },
    });
    issuer.introspect('opaque-bound', { active: true, sub: 'carol', aud: endpoint.url, cnf: { jkt: 'some-key' } });
    const answer = await call(endpoint.url, { authorization: 'Bearer opaque-bound' });
    expect(answer).toMatchObject(refusedWith('invalid_token'));
  });

  it('is served with the DPoP scheme and a proof by its key, the key on ctx.auth.claims.cnf', async () => {
    const endpoint = await protectedEndpoint();
    const { key, token } = await boundToken(endpoint);
    const answer = await call(endpoint.url, dpopHeaders(token, await proof(key, endpoint.url, token)));
    expect([answer.status, caller(answer).claims.cnf]).toEqual([200, { jkt: key.jkt }]);
  });

  it('is served introspected, with the DPoP scheme and a proof by the key the answer names', async () => {
    const endpoint = await protectedEndpoint({
      jwks: undefined,
      introspection: { endpoint: issuer.introspectionUrl, clientId: 'rs' },
    });
    const key = await proofKey();
    issuer.introspect('opaque-dpop', { active: true, sub: 'carol', aud: endpoint.url, cnf: { jkt: key.jkt } });
    const answer = await call(endpoint.url, dpopHeaders('opaque-dpop', await proof(key, endpoint.url, 'opaque-dpop')));
    expect(answer.status).toBe(200);
  });

  it('stays refused as Bearer once its verdict is cached', async () => {
    const endpoint = await protectedEndpoint();
    const { key, token } = await boundToken(endpoint);
    const served = await call(endpoint.url, dpopHeaders(token, await proof(key, endpoint.url, token)));
    const stolen = await call(endpoint.url, { authorization: `Bearer ${token}` });
    expect([served.status, stolen]).toMatchObject([200, refusedWith('invalid_token')]);
  });

  it('is served again with a fresh proof (a proof per request, the token’s verdict cached)', async () => {
    const endpoint = await protectedEndpoint();
    const { key, token } = await boundToken(endpoint);
    const first = await call(endpoint.url, dpopHeaders(token, await proof(key, endpoint.url, token)));
    const second = await call(endpoint.url, dpopHeaders(token, await proof(key, endpoint.url, token)));
    expect([first.status, second.status, issuer.jwksFetches]).toEqual([200, 200, 1]);
  });
});

describe('the DPoP scheme', () => {
  it('with the scheme in any case is accepted', async () => {
    const endpoint = await protectedEndpoint();
    const { key, token } = await boundToken(endpoint);
    const answer = await call(endpoint.url, {
      authorization: `dpop ${token}`,
      dpop: await proof(key, endpoint.url, token),
    });
    expect(answer.status).toBe(200);
  });

  it('with a token bound to no key is refused: invalid_token', async () => {
    const endpoint = await protectedEndpoint();
    const token = await issuer.sign(endpoint.url);
    const answer = await call(endpoint.url, dpopHeaders(token, await proof(await proofKey(), endpoint.url, token)));
    expect(answer).toMatchObject(refusedWith('invalid_token'));
    expect(answer.challenge).toContain('not bound to a DPoP key');
  });

  it('without a DPoP header is refused: invalid_dpop_proof', async () => {
    const endpoint = await protectedEndpoint();
    const { token } = await boundToken(endpoint);
    expect(await call(endpoint.url, { authorization: `DPoP ${token}` })).toMatchObject(
      refusedWith('invalid_dpop_proof'),
    );
  });

  it('with two DPoP headers is refused 400 invalid_request', async () => {
    const endpoint = await protectedEndpoint();
    const { key, token } = await boundToken(endpoint);
    const proofs = [await proof(key, endpoint.url, token), await proof(key, endpoint.url, token)];
    const answer = await nodePost(endpoint.url, { authorization: `DPoP ${token}`, dpop: proofs });
    expect([answer.status, answer.challenge]).toEqual([400, expect.stringMatching(/^DPoP error="invalid_request"/)]);
  });

  it('with an expired token is refused invalid_token in a DPoP challenge', async () => {
    const endpoint = await protectedEndpoint();
    const { key, token } = await boundToken(endpoint, { exp: Math.floor(Date.now() / 1000) - 600 });
    const answer = await call(endpoint.url, dpopHeaders(token, await proof(key, endpoint.url, token)));
    expect(answer).toMatchObject(refusedWith('invalid_token'));
  });

  it('names its scheme in a 403 insufficient_scope', async () => {
    const endpoint = await protectedEndpoint();
    const { key, token } = await boundToken(endpoint, { scope: 'mcp:read' });
    const answer = await call(endpoint.url, dpopHeaders(token, await proof(key, endpoint.url, token)), 'write');
    expect([answer.status, answer.challenge]).toEqual([
      403,
      expect.stringMatching(/^DPoP error="insufficient_scope", scope="mcp:read mcp:write"/),
    ]);
  });
});

type Attack = (key: ProofKey, url: string, token: string) => Promise<string>;

const now = () => Math.floor(Date.now() / 1000);
const attacks: [string, Attack][] = [
  ['for another URL (htu)', (key, url, token) => proof(key, `${url}/other`, token)],
  ['for another origin (htu)', (key, url, token) => proof(key, url.replace('127.0.0.1', 'localhost'), token)],
  ['for another method (htm)', (key, url, token) => proof(key, url, token, { htm: 'GET' })],
  ['issued 2 minutes ago (iat)', (key, url, token) => proof(key, url, token, { iat: now() - 120 })],
  ['issued a minute ahead (iat)', (key, url, token) => proof(key, url, token, { iat: now() + 60 })],
  ['without iat', (key, url, token) => proof(key, url, token, { iat: undefined })],
  ['without jti', (key, url, token) => proof(key, url, token, { jti: undefined })],
  ['without ath', (key, url, token) => proof(key, url, token, { ath: undefined })],
  ['with the ath of another token', (key, url, token) => proof(key, url, token, { ath: athOf(`${token}x`) })],
  ['signed by another key (its own jwk)', async (_key, url, token) => proof(await proofKey(), url, token)],
  [
    'signed by another key under the token’s jwk',
    async (key, url, token) => proof({ ...(await proofKey()), publicJwk: key.publicJwk }, url, token),
  ],
  ['of type jwt (typ)', (key, url, token) => proof(key, url, token, {}, { typ: 'JWT' })],
  [
    'unsigned (alg none)',
    async (key, url, token) =>
      unsignedProof(
        { typ: 'dpop+jwt', jwk: key.publicJwk },
        { htm: 'POST', htu: url, ath: athOf(token), iat: now(), jti: 'n' },
      ),
  ],
  [
    'HMAC-signed (HS256)',
    (key, url, token) =>
      hmacProof(
        { typ: 'dpop+jwt', jwk: key.publicJwk },
        { htm: 'POST', htu: url, ath: athOf(token), iat: now(), jti: 'h' },
      ),
  ],
  [
    'with a private key in its jwk header',
    async (key, url, token) => proof(key, url, token, {}, { jwk: await exportJWK(key.privateKey) }),
  ],
  [
    'RS256-signed by a key the token is not bound to',
    async (_key, url, token) => proof(await proofKey('RS256'), url, token),
  ],
  ['that is no JWS', async () => 'not-a-proof'],
];

describe('a DPoP proof', () => {
  it.each(attacks)('is refused 401 when %s', async (_case, attack) => {
    const endpoint = await protectedEndpoint();
    const { key, token } = await boundToken(endpoint);
    const answer = await call(endpoint.url, dpopHeaders(token, await attack(key, endpoint.url, token)));
    expect(answer).toMatchObject(refusedWith('invalid_dpop_proof'));
  });

  it('is refused when replayed (same jti), after serving its first request', async () => {
    const endpoint = await protectedEndpoint();
    const { key, token } = await boundToken(endpoint);
    const once = await proof(key, endpoint.url, token);
    const first = await call(endpoint.url, dpopHeaders(token, once));
    const replayed = await call(endpoint.url, dpopHeaders(token, once));
    expect([first.status, replayed]).toMatchObject([200, refusedWith('invalid_dpop_proof')]);
  });

  it('is refused when its jti was used by another proof of the same key', async () => {
    const endpoint = await protectedEndpoint();
    const { key, token } = await boundToken(endpoint);
    const first = await call(endpoint.url, dpopHeaders(token, await proof(key, endpoint.url, token, { jti: 'j1' })));
    const again = await call(endpoint.url, dpopHeaders(token, await proof(key, endpoint.url, token, { jti: 'j1' })));
    expect([first.status, again.status]).toEqual([200, 401]);
  });

  it('names the URL of the configured resource, not of the request’s Host (a server behind a proxy)', async () => {
    const resource = 'https://mcp.example.com/mcp';
    const endpoint = await protectedEndpoint({ resource });
    const key = await proofKey();
    const token = await issuer.sign(resource, { cnf: { jkt: key.jkt } });
    const public_ = await call(endpoint.url, dpopHeaders(token, await proof(key, resource, token)));
    const local = await call(endpoint.url, dpopHeaders(token, await proof(key, endpoint.url, token)));
    expect([public_.status, local.status]).toEqual([200, 401]);
  });

  it('may name the URL in another case and with the default port', async () => {
    const resource = 'https://mcp.example.com/mcp';
    const endpoint = await protectedEndpoint({ resource });
    const key = await proofKey();
    const token = await issuer.sign(resource, { cnf: { jkt: key.jkt } });
    const answer = await call(
      endpoint.url,
      dpopHeaders(token, await proof(key, 'HTTPS://MCP.Example.com:443/mcp', token)),
    );
    expect(answer.status).toBe(200);
  });
});

describe('the dpop option', () => {
  it('by default lists the proof algorithms in the metadata document and in the 401 challenge', async () => {
    const endpoint = await protectedEndpoint();
    const metadata = (await (await fetch(endpoint.metadataUrl)).json()) as Record<string, unknown>;
    const answer = await call(endpoint.url, {});
    expect([metadata.dpop_signing_alg_values_supported, metadata.dpop_bound_access_tokens_required]).toEqual([
      DEFAULT_DPOP_ALGORITHMS,
      undefined,
    ]);
    expect(answer.challenge).toBe(
      `Bearer resource_metadata="${endpoint.metadataUrl}", DPoP algs="${DEFAULT_DPOP_ALGORITHMS.join(' ')}"`,
    );
  });

  it('false: the DPoP scheme is refused 400 and the metadata names no DPoP', async () => {
    const endpoint = await protectedEndpoint({ dpop: false });
    const { key, token } = await boundToken(endpoint);
    const answer = await call(endpoint.url, dpopHeaders(token, await proof(key, endpoint.url, token)));
    const metadata = (await (await fetch(endpoint.metadataUrl)).json()) as Record<string, unknown>;
    expect([answer.status, 'dpop_signing_alg_values_supported' in metadata]).toEqual([400, false]);
  });

  it('false: a bound token is still refused as Bearer', async () => {
    const endpoint = await protectedEndpoint({ dpop: false });
    const { token } = await boundToken(endpoint);
    expect((await call(endpoint.url, { authorization: `Bearer ${token}` })).status).toBe(401);
  });

  describe('required', () => {
    it('refuses a Bearer token bound to no key: 401 DPoP invalid_token', async () => {
      const endpoint = await protectedEndpoint({ dpop: { required: true } });
      const answer = await call(endpoint.url, { authorization: `Bearer ${await issuer.sign(endpoint.url)}` });
      expect(answer).toMatchObject(refusedWith('invalid_token'));
    });

    it('serves a bound token with its proof', async () => {
      const endpoint = await protectedEndpoint({ dpop: { required: true } });
      const { key, token } = await boundToken(endpoint);
      const answer = await call(endpoint.url, dpopHeaders(token, await proof(key, endpoint.url, token)));
      expect(answer.status).toBe(200);
    });

    it('says so in the metadata document and challenges with DPoP alone', async () => {
      const endpoint = await protectedEndpoint({ dpop: { required: true } });
      const metadata = (await (await fetch(endpoint.metadataUrl)).json()) as Record<string, unknown>;
      const answer = await call(endpoint.url, {});
      expect([metadata.dpop_bound_access_tokens_required, answer.challenge]).toEqual([
        true,
        `DPoP resource_metadata="${endpoint.metadataUrl}", algs="${DEFAULT_DPOP_ALGORITHMS.join(' ')}"`,
      ]);
    });
  });

  describe('algorithms', () => {
    it('refuses a proof signed with another algorithm', async () => {
      const endpoint = await protectedEndpoint({ dpop: { algorithms: ['ES256'] } });
      const key = await proofKey('RS256');
      const token = await issuer.sign(endpoint.url, { cnf: { jkt: key.jkt } });
      const answer = await call(endpoint.url, dpopHeaders(token, await proof(key, endpoint.url, token)));
      expect(answer).toMatchObject(refusedWith('invalid_dpop_proof'));
    });

    it.each(['HS256', 'none', 'RSA-OAEP'])('may not name %s', (algorithm) => {
      const options = { resource: 'https://mcp.example.com/mcp', authorizationServers: ['https://as.example'] };
      expect(
        () => new ResourceServer({ ...options, jwks: 'https://as.example/jwks', dpop: { algorithms: [algorithm] } }),
      ).toThrow(/not an asymmetric JWS algorithm/);
    });
  });

  it('maxProofAgeS sets how old a proof may be', async () => {
    const endpoint = await protectedEndpoint({ dpop: { maxProofAgeS: 600 } });
    const { key, token } = await boundToken(endpoint);
    const answer = await call(
      endpoint.url,
      dpopHeaders(token, await proof(key, endpoint.url, token, { iat: now() - 300 })),
    );
    expect(answer.status).toBe(200);
  });

  describe('nonce', () => {
    it('refuses a proof without the nonce: 401 use_dpop_nonce with a DPoP-Nonce header', async () => {
      const endpoint = await protectedEndpoint({ dpop: { nonce: true } });
      const { key, token } = await boundToken(endpoint);
      const answer = await call(endpoint.url, dpopHeaders(token, await proof(key, endpoint.url, token)));
      expect([answer.status, answer.challenge, answer.nonce]).toEqual([
        401,
        expect.stringMatching(/^DPoP error="use_dpop_nonce", /),
        expect.stringMatching(/^[\w-]{16,}$/),
      ]);
    });

    it('serves a proof carrying the nonce it handed out, and refuses another nonce', async () => {
      const endpoint = await protectedEndpoint({ dpop: { nonce: true } });
      const { key, token } = await boundToken(endpoint);
      const { nonce } = await call(endpoint.url, dpopHeaders(token, await proof(key, endpoint.url, token)));
      const served = await call(endpoint.url, dpopHeaders(token, await proof(key, endpoint.url, token, { nonce })));
      const other = await call(endpoint.url, dpopHeaders(token, await proof(key, endpoint.url, token, { nonce: 'x' })));
      expect([served.status, other.status, other.challenge]).toEqual([
        200,
        401,
        expect.stringMatching(/^DPoP error="use_dpop_nonce"/),
      ]);
    });
  });
});

describe('the replay cache', () => {
  it('refuses a jti it holds', () => {
    const cache = new ProofReplayCache(10, 60);
    expect([cache.remember('a', 100, 100), cache.remember('a', 100, 100)]).toEqual(['new', 'replayed']);
  });

  it('when full, forgets the oldest and refuses from then on what is not newer than it (so no replay passes)', () => {
    const cache = new ProofReplayCache(2, 60);
    const verdicts = [
      cache.remember('a', 100, 100),
      cache.remember('b', 101, 101),
      cache.remember('c', 102, 102), // evicts a (iat 100)
      cache.remember('a', 100, 102), // a replay of the evicted proof
      cache.remember('d', 100, 102), // a new proof, but not newer than what was evicted
      cache.remember('e', 103, 103),
    ];
    expect([verdicts, cache.size]).toEqual([['new', 'new', 'new', 'below-floor', 'below-floor', 'new'], 2]);
  });

  it('forgets the proofs the window refuses anyway, without raising its floor', () => {
    const cache = new ProofReplayCache(2, 60);
    cache.remember('a', 100, 100);
    cache.remember('b', 101, 101);
    expect([cache.remember('c', 100, 170), cache.size]).toEqual(['new', 1]);
  });
});

// ---- our client and our server -------------------------------------------------------------------------

const REDIRECT_URI = 'http://127.0.0.1:53682/callback';

interface EndToEnd {
  readonly as: AuthorizationServer;
  readonly url: string;
  /** Whether each DPoP proof the MCP endpoint received carried a nonce, in order. */
  noncesSent(): boolean[];
}

/** Our server with `auth` (JWKS of the tests' authorization server, which offers DPoP and binds tokens). */
async function endToEnd(auth: Partial<ResourceServerOptions> = {}): Promise<EndToEnd> {
  const as = await startAuthorizationServer({ scopesSupported: ['mcp:read', 'mcp:write'], dpop: true });
  cleanups.push(() => as.close());
  const server = new Server(protectedToolsDefinition());
  cleanups.push(() => server.close());
  let handler: McpHttpHandler | undefined;
  const { origin, seen } = await listenHttp(lateListener(() => handler));
  const url = `${origin}/mcp`;
  handler = createMcpHttpHandler(server, {
    path: '/mcp',
    auth: { resource: url, authorizationServers: [as.issuer], jwks: as.url('/jwks'), ...auth },
  });
  cleanups.push(() => handler!.close());
  const proofs = () =>
    seen.flatMap((request) => (typeof request.headers.dpop === 'string' ? [request.headers.dpop] : []));
  return { as, url, noncesSent: () => proofs().map((value) => decodeJwt(value).nonce !== undefined) };
}

async function connectWithOAuth(setup: EndToEnd, era: 'auto' | 'handshake') {
  const authorization = new OAuthClient(setup.url, {
    store: new MemoryTokenStore(),
    interaction: headlessInteraction(REDIRECT_URI),
  });
  const client = new Client({ name: 'dpop-e2e', version: '1.0.0' }, { eraCache: false, era });
  cleanups.push(() => client.close());
  await client.connect(new StreamableHttpClientTransport(setup.url, { authorization, fallback: false }));
  return { client, authorization };
}

async function whoami(client: Client): Promise<Record<string, any>> {
  const result = await client.callTool('whoami', {});
  return JSON.parse((result.content[0] as { text: string }).text);
}

describe.each(['auto', 'handshake'] as const)('our OAuthClient against our server with DPoP, era %s', (era) => {
  it('gets a DPoP-bound token and calls a tool with it', async () => {
    const setup = await endToEnd();
    const { client, authorization } = await connectWithOAuth(setup, era);
    const principal = await whoami(client);
    expect({
      era: client.connectedEra,
      tokenType: authorization.currentTokens?.tokenType.toLowerCase(),
      bound: typeof principal.claims.cnf?.jkt,
    }).toEqual({ era: era === 'auto' ? 'modern' : 'handshake', tokenType: 'dpop', bound: 'string' });
  });

  it('retries with the server’s nonce (nonce: true) and calls a tool', async () => {
    const setup = await endToEnd({ dpop: { nonce: true } });
    const { client } = await connectWithOAuth(setup, era);
    const principal = await whoami(client);
    const nonces = setup.noncesSent();
    expect({ subject: principal.subject, first: nonces[0], last: nonces.at(-1) }).toEqual({
      subject: 'user-1',
      first: false,
      last: true,
    });
  });

  it('serves a tool to it when DPoP is required', async () => {
    const setup = await endToEnd({ dpop: { required: true } });
    const { client } = await connectWithOAuth(setup, era);
    expect((await whoami(client)).subject).toBe('user-1');
  });

  it('leaves its token useless to a thief who sends it as Bearer, or as DPoP with a proof of their own', async () => {
    const setup = await endToEnd();
    const { client, authorization } = await connectWithOAuth(setup, era);
    await whoami(client);
    const stolen = authorization.currentTokens!.accessToken;
    const asBearer = await call(setup.url, { authorization: `Bearer ${stolen}` });
    const withOwnKey = await call(setup.url, dpopHeaders(stolen, await proof(await proofKey(), setup.url, stolen)));
    expect([asBearer, withOwnKey]).toMatchObject([refusedWith('invalid_token'), refusedWith('invalid_dpop_proof')]);
  });
});

/** A POST with node:http, which sends a header given as an array once per value (fetch would join them). */
function nodePost(url: string, headers: Record<string, string | string[]>) {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'whoami', arguments: {}, _meta: ENVELOPE },
  });
  return new Promise<{ status: number; challenge: string | undefined }>((resolve, reject) => {
    const request = http.request(
      url,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2026-07-28',
          ...mirroredHeaders('tools/call', { name: 'whoami' }),
          ...headers,
        },
      },
      (response) => {
        response.resume();
        const challenge = response.headers['www-authenticate'];
        resolve({ status: response.statusCode!, challenge });
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}
