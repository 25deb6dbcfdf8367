/**
 * A stand-in authorization server for the resource-server tests: an RSA key pair, its JWKS served on
 * 127.0.0.1 (counting fetches), access tokens signed with jose, and an RFC 7662 introspection endpoint
 * answering from a table of tokens (counting calls). The full test authorization server lives elsewhere;
 * this is only what a resource server sees of one.
 */
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import { listenHttp } from './http';

export interface TestIssuer {
  /** The issuer identifier (`iss`), the server's origin. */
  readonly issuer: string;
  readonly jwksUrl: string;
  readonly introspectionUrl: string;
  /** Fetches of the JWKS so far. */
  readonly jwksFetches: number;
  /** Introspection requests so far. */
  readonly introspections: number;
  /** A signed access token: `sub` alice, `aud` the given audience, 5 minutes, `typ: at+jwt`, unless overridden. */
  sign(audience: string, claims?: JWTPayload, options?: SignOptions): Promise<string>;
  /** What introspection answers for `token` (not listed: `{ active: false }`). */
  introspect(token: string, answer: Record<string, unknown>): void;
}

export interface SignOptions {
  /** Sign with a key the JWKS does not hold (same `kid`). */
  readonly foreignKey?: boolean;
  readonly typ?: string;
}

const KID = 'test-key';

export async function startTestIssuer(): Promise<TestIssuer> {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const foreign = await generateKeyPair('RS256');
  const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: KID, alg: 'RS256', use: 'sig' }] });
  const answers = new Map<string, Record<string, unknown>>();
  let jwksFetches = 0;
  let introspections = 0;
  const { origin } = await listenHttp((request, response) => {
    if (request.url === '/jwks') {
      jwksFetches++;
      response.writeHead(200, { 'content-type': 'application/json' }).end(jwks);
      return;
    }
    if (request.url === '/introspect' && request.method === 'POST') {
      introspections++;
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        const token = new URLSearchParams(body).get('token') ?? '';
        const answer = answers.get(token) ?? { active: false };
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
      });
      return;
    }
    response.writeHead(404).end();
  });
  return {
    issuer: origin,
    jwksUrl: `${origin}/jwks`,
    introspectionUrl: `${origin}/introspect`,
    get jwksFetches() {
      return jwksFetches;
    },
    get introspections() {
      return introspections;
    },
    sign(audience, claims = {}, options = {}) {
      const key = options.foreignKey ? foreign.privateKey : privateKey;
      return new SignJWT({ client_id: 'test-client', scope: 'mcp:read', ...claims })
        .setProtectedHeader({ alg: 'RS256', kid: KID, typ: options.typ ?? 'at+jwt' })
        .setIssuer(claims.iss ?? origin)
        .setSubject(claims.sub ?? 'alice')
        .setAudience(claims.aud ?? audience)
        .setIssuedAt()
        .setExpirationTime(claims.exp ?? '5m')
        .sign(key);
    },
    introspect(token, answer) {
      answers.set(token, answer);
    },
  };
}
