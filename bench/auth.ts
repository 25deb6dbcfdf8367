/**
 * The cost of authorization on a call (issue 15 §6): `tools/call` of `echo` over Streamable HTTP on 127.0.0.1,
 * our `Client` + `StreamableHttpClientTransport` in this process, our `Server` with `createStreamableHttpHandler`
 * (`responseMode: 'json'`) in a child process (this file run with `--serve-auth <entrant>`), handshake era:
 * - none: the endpoint without `auth`, the client without an authorization (the `http` rows' `ours`);
 * - cached-token: the endpoint with `auth` (JWT access tokens, ES256, checked against the JWKS the child
 *   serves itself, fetched once and cached), the client with an `OAuthClient` whose `MemoryTokenStore` holds
 *   a token the child signed: every request carries it and is verified; no authorization server is asked;
 * - introspected-token: the same with an opaque token the endpoint introspects (RFC 7662) at the child's own
 *   introspection endpoint: once, then from its cache of answers (keyed by the token's SHA-256). It shows
 *   what a cached verdict costs, against the signature check that `cached-token` pays on every request.
 * As in bench/http.ts, each pair makes `WARM_UP_MS` of untimed calls before it is handed over.
 *
 * For bench/run.ts: `AUTH_SCENARIOS` (append to the scenarios) and `AUTH_OVERHEAD` (a ComparisonTable).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { MemoryTokenStore, OAuthClient, canonicalServerUrl } from '../lib/auth';
import { Client } from '../lib/client/client';
import { StreamableHttpClientTransport } from '../transports/http/streamable-client';
import type { ComparisonTable } from './comparisons';
import { HANDSHAKE_ERA, type BenchSettings } from './config';
import type { CallPair } from './contender';
import { measureLatency, measureThroughput } from './harness';
import type { Scenario } from './scenarios';
import { startServerChild, type ServerChild } from './server-child';

const THIS_FILE = fileURLToPath(import.meta.url);
const SERVE_FLAG = '--serve-auth';
const MCP_PATH = '/mcp';
const JWKS_PATH = '/jwks';
const CLIENT_INFO = { name: 'bench-client', version: '1.0.0' };
const CLIENT_NAME = 'bench';
const ECHO_ARGUMENTS = { text: 'hi' };
const WARM_UP_MS = 2000;

type AuthEntrantName = 'none' | 'cached-token' | 'introspected-token';
const ENTRANTS: readonly AuthEntrantName[] = ['none', 'cached-token', 'introspected-token'];
const OPAQUE_TOKEN = 'bench-opaque-token';
const INTROSPECT_PATH = '/introspect';

/** What the child tells this process once it listens: its port, and with auth a token for it. */
interface Ready {
  readonly port: number;
  readonly token?: string;
}

// ---- the server side, in the child -----------------------------------------------------------------

