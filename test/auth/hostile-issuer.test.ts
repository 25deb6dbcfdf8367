/**
 * The resource server's token verifiers against a hostile or broken authorization server, and odd tokens,
 * over real HTTP on 127.0.0.1 (helpers/jwt-issuer.ts): an introspection endpoint that stalls, answers huge
 * bodies or is flooded with tokens; introspection answers for tokens that are not access tokens; key sets
 * that are garbage, not 200, huge or slow; JWTs without `exp`; claims that would make two callers one
 * principal. A check that could not be made rejects with something other than `InvalidTokenError` (answered
 * 503); a bad token with `InvalidTokenError` (401 `invalid_token`).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { createIntrospectionVerifier, type IntrospectionOptions } from '../../lib/auth/server/introspection-verifier';
import { createJwtVerifier, type JwtVerifierOptions } from '../../lib/auth/server/jwt-verifier';
import { InvalidTokenError } from '../../lib/auth/server/principal';
import type { ResourceServerOptions } from '../../lib/auth/server/resource-server';
import { TokenCheckUnavailableError, type TokenVerifier } from '../../lib/auth/server/token-verifier';
import { postInitialize, within } from '../helpers/http';
import { startTestIssuer, type TestIssuer } from '../helpers/jwt-issuer';
import { protectedToolsDefinition } from '../helpers/protected-tools';
import { serveProtected } from '../helpers/protected-endpoint';

const AUDIENCE = 'https://mcp.example.com/mcp';
/** Larger than every default body limit (64 KiB introspection, 512 KiB key set). */
const HUGE = 1024 * 1024;

let issuer: TestIssuer;
beforeEach(async () => {
  issuer = await startTestIssuer();
});

function introspector(options: Partial<IntrospectionOptions> = {}): TokenVerifier {
  return createIntrospectionVerifier({
    endpoint: issuer.introspectionUrl,
    clientId: 'rs',
    audience: AUDIENCE,
    ...options,
  });
}

function jwtVerifier(options: Partial<JwtVerifierOptions> = {}): TokenVerifier {
  return createJwtVerifier({ jwksUrl: issuer.jwksUrl, issuer: issuer.issuer, audience: AUDIENCE, ...options });
}

const active = (claims: Record<string, unknown> = {}) => ({ active: true, sub: 'carol', aud: AUDIENCE, ...claims });

/** The rejection of `verifying` (a test failure if it resolves). */
async function rejectionOf(verifying: Promise<unknown>): Promise<unknown> {
  return within(verifying, 'the verdict').then(
    () => expect.fail('the token was accepted'),
    (error: unknown) => error,
  );
}

/** Our server behind `createMcpHttpHandler` with `auth` for the resource `<origin>/mcp`: its URL. */
async function protectedEndpoint(auth: (url: string) => Partial<ResourceServerOptions>): Promise<string> {
  const endpoint = await serveProtected(protectedToolsDefinition(), (url) => ({
    resource: url,
    authorizationServers: [issuer.issuer],
    ...auth(url),
  }));
  return endpoint.url;
}

/** The status of an `initialize` POST to `url` with `token`. */
async function statusOfInitialize(url: string, token: string): Promise<number> {
  return (await postInitialize(url, { authorization: `Bearer ${token}` })).status;
}

describe('introspection against a hostile endpoint', () => {
  it('answers 503 when the endpoint accepts and never answers, once the timeout passes', async () => {
    issuer.misbehave('introspect', { kind: 'stall' });
    const url = await protectedEndpoint(() => ({
      introspection: { endpoint: issuer.introspectionUrl, clientId: 'rs', timeoutMs: 300 },
    }));
    expect(await within(statusOfInitialize(url, 'opaque-1'), 'the 503')).toBe(503);
  });

  it.each([
    ['sent chunked', false],
    ['with its Content-Length', true],
  ])('refuses to read a huge answer %s (the check fails, the token is not blamed)', async (_case, declareLength) => {
    issuer.introspect('opaque-1', active());
    issuer.misbehave('introspect', { kind: 'huge', bytes: HUGE, declareLength });
    const error = await rejectionOf(introspector()('opaque-1', {}));
    expect(error).toBeInstanceOf(TokenCheckUnavailableError);
    expect((error as Error).message).toContain('larger than 65536 bytes');
  });

  it('reads an answer within the limit', async () => {
    issuer.introspect('opaque-1', active());
    issuer.misbehave('introspect', { kind: 'huge', bytes: 1000 });
    await expect(introspector()('opaque-1', {})).resolves.toMatchObject({ subject: 'carol' });
  });

  it('is refused at once for a plain-http endpoint on another host', () => {
    expect(() => introspector({ endpoint: 'http://as.example.com/introspect' })).toThrow(TypeError);
    expect(() => introspector({ endpoint: 'http://127.0.0.2:1/introspect' })).not.toThrow();
  });
});

