/**
 * The Streamable HTTP server under hostile bodies: a real `node:http` server on 127.0.0.1 (port 0) and raw
 * `fetch` POSTs into one initialized session, garbage bodies and valid calls sent concurrently. Every body
 * gets its answer: 400 with -32700 when it is not JSON, 400 with -32600 when it is not a valid JSON-RPC
 * envelope, 413 over the body limit, 202 for a notification or response, and 200 with exactly the response
 * of its id for a request (-32601, -32602 or a result); never a 500. Error bodies stay under 1 KiB, each
 * valid call gets its own result, and afterwards the session still serves with nothing leaked. Also run by
 * `npm run fuzz -- --cases N --seed S`.
 */
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { Server } from '../../lib/server/server';
import { createStreamableHttpHandler, type StreamableHttpHandler } from '../../transports/http/streamable-server';
import { listenHttp } from '../helpers/http';
import {
  deepJsonrpcLine,
  modernCall,
  modernCallText,
  nested,
  rawLine,
  traffic,
  type ModernCall,
  type Traffic,
} from './arbitraries';
import { fuzzCases, fuzzParameters, fuzzTimeout } from './config';
import { FUZZ_MAX_MESSAGE_BYTES, fuzzDefinition } from './definition';
import {
  HANDSHAKE_ERA_VERSIONS,
  INVALID_REQUEST,
  MAX_ERROR_MESSAGE_CHARS,
  PARSE_ERROR,
  idKey,
  modernHttpExpectation,
  planTraffic,
  type Expectation,
} from './oracle';
import { watchProcessFaults } from './process-faults';

const VERSION = '2025-11-25';

interface Site {
  readonly url: string;
  readonly handler: StreamableHttpHandler;
  readonly headers: Record<string, string>;
}

async function post(site: Pick<Site, 'url'>, body: Buffer | string, headers: Record<string, string> = {}) {
  const response = await fetch(site.url, {
    method: 'POST',
    headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : new Uint8Array(body),
  });
  const text = await response.text();
  return { status: response.status, text, headers: response.headers };
}

async function openSite(server = new Server(fuzzDefinition)): Promise<Site> {
  const handler = createStreamableHttpHandler(server, {
    responseMode: 'json',
    maxBodyBytes: FUZZ_MAX_MESSAGE_BYTES,
  });
  const { origin } = await listenHttp(handler);
  const url = `${origin}/mcp`;
  const initialize = await post(
    { url },
    JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'fuzz', version: '0' } },
    }),
  );
  expect(initialize.status).toBe(200);
  const headers = { 'mcp-session-id': initialize.headers.get('mcp-session-id')!, 'mcp-protocol-version': VERSION };
  expect((await post({ url }, '{"jsonrpc":"2.0","method":"notifications/initialized"}', headers)).status).toBe(202);
  return { url, handler, headers };
}

function parsed(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return { unparsable: text.slice(0, 200) };
  }
}

function expectBoundedError(body: any, code: number): void {
  expect(body, 'an HTTP refusal carries a JSON-RPC error').toMatchObject({ jsonrpc: '2.0', error: { code } });
  expect(String(body.error.message).length, 'an error message is bounded').toBeLessThanOrEqual(MAX_ERROR_MESSAGE_CHARS);
}

/** Checks one POST's answer against what its body calls for. */
function checkAnswer(line: Buffer, expectation: Expectation, answer: { status: number; text: string }): void {
  const what = `the answer to ${line.toString('utf8').slice(0, 120)}`;
  expect(answer.status, `${what}: never a server error`).toBeLessThan(500);
  if (line.length > FUZZ_MAX_MESSAGE_BYTES) {
    expect(answer.status, what).toBe(413);
    return;
  }
  const body = parsed(answer.text);
  if (expectation.kind === 'idless' || expectation.invalidEnvelope) {
    // Not JSON-RPC at all (a broken response included): refused as a bad request before any session sees it.
    const code = expectation.kind === 'idless' ? expectation.code : INVALID_REQUEST;
    expect(answer.status, what).toBe(400);
    expectBoundedError(body, code === PARSE_ERROR ? PARSE_ERROR : INVALID_REQUEST);
    return;
  }
  if (expectation.kind === 'silent') {
    expect(answer.status, what).toBe(202);
    return;
  }
  expect(answer.status, what).toBe(200);
  expect(idKey(body.id), `${what}: the response carries the request's id`).toBe(idKey(expectation.id));
  const outcome = body.error ? body.error.code : 'result';
  expect(expectation.outcomes, `${what}: outcome ${outcome}`).toContain(outcome);
  if (body.error) expectBoundedError(body, outcome);
  if (expectation.echo !== undefined) expect(body.result.content[0].text).toBe(expectation.echo);
}

