/**
 * The CORS decisions on their own (pure functions of the options, the method and the headers): which origins
 * are allowed, what a preflight is answered, what a real answer carries, and what is refused as an attacker
 * would try it (a forged list of origins, `null`, odd methods and headers, a flood of header names).
 */
import { describe, expect, it } from 'vitest';
import {
  CORS_REQUEST_HEADERS,
  corsPolicy,
  decideCors,
  MAX_PREFLIGHT_HEADERS,
  type CorsOptions,
  type CorsVerdict,
} from '../../../transports/http/cors';

const APP = 'https://app.example';

/** The decision for a request of `method` with these headers, under `options` (on an endpoint without auth). */
function decide(options: CorsOptions, method: string, headers: Record<string, string>, authenticated = false) {
  return decideCors(corsPolicy(options, authenticated), method, (name) => headers[name]);
}

/** A verdict's headers as a record (names are unique in each). */
function headersOf(verdict: CorsVerdict): Record<string, string> {
  const record: Record<string, string> = {};
  for (let index = 0; index < verdict.headers.length; index += 2)
    record[verdict.headers[index]!] = verdict.headers[index + 1]!;
  return record;
}

function preflight(origin: string, method = 'POST', headers = 'content-type, mcp-protocol-version') {
  return { origin, 'access-control-request-method': method, 'access-control-request-headers': headers };
}

describe('CORS origins', () => {
  it('allows a listed origin, normalised as browsers send it, and nothing else', () => {
    const policy = corsPolicy({ origins: ['https://App.Example:443/', 'http://127.0.0.1:5173'] }, false);
    expect(policy.allows(APP)).toBe(true);
    expect(policy.allows('http://127.0.0.1:5173')).toBe(true);
    for (const other of ['https://app.example.evil', 'http://app.example', 'https://app.example:8443', 'null']) {
      expect(policy.allows(other)).toBe(false);
    }
  });

  it('asks a predicate only about well-formed single origins', () => {
    const asked: string[] = [];
    const policy = corsPolicy({ origins: (origin) => (asked.push(origin), origin.endsWith('.example.com')) }, false);
    expect(policy.allows('https://a.example.com')).toBe(true);
    // Two Origin headers joined into one, a path, the opaque `null` origin: never a match, never asked.
    for (const forged of ['https://evil.test, https://a.example.com', 'https://evil.test/x.example.com', 'null']) {
      expect(policy.allows(forged)).toBe(false);
    }
    expect(asked).toEqual(['https://a.example.com']);
  });

  it("refuses '*' on an endpoint without auth, saying why, and allows any origin (never null) with auth", () => {
    expect(() => corsPolicy({ origins: '*' }, false)).toThrow(/'\*' is only allowed on an endpoint with auth/);
    const policy = corsPolicy({ origins: '*' }, true);
    expect(policy.allows('https://anyone.example')).toBe(true);
    expect(policy.allows('null')).toBe(false);
    expect(policy.allows('https://a.example, https://b.example')).toBe(false);
  });

  it('refuses entries that are not origins, naming them', () => {
    for (const bad of [
      'https://app.example/mcp',
      'app.example',
      'null',
      ' https://app.example',
      'https://u:p@app.example',
    ]) {
      expect(() => corsPolicy({ origins: [bad] }, false), bad).toThrow(/cors\.origins: .* is not an origin/);
    }
    expect(() => corsPolicy({ origins: 'https://app.example' as never }, false)).toThrow(/must be a list of origins/);
    expect(() => corsPolicy({ origins: [APP], allowHeaders: ['x bad'] }, false)).toThrow(/"x bad" is not a header/);
    expect(() => corsPolicy({ origins: [APP], maxAgeSeconds: -1 }, false)).toThrow(/maxAgeSeconds/);
  });
});