describe('introspection floods', () => {
  it('never puts more than the cap in flight, however many different tokens arrive', async () => {
    issuer.misbehave('introspect', { kind: 'late', ms: 50 });
    const tokens = Array.from({ length: 20 }, (_, index) => `opaque-${index}`);
    for (const token of tokens) issuer.introspect(token, active({ sub: token }));
    const verify = introspector({ maxConcurrent: 4 });
    const principals = await within(Promise.all(tokens.map((token) => verify(token, {}))), 'the verdicts');
    expect(principals.map((principal) => principal.subject)).toEqual(tokens);
    expect(issuer.maxIntrospectionsInFlight).toBeLessThanOrEqual(4);
  });

  it('refuses at once (503) what the queue cannot hold, without asking the endpoint', async () => {
    issuer.misbehave('introspect', { kind: 'late', ms: 50 });
    const tokens = Array.from({ length: 10 }, (_, index) => `opaque-${index}`);
    for (const token of tokens) issuer.introspect(token, active());
    const verify = introspector({ maxConcurrent: 2, maxQueued: 3 });
    const verdicts = await within(Promise.allSettled(tokens.map((token) => verify(token, {}))), 'the verdicts');
    const refused = verdicts.flatMap((verdict) => (verdict.status === 'rejected' ? [verdict.reason] : []));
    expect(refused).toHaveLength(5);
    for (const error of refused) expect(error).toBeInstanceOf(TokenCheckUnavailableError);
    expect(issuer.introspections).toBe(5);
  });

  it('costs one introspection for the same bad token sent 50 times at once, then 50 times more', async () => {
    const verify = introspector();
    const first = await Promise.allSettled(Array.from({ length: 50 }, () => verify('bogus', {})));
    for (let round = 0; round < 50; round++) await expect(verify('bogus', {})).rejects.toThrow(InvalidTokenError);
    expect(first.every((verdict) => verdict.status === 'rejected' && verdict.reason instanceof InvalidTokenError)).toBe(
      true,
    );
    expect(issuer.introspections).toBe(1);
  });

  it('asks again about a refused token once its refusal is forgotten', async () => {
    let now = Date.now();
    const verify = introspector({ now: () => now, negativeCacheTtlMs: 1_000 });
    await expect(verify('bogus', {})).rejects.toThrow(InvalidTokenError);
    now += 1_000;
    await expect(verify('bogus', {})).rejects.toThrow(InvalidTokenError);
    expect(issuer.introspections).toBe(2);
  });

  it('does not remember a check that could not be made', async () => {
    issuer.introspect('opaque-1', active());
    issuer.misbehave('introspect', { kind: 'answer', status: 500, body: '{}' });
    const verify = introspector();
    expect(await rejectionOf(verify('opaque-1', {}))).not.toBeInstanceOf(InvalidTokenError);
    issuer.misbehave('introspect', { kind: 'late', ms: 0 });
    await expect(verify('opaque-1', {})).resolves.toMatchObject({ subject: 'carol' });
  });
});

describe('introspection answers', () => {
  it('asks about an access token (token_type_hint)', async () => {
    await expect(introspector()('bogus', {})).rejects.toThrow(InvalidTokenError);
    expect(issuer.introspectionForms[0]?.get('token_type_hint')).toBe('access_token');
  });

  it.each(['Bearer', 'DPoP', 'access_token', 'urn:ietf:params:oauth:token-type:access_token'])(
    'accept a token whose token_type is %s',
    async (type) => {
      issuer.introspect('opaque-1', active({ token_type: type }));
      await expect(introspector()('opaque-1', {})).resolves.toMatchObject({ subject: 'carol' });
    },
  );

  it.each(['refresh_token', 'refresh', 'id_token', 'urn:ietf:params:oauth:token-type:refresh_token'])(
    'refuse a token whose token_type is %s',
    async (type) => {
      issuer.introspect('opaque-1', active({ token_type: type }));
      await expect(introspector()('opaque-1', {})).rejects.toThrow(/not an access token/);
    },
  );

  it('refuse a token whose subject is a number', async () => {
    issuer.introspect('opaque-1', active({ sub: 1001 }));
    await expect(introspector()('opaque-1', {})).rejects.toThrow(/sub claim/);
  });

  it('refuse a token whose issuer is not a string', async () => {
    issuer.introspect('opaque-1', active({ iss: 42 }));
    await expect(introspector()('opaque-1', {})).rejects.toThrow(/iss claim/);
  });

  it('refuse a token naming neither a subject nor a client', async () => {
    issuer.introspect('opaque-1', { active: true, aud: AUDIENCE });
    await expect(introspector()('opaque-1', {})).rejects.toThrow(/names no subject or client/);
  });
});

