/**
 * A stand-in authorization server for the resource-server tests: an RSA key pair, its JWKS served on
 * 127.0.0.1 (counting fetches), access tokens signed with jose, and an RFC 7662 introspection endpoint
 * answering from a table of tokens (counting calls, and how many are answered at once). Either endpoint can
 * be told to misbehave as a hostile or broken server would: stall, answer garbage or another status, send a
 * huge body, stop halfway through one, or answer late. The full test authorization server lives elsewhere;
 * this is only what a resource server sees of one.
 */
import type http from 'node:http';
import { exportJWK, generateKeyPair, SignJWT, type GenerateKeyPairResult } from 'jose';
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
  /** The form of each introspection request so far, in order. */
  readonly introspectionForms: readonly URLSearchParams[];
  /** The most introspection requests the endpoint held at once (received, not yet answered). */
  readonly maxIntrospectionsInFlight: number;
  /**
   * A signed access token: `sub` alice, `client_id` test-client, `scope` mcp:read, `aud` the given audience,
   * 5 minutes, `typ: at+jwt`, unless `claims` say otherwise (any JSON value: a number `sub` too).
   */
  sign(audience: string, claims?: Record<string, unknown>, options?: SignOptions): Promise<string>;
  /** What introspection answers for `token` (not listed: `{ active: false }`). */
  introspect(token: string, answer: Record<string, unknown>): void;
  /** How `endpoint` behaves from now on. */
  misbehave(endpoint: 'jwks' | 'introspect', behaviour: Misbehaviour): void;
}

export interface SignOptions {
  /** Sign with a key the JWKS does not hold (same `kid`). */
  readonly foreignKey?: boolean;
  readonly typ?: string;
  /** The `kid` header (default the JWKS's one). */
  readonly kid?: string;
  /** Claims left out of the token (`exp`, `sub`, `client_id`...). */
  readonly without?: readonly string[];
}

/** What a misbehaving endpoint does with each request. */
export type Misbehaviour =
  /** Accepts the request and never answers. */
  | { readonly kind: 'stall' }
  /** This answer instead of the right one. */
  | { readonly kind: 'answer'; readonly status: number; readonly body: string }
  /** The right answer with a `pad` member making it `bytes` long or more; chunked unless `declareLength`. */
  | { readonly kind: 'huge'; readonly bytes: number; readonly declareLength?: boolean }
  /** The status, the headers and half of the right answer; then nothing. */
  | { readonly kind: 'stalled-body' }
  /** The right answer, `ms` late. */
  | { readonly kind: 'late'; readonly ms: number };

const KID = 'test-key';

/**
 * The signing key and a foreign one, made once per test process: an RSA key pair takes 100-400 ms to make,
 * and the suites start an issuer for every test. Each issuer is still its own (its own origin and `iss`).
 */
let keyPairs: Promise<[GenerateKeyPairResult, GenerateKeyPairResult]> | undefined;

export async function startTestIssuer(): Promise<TestIssuer> {
  const [{ publicKey, privateKey }, foreign] = await (keyPairs ??= Promise.all([
    generateKeyPair('RS256'),
    generateKeyPair('RS256'),
  ]));
  const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: KID, alg: 'RS256', use: 'sig' }] };
  const answers = new Map<string, Record<string, unknown>>();
  const behaviours = new Map<string, Misbehaviour>();
  const introspectionForms: URLSearchParams[] = [];
  let jwksFetches = 0;
  let introspectionsInFlight = 0;
  let maxIntrospectionsInFlight = 0;

  const { origin } = await listenHttp((request, response) => {
    if (request.url === '/jwks') {
      jwksFetches++;
      respond(response, jwks, behaviours.get('jwks'));
      return;
    }
    if (request.url === '/introspect' && request.method === 'POST') {
      maxIntrospectionsInFlight = Math.max(maxIntrospectionsInFlight, ++introspectionsInFlight);
      let answered = false;
      const answering = () => {
        if (!answered) introspectionsInFlight--;
        answered = true;
      };
      response.on('close', answering);
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        const form = new URLSearchParams(body);
        introspectionForms.push(form);
        const answer = answers.get(form.get('token') ?? '') ?? { active: false };
        respond(response, answer, behaviours.get('introspect'), answering);
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
      return introspectionForms.length;
    },
    introspectionForms,
    get maxIntrospectionsInFlight() {
      return maxIntrospectionsInFlight;
    },
    sign(audience, claims = {}, options = {}) {
      const now = Math.floor(Date.now() / 1000);
      const payload: Record<string, unknown> = {
        iss: origin,
        sub: 'alice',
        aud: audience,
        client_id: 'test-client',
        scope: 'mcp:read',
        iat: now,
        exp: now + 300,
        ...claims,
      };
      for (const claim of options.without ?? []) delete payload[claim];
      return new SignJWT(payload)
        .setProtectedHeader({ alg: 'RS256', kid: options.kid ?? KID, typ: options.typ ?? 'at+jwt' })
        .sign(options.foreignKey ? foreign.privateKey : privateKey);
    },
    introspect(token, answer) {
      answers.set(token, answer);
    },
    misbehave(endpoint, behaviour) {
      behaviours.set(endpoint, behaviour);
    },
  };
}

/** Sends `document` as JSON, or what `behaviour` says instead; `answering` just before the last byte goes. */
function respond(
  response: http.ServerResponse,
  document: object,
  behaviour: Misbehaviour | undefined,
  answering: () => void = () => undefined,
): void {
  const json = { 'content-type': 'application/json' };
  const send = (status: number, body: string) => {
    answering();
    response.writeHead(status, { ...json, 'content-length': Buffer.byteLength(body) }).end(body);
  };
  switch (behaviour?.kind) {
    case undefined:
      return send(200, JSON.stringify(document));
    case 'stall':
      return;
    case 'answer':
      return send(behaviour.status, behaviour.body);
    case 'late': {
      const timer = setTimeout(() => send(200, JSON.stringify(document)), behaviour.ms);
      response.on('close', () => clearTimeout(timer));
      return;
    }
    case 'stalled-body': {
      const body = JSON.stringify(document);
      response.writeHead(200, json).write(body.slice(0, body.length / 2));
      return;
    }
    case 'huge': {
      const body = JSON.stringify({ ...document, pad: 'x'.repeat(behaviour.bytes) });
      if (behaviour.declareLength) return send(200, body);
      // A first write sends the headers without a Content-Length: the body comes chunked, its size unknown.
      response.writeHead(200, json).write(body.slice(0, 1024));
      answering();
      response.end(body.slice(1024));
      return;
    }
  }
}
