/**
 * The client's era probe verdicts (lib/client/era-probe.ts), the verdict cache and the modern envelope
 * (lib/client/modern-request-stamp.ts), as pure functions: no transport.
 */
import { describe, expect, it } from 'vitest';
import { EraCache } from '../../lib/client/era-cache';
import { forcedEra } from '../../lib/client/era-negotiation';
import { classifyProbe, type ProbeOutcome } from '../../lib/client/era-probe';
import { isHandshakeEraFailure, ModernRequestStamp } from '../../lib/client/modern-request-stamp';
import { McpError, TransportError } from '../../lib/jsonrpc/errors';
import { HttpStatusError } from '../../transports/http/client-request';

const OURS = ['2026-07-28'];
const discover = (supportedVersions: string[]): ProbeOutcome => ({
  kind: 'result',
  result: {
    supportedVersions,
    capabilities: { tools: {} },
    _meta: { 'io.modelcontextprotocol/serverInfo': { name: 's', version: '1' } },
  },
});
const rpcError = (code: number, data?: unknown): ProbeOutcome => ({ kind: 'rpc-error', code, message: 'no', data });
const httpError = (status: number): ProbeOutcome => ({
  kind: 'http-error',
  status,
  error: new Error(`HTTP ${status}`),
});

describe('classifyProbe', () => {
  it('a DiscoverResult naming our revision is modern, with the server info', () => {
    expect(classifyProbe(discover(['2026-07-28']), OURS, 'http')).toMatchObject({
      kind: 'modern',
      version: '2026-07-28',
      discover: { serverInfo: { name: 's' }, capabilities: { tools: {} } },
    });
  });

  it('a DiscoverResult naming none of our revisions is handshake-era', () => {
    expect(classifyProbe(discover(['2027-01-01']), OURS, 'http').kind).toBe('handshake');
  });

  it('a result that is not a DiscoverResult is handshake-era', () => {
    expect(classifyProbe({ kind: 'result', result: {} }, OURS, 'stdio').kind).toBe('handshake');
  });

  it('-32022 naming a revision we speak asks for one corrective probe', () => {
    expect(classifyProbe(rpcError(-32022, { supported: ['2026-07-28'], requested: 'x' }), OURS, 'http')).toEqual({
      kind: 'corrective',
      version: '2026-07-28',
    });
  });

  it('-32022 naming only handshake revisions is handshake-era', () => {
    expect(classifyProbe(rpcError(-32022, { supported: ['2025-11-25'] }), OURS, 'http').kind).toBe('handshake');
  });

  it.each([-32601, -32602, -32600, -32020, -32021, -32001])(
    'error %i is handshake-era (never keyed to one code)',
    (code) => {
      expect(classifyProbe(rpcError(code), OURS, 'stdio').kind).toBe('handshake');
    },
  );

  it.each([401, 403, 500, 503])('HTTP %i is an error, not a fallback', (status) => {
    expect(classifyProbe(httpError(status), OURS, 'http').kind).toBe('error');
  });

  it.each([400, 404, 405])('HTTP %i without a JSON-RPC body is handshake-era', (status) => {
    expect(classifyProbe(httpError(status), OURS, 'http').kind).toBe('handshake');
  });

  it('a network failure over HTTP is an error', () => {
    expect(classifyProbe({ kind: 'failed', error: new Error('ECONNREFUSED') }, OURS, 'http').kind).toBe('error');
  });

  it('no answer over stdio is handshake-era', () => {
    expect(classifyProbe({ kind: 'timeout', afterMs: 3000 }, OURS, 'stdio').kind).toBe('handshake');
  });

  it('no answer over HTTP is an error', () => {
    expect(classifyProbe({ kind: 'timeout', afterMs: 3000 }, OURS, 'http').kind).toBe('error');
  });

  it("a stdio child that exits during the probe is an error naming era: 'handshake'", () => {
    const verdict = classifyProbe({ kind: 'closed', error: new Error('exited with code 1') }, OURS, 'stdio');
    expect(verdict.kind === 'error' && verdict.error.message).toMatch(/era: 'handshake'/);
  });
});

describe('forcedEra', () => {
  it('a handshake-era protocolVersion implies the handshake era', () => {
    expect(forcedEra(undefined, '2025-06-18')).toBe('handshake');
  });

  it('a stateless protocolVersion implies modern', () => {
    expect(forcedEra(undefined, '2026-07-28')).toBe('modern');
  });

  it('an explicit era wins over protocolVersion', () => {
    expect(forcedEra('handshake', '2026-07-28')).toBe('handshake');
  });

  it('defaults to auto', () => {
    expect(forcedEra(undefined, undefined)).toBe('auto');
  });
});