describe('JWT verification against a broken key set', () => {
  const brokenKeySets: [string, Parameters<TestIssuer['misbehave']>[1]][] = [
    ['garbage', { kind: 'answer', status: 200, body: 'this is not JSON {' }],
    ['JSON that is no key set', { kind: 'answer', status: 200, body: '{"keys":"x"}' }],
    ['a 500', { kind: 'answer', status: 500, body: 'oops' }],
    ['a 404', { kind: 'answer', status: 404, body: '{}' }],
    ['huge, sent chunked', { kind: 'huge', bytes: HUGE }],
    ['huge, with its Content-Length', { kind: 'huge', bytes: HUGE, declareLength: true }],
    ['a body that stops halfway', { kind: 'stalled-body' }],
    ['no answer at all', { kind: 'stall' }],
  ];
  it.each(brokenKeySets)('fails the check, not the token, when the key set is %s', async (_case, behaviour) => {
    issuer.misbehave('jwks', behaviour);
    const token = await issuer.sign(AUDIENCE);
    const error = await rejectionOf(jwtVerifier({ jwksFetch: { timeoutMs: 300 } })(token, {}));
    expect(error).not.toBeInstanceOf(InvalidTokenError);
    expect(String(error)).not.toContain(token);
  });

  it('accepts the same token from a key set that works', async () => {
    const token = await issuer.sign(AUDIENCE);
    await expect(jwtVerifier({ jwksFetch: { timeoutMs: 300 } })(token, {})).resolves.toMatchObject({
      subject: 'alice',
    });
  });

  it("fetches the key set once for a flood of tokens naming key ids it does not hold (jose's cooldown)", async () => {
    const verify = jwtVerifier({});
    const forged = await Promise.all(
      Array.from({ length: 20 }, (_, index) => issuer.sign(AUDIENCE, {}, { kid: `forged-${index}` })),
    );
    // One after another: concurrent checks would share one fetch anyway.
    const errors: unknown[] = [];
    for (const token of forged) errors.push(await rejectionOf(verify(token, {})));
    expect(errors.every((error) => error instanceof InvalidTokenError)).toBe(true);
    expect(issuer.jwksFetches).toBe(1);
  });

  it('answers 503, not 401, over HTTP when the key set is garbage', async () => {
    issuer.misbehave('jwks', { kind: 'answer', status: 200, body: '<html>' });
    const url = await protectedEndpoint(() => ({ jwks: issuer.jwksUrl }));
    expect(await statusOfInitialize(url, await issuer.sign(url))).toBe(503);
  });

  it('is refused at once for a key set over plain http on another host, or not over http at all', () => {
    expect(() => jwtVerifier({ jwksUrl: 'http://as.example.com/jwks' })).toThrow(TypeError);
    expect(() => jwtVerifier({ jwksUrl: 'file:///etc/jwks.json' })).toThrow(TypeError);
    expect(() => jwtVerifier({ jwksUrl: 'file:///etc/jwks.json', jwksFetch: { allowInsecureRequests: true } })).toThrow(
      TypeError,
    );
    expect(() =>
      jwtVerifier({ jwksUrl: 'http://as.example.com/jwks', jwksFetch: { allowInsecureRequests: true } }),
    ).not.toThrow();
  });
});

describe('odd JWTs', () => {
  it('refuses a token without exp', async () => {
    const token = await issuer.sign(AUDIENCE, {}, { without: ['exp'] });
    await expect(jwtVerifier()(token, {})).rejects.toThrow(
      new InvalidTokenError('the token has no exp claim (an access token must have one)'),
    );
  });

  it('refuses tokens whose subjects are numbers, which would make users 1001 and 1002 one', async () => {
    const verify = jwtVerifier();
    for (const sub of [1001, 1002]) {
      await expect(verify(await issuer.sign(AUDIENCE, { sub }), {})).rejects.toThrow(
        new InvalidTokenError("the token's sub claim is not a non-empty string"),
      );
    }
  });

  it('tells users "1001" and "1002" apart', async () => {
    const verify = jwtVerifier();
    const [first, second] = await Promise.all(
      ['1001', '1002'].map(async (sub) => verify(await issuer.sign(AUDIENCE, { sub }), {})),
    );
    expect(first!.id).not.toBe(second!.id);
  });

  it.each(['client_id', 'azp'])('refuses a token whose %s is not a string', async (claim) => {
    const token = await issuer.sign(AUDIENCE, { [claim]: ['svc'] });
    await expect(jwtVerifier()(token, {})).rejects.toThrow(`the token's ${claim} claim is not a non-empty string`);
  });

  it('refuses a token naming neither a subject nor a client', async () => {
    const token = await issuer.sign(AUDIENCE, {}, { without: ['sub', 'client_id'] });
    await expect(jwtVerifier()(token, {})).rejects.toThrow(/names no subject or client/);
  });

  it('names a client-credentials token (no subject) by its client', async () => {
    const token = await issuer.sign(AUDIENCE, { azp: 'svc' }, { without: ['sub', 'client_id'] });
    await expect(jwtVerifier()(token, {})).resolves.toMatchObject({ id: `${issuer.issuer} client:svc` });
  });
});