/** One case: every body POSTed at once, each answer checked, then the session still serves and holds nothing. */
async function runHttpCase(site: Site, lines: Traffic): Promise<void> {
  const plan = planTraffic(lines, 'body', FUZZ_MAX_MESSAGE_BYTES);
  expect(plan.batchAnswers, 'no batch is served at 2025-11-25').toBe(0);
  const answers = await Promise.all(plan.lines.map((line) => post(site, line, site.headers)));
  plan.lines.forEach((line, index) => checkAnswer(line, plan.expectations[index]!, answers[index]!));
  const stats = await post(
    site,
    JSON.stringify({ jsonrpc: '2.0', id: 'stats', method: 'tools/call', params: { name: 'stats', arguments: {} } }),
    site.headers,
  );
  expect(stats.status).toBe(200);
  expect(JSON.parse(parsed(stats.text).result.content[0].text)).toEqual({ pendingRequests: 0, activeHandlers: 1 });
  expect(site.handler.sessionCount, 'no session opened or lost by garbage').toBe(1);
}

const HOSTILE_BODIES: Record<string, string> = {
  'a "jsonrpc" member nesting objects 5,000 deep': deepJsonrpcLine(5_000),
  'a "jsonrpc" member nesting objects 2,000 deep': deepJsonrpcLine(2_000),
  'params nesting arrays 5,000 deep': `{"jsonrpc":"2.0","id":7,"method":"ping","params":${nested(5_000, 'array')}}`,
  'a method name of 100,000 characters': `{"jsonrpc":"2.0","id":8,"method":"${'m'.repeat(100_000)}"}`,
};

describe('fuzz: a Streamable HTTP server', () => {
  const CASES = 120;
  let site: Site;
  const faults = watchProcessFaults();
  afterAll(() => faults.stop());

  for (const [name, body] of Object.entries(HOSTILE_BODIES)) {
    it(`answers ${name} with 400 and a bounded error, and serves the next call`, async () => {
      const own = await openSite();
      await runHttpCase(own, [{ garbage: rawLine(Buffer.from(body)) }, { valid: { kind: 'ping' } }]);
      await own.handler.close();
      expect(faults.seen.splice(0)).toEqual([]);
    });
  }

  it(
    `answers every body of ${fuzzCases(CASES)} bursts of concurrent POSTs as HTTP and JSON-RPC say, and stays up with nothing leaked`,
    async () => {
      site = await openSite();
      await fc.assert(
        fc.asyncProperty(traffic(20), (lines) => runHttpCase(site, lines)),
        fuzzParameters('server http', CASES),
      );
      await site.handler.close();
      expect(faults.seen.splice(0)).toEqual([]);
    },
    fuzzTimeout(40_000, CASES),
  );
});

/**
 * The headers a client mirrors from a modern call: the claimed revision (2026-07-28 when the claim is no
 * string or names a handshake-era revision, whose header would take the POST to that era's path), the method, the tool.
 */
function modernHeaders(call: ModernCall): Record<string, string> {
  const claim: unknown = JSON.parse(call.claimText);
  const mirrored = typeof claim === 'string' && claim !== '' && !HANDSHAKE_ERA_VERSIONS.has(claim);
  return {
    'mcp-protocol-version': mirrored ? claim : '2026-07-28',
    'mcp-method': call.method,
    ...(call.method === 'tools/call' && { 'mcp-name': 'echo' }),
  };
}

/** One burst of sessionless 2026-07-28 POSTs: each answered as the revision's ladder says; the server holds nothing after. */
async function runModernCase(site: Site, server: Server, calls: readonly ModernCall[]): Promise<void> {
  const texts = calls.map((call, n) => modernCallText(call, JSON.stringify(`m-${n}`)));
  const answers = await Promise.all(texts.map((text, n) => post(site, text, modernHeaders(calls[n]!))));
  answers.forEach((answer, n) => {
    const expected = modernHttpExpectation(calls[n]!, texts[n]!, FUZZ_MAX_MESSAGE_BYTES);
    const what = `the answer to ${texts[n]!.slice(0, 160)}`;
    expect(answer.status, what).toBe(expected.status);
    if (expected.status === 413) return;
    const body = parsed(answer.text);
    if (expected.echoesId) expect(body.id, `${what}: the id`).toBe(`m-${n}`);
    if (expected.outcome === 'result') {
      expect(body.result?.resultType, what).toBe('complete');
      if (expected.echo !== undefined) expect(body.result.content[0].text, what).toBe(expected.echo);
    } else expectBoundedError(body, expected.outcome);
  });
  expect(server.listenStreams.size, 'no listen stream left').toBe(0);
  expect(site.handler.sessionCount, 'no session opened by a sessionless request').toBe(1);
  expect(({} as Record<string, unknown>).polluted, 'Object.prototype untouched').toBeUndefined();
}

describe('fuzz: a Streamable HTTP server, sessionless 2026-07-28 requests', () => {
  const CASES = 80;
  const faults = watchProcessFaults();
  afterAll(() => faults.stop());

  it(
    `answers every request of ${fuzzCases(CASES)} bursts of hostile modern POSTs as the revision's ladder says, with nothing held after`,
    async () => {
      const server = new Server(fuzzDefinition);
      const site = await openSite(server);
      await fc.assert(
        fc.asyncProperty(fc.array(modernCall, { minLength: 1, maxLength: 12 }), (calls) =>
          runModernCase(site, server, calls),
        ),
        fuzzParameters('server http modern', CASES),
      );
      await site.handler.close();
      expect(faults.seen.splice(0)).toEqual([]);
    },
    fuzzTimeout(40_000, CASES),
  );
});