describe('EraCache', () => {
  it('evicts the least recently used verdict beyond its size', () => {
    const cache = new EraCache(2);
    cache.set('a', { era: 'handshake' });
    cache.set('b', { era: 'handshake' });
    cache.get('a');
    cache.set('c', { era: 'handshake' });
    expect([cache.get('a'), cache.get('b'), cache.get('c')].map(Boolean)).toEqual([true, false, true]);
  });
});

describe('ModernRequestStamp', () => {
  const session = () => new ModernRequestStamp('2026-07-28', OURS, { roots: {} }, { name: 'c', version: '1' });

  it('stamps the envelope on params without _meta', () => {
    expect(session().stamp({ cursor: 'x' })).toEqual({
      cursor: 'x',
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': { roots: {} },
        'io.modelcontextprotocol/clientInfo': { name: 'c', version: '1' },
      },
    });
  });

  it("lets the caller's _meta keys win, except the protocol version", () => {
    const meta = session().stamp({
      _meta: {
        'io.modelcontextprotocol/clientInfo': { name: 'mine', version: '2' },
        'io.modelcontextprotocol/protocolVersion': 'x',
      },
    })._meta as Record<string, unknown>;
    expect(meta['io.modelcontextprotocol/clientInfo']).toEqual({ name: 'mine', version: '2' });
    expect(meta['io.modelcontextprotocol/protocolVersion']).toBe('2026-07-28');
  });

  it('carries the log level once set', () => {
    const modern = session();
    modern.setLogLevel('error');
    expect((modern.stamp(undefined)._meta as Record<string, unknown>)['io.modelcontextprotocol/logLevel']).toBe(
      'error',
    );
  });

  it('retries on -32022 only for another revision we speak', () => {
    const modern = new ModernRequestStamp('2026-07-28', ['2026-12-01', '2026-07-28'], {}, { name: 'c', version: '1' });
    expect(modern.retryVersion(new McpError(-32022, 'no', { supported: ['2026-12-01'] }))).toBe('2026-12-01');
    expect(modern.retryVersion(new McpError(-32022, 'no', { supported: ['2026-07-28'] }))).toBeUndefined();
    expect(modern.retryVersion(new McpError(-32601, 'no'))).toBeUndefined();
  });

  it('drops tools with invalid x-mcp-header annotations and keeps the others', () => {
    const dropped: string[] = [];
    const tools = session().usableTools(
      [
        { name: 'ok', inputSchema: { type: 'object', properties: { r: { type: 'string', 'x-mcp-header': 'R' } } } },
        { name: 'bad', inputSchema: { type: 'object', properties: { r: { type: 'object', 'x-mcp-header': 'R' } } } },
        { name: 'num', inputSchema: { type: 'object', properties: { n: { type: 'number', 'x-mcp-header': 'N' } } } },
      ] as never,
      (tool) => dropped.push(tool.name),
    );
    expect(tools.map((tool) => tool.name)).toEqual(['ok']);
    expect(dropped).toEqual(['bad', 'num']);
  });

  it('builds the Mcp-Param headers of a call to an annotated tool', () => {
    const modern = session();
    modern.usableTools(
      [
        {
          name: 'ok',
          inputSchema: { type: 'object', properties: { r: { type: 'string', 'x-mcp-header': 'Region' } } },
        },
      ] as never,
      () => undefined,
    );
    expect(modern.headersFor('tools/call', { name: 'ok', arguments: { r: 'eu' } })).toEqual({
      'Mcp-Param-Region': 'eu',
    });
  });
});

describe('isHandshakeEraFailure', () => {
  it('an HTTP 404 without a JSON-RPC body looks handshake-era', () => {
    expect(isHandshakeEraFailure(new HttpStatusError('gone', 404))).toBe(true);
  });

  it("the SDK's -32000 for a request without a session looks handshake-era", () => {
    expect(isHandshakeEraFailure(new McpError(-32000, 'Bad Request: Server not initialized'))).toBe(true);
  });

  it('a -32602 (the request was read, and refused on its merits) is not', () => {
    expect(isHandshakeEraFailure(new McpError(-32602, 'Invalid params'))).toBe(false);
  });

  it('a network failure is not', () => {
    expect(isHandshakeEraFailure(new TransportError('ECONNRESET'))).toBe(false);
  });
});