describe('a CORS preflight', () => {
  it('from an allowed origin is answered 204 with the methods, the MCP headers and the max age', () => {
    const verdict = decide({ origins: [APP] }, 'OPTIONS', preflight(APP, 'POST', 'Content-Type, Mcp-Param-Region'));
    expect(verdict.kind).toBe('preflight');
    const headers = headersOf(verdict);
    expect(headers['access-control-allow-origin']).toBe(APP);
    expect(headers['access-control-allow-methods']).toBe('GET, POST, DELETE');
    const allowed = headers['access-control-allow-headers']!.split(', ');
    expect(allowed).toEqual(expect.arrayContaining([...CORS_REQUEST_HEADERS, 'mcp-param-region']));
    expect(headers['access-control-max-age']).toBe('7200');
    expect(headers.vary).toMatch(/^Origin\b/);
    expect(headers['access-control-allow-private-network']).toBeUndefined();
  });

  it('grants Private Network Access when asked, and takes a max age and extra headers from the options', () => {
    const verdict = decide({ origins: [APP], maxAgeSeconds: 60, allowHeaders: ['X-Api-Key'] }, 'OPTIONS', {
      ...preflight(APP, 'GET', 'x-api-key'),
      'access-control-request-private-network': 'true',
    });
    const headers = headersOf(verdict);
    expect([verdict.kind, headers['access-control-max-age']]).toEqual(['preflight', '60']);
    expect(headers['access-control-allow-headers']).toContain('x-api-key');
    expect(headers['access-control-allow-private-network']).toBe('true');
  });

  it('is refused, without a grant, for an origin not allowed', () => {
    const verdict = decide({ origins: [APP] }, 'OPTIONS', preflight('https://evil.example'));
    expect(verdict).toMatchObject({ kind: 'refuse', status: 403 });
    expect((verdict as { message: string }).message).toMatch(/origin "https:\/\/evil\.example" is not allowed/);
    expect(headersOf(verdict)['access-control-allow-origin']).toBeUndefined();
  });

  it('is refused for a method the endpoint does not have, quoting it bounded', () => {
    for (const method of ['PUT', 'PATCH', 'post', 'TRACE', 'X'.repeat(5000)]) {
      const verdict = decide({ origins: [APP] }, 'OPTIONS', preflight(APP, method));
      expect(verdict.kind, method).toBe('refuse');
      const { message } = verdict as { message: string };
      expect(message).toMatch(/method ".*" is not allowed \(allowed: GET, POST, DELETE\)/);
      expect(message.length).toBeLessThan(200);
    }
  });

  it('is refused for a header that is not an MCP one, and for too many headers', () => {
    for (const odd of ['cookie', 'x-forwarded-for', 'mcp-param-', 'mcp-param-a b', 'host']) {
      const verdict = decide({ origins: [APP] }, 'OPTIONS', preflight(APP, 'POST', `content-type, ${odd}`));
      expect(verdict.kind, odd).toBe('refuse');
      expect((verdict as { message: string }).message).toMatch(/request header ".*" is not allowed/);
    }
    const many = Array.from({ length: MAX_PREFLIGHT_HEADERS + 1 }, (_, index) => `mcp-param-p${index}`).join(',');
    const verdict = decide({ origins: [APP] }, 'OPTIONS', preflight(APP, 'POST', many));
    expect((verdict as { message: string }).message).toMatch(/65 request headers asked for, more than 64/);
  });
});

describe('a real request', () => {
  it('from an allowed origin carries the grant and the exposed headers', () => {
    const verdict = decide({ origins: [APP], exposeHeaders: ['X-Trace'] }, 'POST', { origin: APP });
    expect(verdict.kind).toBe('serve');
    expect(headersOf(verdict)).toEqual({
      'access-control-allow-origin': APP,
      'access-control-expose-headers': 'Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate, DPoP-Nonce, X-Trace',
      vary: 'Origin',
    });
  });

  it('from another origin, or without one, carries only Vary: Origin', () => {
    for (const headers of [{ origin: 'https://evil.example' }, {}] as Record<string, string>[]) {
      expect(decide({ origins: [APP] }, 'POST', headers)).toEqual({ kind: 'serve', headers: ['vary', 'Origin'] });
    }
  });

  it('is any request but an OPTIONS asking for a method: those get the grant and are served', () => {
    const asking = { origin: APP, 'access-control-request-method': 'POST' };
    for (const [method, headers] of [
      ['GET', asking],
      ['OPTIONS', { origin: APP }],
    ] as const) {
      const verdict = decide({ origins: [APP] }, method, headers);
      expect([verdict.kind, headersOf(verdict)['access-control-allow-origin']]).toEqual(['serve', APP]);
    }
  });
});
