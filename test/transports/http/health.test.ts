/**
 * The health endpoint of `createMcpHttpHandler` over real HTTP on 127.0.0.1: off by default, `{"status":"ok"}`
 * at `/health` or the path given, with no token, no session and no Origin/Host check, readable by any page;
 * other methods refused; a path clash or a bad path refused when the endpoint is made.
 */
import { describe, expect, it } from 'vitest';
import { Server } from '../../../lib/server/server';
import { createMcpHttpHandler, type McpHttpOptions } from '../../../transports/http/endpoint';
import { serverWith, tool } from '../../helpers/fixtures';
import { cleanups, lateListener, listenHttp, postInitialize, sendRaw } from '../../helpers/http';

async function serve(options: McpHttpOptions) {
  const server = new Server(serverWith([tool('echo')]));
  cleanups.push(() => server.close());
  let handler: ReturnType<typeof createMcpHttpHandler> | undefined;
  const { origin } = await listenHttp(lateListener(() => handler));
  handler = createMcpHttpHandler(server, options);
  cleanups.push(() => handler!.close());
  return { origin, handler };
}

describe('the health endpoint', () => {
  it('is off by default', async () => {
    const { origin } = await serve({});
    expect((await fetch(`${origin}/health`)).status).toBe(404);
  });

  it('answers GET /health 200 {"status":"ok"}, uncached and readable from any page, and HEAD without a body', async () => {
    const { origin, handler } = await serve({ health: true });
    const answer = await fetch(`${origin}/health`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('application/json');
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(answer.headers.get('access-control-allow-origin')).toBe('*');
    expect(await answer.json()).toEqual({ status: 'ok' });
    const head = await sendRaw(`${origin}/health`, 'HEAD');
    expect([head.status, head.body]).toEqual([200, '']);
    expect(handler.sessionCount).toBe(0);
  });

  it('needs no token, nor a local Origin or Host, where every MCP request does', async () => {
    const { origin } = await serve({
      health: '/healthz',
      auth: {
        resource: 'http://127.0.0.1/mcp',
        authorizationServers: ['http://127.0.0.1:1'],
        jwks: 'http://127.0.0.1:1/jwks',
      },
    });
    expect((await postInitialize(`${origin}/mcp`)).status).toBe(401);
    const hostile = { origin: 'https://evil.example', host: 'rebound.example' };
    expect((await sendRaw(`${origin}/mcp`, 'GET', hostile)).status).toBe(403);
    const answer = await sendRaw(`${origin}/healthz`, 'GET', hostile);
    expect([answer.status, answer.body]).toEqual([200, '{"status":"ok"}']);
    expect((await fetch(`${origin}/health`)).status).toBe(404);
  });

  it('refuses other methods with 405 naming the allowed ones, and answers a preflight', async () => {
    const { origin } = await serve({ health: true });
    for (const method of ['POST', 'DELETE', 'PUT']) {
      const answer = await sendRaw(`${origin}/health`, method);
      expect([answer.status, answer.headers.allow], method).toEqual([405, 'GET, HEAD, OPTIONS']);
    }
    const preflight = await sendRaw(`${origin}/health`, 'OPTIONS', {
      origin: 'https://dashboard.example',
      'access-control-request-method': 'GET',
    });
    expect([preflight.status, preflight.headers['access-control-allow-origin']]).toEqual([204, '*']);
  });

  it('refuses a path that clashes with an MCP path, or is not a path, when the endpoint is made', () => {
    const server = new Server(serverWith([tool('echo')]));
    expect(() => createMcpHttpHandler(server, { health: '/mcp' })).toThrow(/paths must differ: got \/mcp, \/sse/);
    expect(() => createMcpHttpHandler(server, { health: '/sse' })).toThrow(/paths must differ/);
    expect(() => createMcpHttpHandler(server, { health: 'health' })).toThrow(/a path starting with '\/': got "health"/);
    expect(() => createMcpHttpHandler(server, { health: '/h?x=1' })).toThrow(/a path starting with '\/'/);
  });
});
