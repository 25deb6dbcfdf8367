/**
 * `npm run bench:auth-cost`: what the resource server's check costs one request, in CPU time, with no
 * network in the way (the latency figures of `--only authHttp` move by more than this from run to run):
 * - a Bearer token whose verdict is cached: the header scan, the parse, the constant-time comparison with
 *   the previous token, the cache lookup (the path every request of a client takes after its first);
 * - a DPoP-bound token whose verdict is cached, with a fresh proof each request: the same plus the proof's
 *   signature and claims, its replay check and the key's thumbprint (a proof differs every request, so it
 *   is checked every request).
 */
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, base64url } from 'jose';
import { createHash, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ResourceServer } from '../lib/auth/server/resource-server';
import type { Principal } from '../lib/auth/server/principal';
import { HttpAuth } from '../transports/http/http-auth';

const BEARER_CALLS = 200_000;
const DPOP_CALLS = 2_000;
const ROUNDS = 7;
const RESOURCE = 'http://127.0.0.1:1/mcp';
const TOKEN = `eyJhbGciOiJFUzI1NiIsInR5cCI6ImF0K2p3dCJ9.${'x'.repeat(480)}.signature`;
const silent = { debug() {}, info() {}, warn() {}, error() {} };

function endpointFor(principal: Principal): HttpAuth {
  const server = new ResourceServer({
    resource: RESOURCE,
    authorizationServers: ['http://127.0.0.1:2'],
    verifier: async () => principal,
    verdictCache: { maxEntries: 100, ttlMs: 3_600_000 },
  });
  return new HttpAuth(server, silent as never);
}

/** A POST as node:http hands it over: the headers a session's request carries. */
function request(authorization: string, proof?: string): IncomingMessage {
  const rawHeaders = [
    'Host', '127.0.0.1:1',
    'Content-Type', 'application/json',
    'Accept', 'application/json, text/event-stream',
    'Authorization', authorization,
    ...(proof === undefined ? [] : ['DPoP', proof]),
    'Mcp-Session-Id', '9f1c6d2e-3b4a-4c5d-8e7f-001122334455',
    'Mcp-Protocol-Version', '2025-11-25',
    'Content-Length', '84',
  ]; // prettier-ignore
  const headers: Record<string, string> = {};
  for (let index = 0; index < rawHeaders.length; index += 2)
    headers[rawHeaders[index]!.toLowerCase()] = rawHeaders[index + 1]!;
  return { method: 'POST', url: '/mcp', headers, rawHeaders } as unknown as IncomingMessage;
}

/** Best CPU time per call over the rounds, in µs. */
async function cpuPerCall(calls: number, call: (index: number) => unknown): Promise<number> {
  let best = Infinity;
  for (let round = 0; round < ROUNDS; round++) {
    const start = process.cpuUsage();
    for (let index = 0; index < calls; index++) {
      const outcome = call(round * calls + index);
      if (outcome instanceof Promise) {
        if ((await outcome) === undefined) throw new Error('refused');
      } else if (outcome === undefined) throw new Error('refused');
    }
    const used = process.cpuUsage(start);
    best = Math.min(best, (used.user + used.system) / calls);
  }
  return best;
}

const response = {} as ServerResponse;
const principal: Principal = Object.freeze({ id: 'x sub:a', subject: 'a', scopes: ['mcp'], claims: { sub: 'a' } });
const bearer = endpointFor(principal);
const bearerRequest = request(`Bearer ${TOKEN}`);
const bearerUs = await cpuPerCall(BEARER_CALLS, () => bearer.authenticate(bearerRequest, response));

const key = await generateKeyPair('ES256');
const jwk = await exportJWK(key.publicKey);
const jkt = await calculateJwkThumbprint(jwk);
const dpop = endpointFor({ ...principal, claims: { sub: 'a', cnf: { jkt } } });
const ath = base64url.encode(createHash('sha256').update(TOKEN).digest());
const proofs: string[] = [];
for (let index = 0; index < DPOP_CALLS * ROUNDS; index++) {
  proofs.push(
    await new SignJWT({ htm: 'POST', htu: RESOURCE, ath })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk })
      .setIssuedAt()
      .setJti(randomUUID())
      .sign(key.privateKey),
  );
}
const dpopRequests = proofs.map((proof) => request(`DPoP ${TOKEN}`, proof));
const dpopUs = await cpuPerCall(DPOP_CALLS, (index) => dpop.authenticate(dpopRequests[index]!, response));

console.log(`resource server, CPU per request (best of ${ROUNDS} rounds), node ${process.version}`);
console.log(`  Bearer, verdict cached:                 ${bearerUs.toFixed(2)} µs`);
console.log(`  DPoP, verdict cached, a proof checked:  ${dpopUs.toFixed(1)} µs`);