/** The child: our echo server on 127.0.0.1, protected unless `none` (it is its own authorization server). */
async function serve(entrant: AuthEntrantName): Promise<void> {
  const [{ Server }, { createStreamableHttpHandler }, { echoServerDefinition }] = await Promise.all([
    import('../lib/server/server'),
    import('../transports/http/streamable-server'),
    import('./ours'),
  ]);
  const server = new Server(echoServerDefinition());
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'bench', alg: 'ES256', use: 'sig' }] });
  let handler: http.RequestListener | undefined;
  let introspection = '';
  const listener = http.createServer((request, response) => {
    const json = { 'content-type': 'application/json' };
    if (request.url === JWKS_PATH) return void response.writeHead(200, json).end(jwks);
    if (request.url === INTROSPECT_PATH)
      return void request.resume().on('end', () => response.writeHead(200, json).end(introspection));
    handler!(request, response);
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const { port } = listener.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  const resource = `${origin}${MCP_PATH}`;
  const exp = Math.floor(Date.now() / 1000) + 7200;
  introspection = JSON.stringify({
    active: true,
    iss: origin,
    sub: 'bench-user',
    aud: resource,
    scope: 'mcp:read',
    exp,
  });
  const authorizationServers = [origin];
  const auth = {
    none: undefined,
    'cached-token': { resource, authorizationServers, jwks: `${origin}${JWKS_PATH}` },
    'introspected-token': {
      resource,
      authorizationServers,
      introspection: { endpoint: `${origin}${INTROSPECT_PATH}`, clientId: 'bench-rs', clientSecret: 'bench-secret' },
    },
  }[entrant];
  handler = createStreamableHttpHandler(server, { responseMode: 'json', ...(auth && { auth }) });
  const token =
    entrant === 'cached-token'
      ? await new SignJWT({ scope: 'mcp:read', client_id: CLIENT_NAME })
          .setProtectedHeader({ alg: 'ES256', kid: 'bench', typ: 'at+jwt' })
          .setIssuer(origin)
          .setAudience(resource)
          .setSubject('bench-user')
          .setIssuedAt()
          .setExpirationTime('2h')
          .sign(privateKey)
      : entrant === 'introspected-token'
        ? OPAQUE_TOKEN
        : undefined;
  process.on('disconnect', () => process.exit(0));
  process.send!({ port, ...(token !== undefined && { token }) } satisfies Ready);
}

// ---- the client side, in this process --------------------------------------------------------------

/** Starts the child for `entrant`; resolves once it listens. */
function startServer(entrant: AuthEntrantName): Promise<ServerChild<Ready>> {
  return startServerChild<Ready>(THIS_FILE, [SERVE_FLAG, entrant]);
}

/** An `OAuthClient` for `url` that already holds `token`, as after a `switchboard login`. */
async function oauthClientHolding(url: string, token: string): Promise<OAuthClient> {
  const store = new MemoryTokenStore();
  await store.update({ server: canonicalServerUrl(new URL(url)), client: CLIENT_NAME }, () => ({
    tokens: { accessToken: token, tokenType: 'Bearer', expiresAt: Date.now() + 7_200_000, scope: 'mcp:read' },
  }));
  return new OAuthClient(url, { store, clientName: CLIENT_NAME });
}

/** Our client connected to the `entrant` child, warmed up; closing it stops the child. */
async function connectEntrant(entrant: AuthEntrantName): Promise<CallPair> {
  const server = await startServer(entrant);
  const url = `http://127.0.0.1:${server.ready.port}${MCP_PATH}`;
  let client: Client | undefined;
  try {
    const token = server.ready.token;
    const authorization = token === undefined ? undefined : await oauthClientHolding(url, token);
    const transport = new StreamableHttpClientTransport(url, authorization ? { authorization } : {});
    const connected = await new Client(CLIENT_INFO, HANDSHAKE_ERA).connect(transport);
    client = connected;
    const warmUntil = performance.now() + WARM_UP_MS;
    while (performance.now() < warmUntil) await connected.callTool('echo', ECHO_ARGUMENTS);
    return {
      callEcho: () => connected.callTool('echo', ECHO_ARGUMENTS),
      close: async () => {
        try {
          await connected.close();
        } finally {
          await server.stop();
        }
      },
    };
  } catch (error) {
    await client?.close().catch(() => undefined);
    await server.stop();
    throw error;
  }
}

async function authToolCalls(entrant: AuthEntrantName, settings: BenchSettings) {
  const pair = await connectEntrant(entrant);
  try {
    const sequential = await measureLatency(pair.callEcho, settings.ioWindow);
    const concurrentPerSecond = await measureThroughput(pair.callEcho, settings.httpConcurrency, settings.ioWindow);
    return { sequentialPerSecond: sequential.perSecond, sequentialP50Us: sequential.p50Us, concurrentPerSecond };
  } finally {
    await pair.close();
  }
}

export const AUTH_SCENARIOS: readonly Scenario[] = [
  {
    id: 'authHttp',
    entrants: ENTRANTS.map((name) => ({
      name,
      measure: (settings: BenchSettings) => authToolCalls(name, settings),
    })),
  },
];

const AUTH_NOTE =
  'tools/call of echo over Streamable HTTP (handshake era, JSON responses), server as a child process. none = no auth on the endpoint or the client; cached-token = the endpoint with auth (JWT ES256, JWKS fetched once from the child and cached by jose, verified on every request) and the client with an OAuthClient over a MemoryTokenStore holding a token beforehand (no authorization server is asked); introspected-token = the same with an opaque token introspected once at the child and then answered from the endpoint cache of answers. 1 in flight: calls / summed latency; 64 in flight: completed calls / wall time.';

const row = (
  figure: string,
  label: string,
  unit: string,
  better: 'higher' | 'lower',
  subject: AuthEntrantName = 'cached-token',
) => ({
  label,
  unit,
  better,
  subject: { scenario: 'authHttp', entrant: subject, figure },
  baseline: { scenario: 'authHttp', entrant: 'none', figure },
});

export const AUTH_OVERHEAD: ComparisonTable = {
  title:
    'Authorization: a call with a cached token vs an unauthenticated call over Streamable HTTP (target: latency <= 1.05x)',
  subjectName: 'cached-token',
  baselineName: 'none',
  comparisons: [
    {
      ...row('sequentialP50Us', 'cached token vs no auth, 1 in flight, p50', 'us', 'lower'),
      target: { bound: 'atMost', ratio: 1.05, text: '<= 1.05x' },
      note: AUTH_NOTE,
    },
    row('sequentialPerSecond', 'cached token vs no auth, 1 in flight', 'calls/s', 'higher'),
    row('concurrentPerSecond', 'cached token vs no auth, 64 in flight', 'calls/s', 'higher'),
    row(
      'sequentialP50Us',
      'introspected token (cached answer) vs no auth, 1 in flight, p50',
      'us',
      'lower',
      'introspected-token',
    ),
    row(
      'concurrentPerSecond',
      'introspected token (cached answer) vs no auth, 64 in flight',
      'calls/s',
      'higher',
      'introspected-token',
    ),
  ],
};

const serveIndex = process.argv.indexOf(SERVE_FLAG);
if (serveIndex !== -1 && process.argv[1] !== undefined && pathToFileURL(process.argv[1]).href === import.meta.url) {
  serve(process.argv[serveIndex + 1] as AuthEntrantName).catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
