/**
 * The OAuth client against servers that misbehave on purpose: metadata larger than any real one (sent with or
 * without a Content-Length), metadata that never finishes, a redirect instead of metadata, a protected
 * resource whose metadata names another server. Each ends in a clear `AuthorizationError`, promptly, without
 * buffering what the server sends.
 */
import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { headlessInteraction } from '../../lib/auth/client/authorization-code';
import { AuthorizationError } from '../../lib/auth/client/http';
import { OAuthClient } from '../../lib/auth/client/oauth-client';
import { cleanups, listenHttp } from '../helpers/http';

type MetadataAnswer = (response: http.ServerResponse, origin: string) => void;

/** A server whose MCP endpoint always answers 401, and whose resource metadata is `answer`. */
async function protectedBy(answer: MetadataAnswer): Promise<string> {
  let origin = '';
  ({ origin } = await listenHttp((request, response) => {
    if (request.url === '/.well-known/oauth-protected-resource/mcp') return answer(response, origin);
    response.writeHead(401, { 'www-authenticate': 'Bearer' }).end();
  }));
  return `${origin}/mcp`;
}

function refusalOf(url: string, options: { timeoutMs?: number; maxResponseBytes?: number } = {}): Promise<unknown> {
  const client = new OAuthClient(url, { interaction: headlessInteraction('http://127.0.0.1:1/cb'), ...options });
  return client
    .refused({ status: 401, wwwAuthenticate: 'Bearer', url: new URL(url), sentAuthorization: undefined })
    .then(
      () => undefined,
      (error: unknown) => error,
    );
}

describe('the OAuth client against hostile metadata', () => {
  it('refuses metadata whose Content-Length is over the limit before reading it', async () => {
    const url = await protectedBy((response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': String(50 * 1024 * 1024) });
      response.write('{"resource":"');
      cleanups.push(() => void response.destroy());
    });
    const error = await refusalOf(url);
    expect(error).toBeInstanceOf(AuthorizationError);
    expect((error as Error).message).toMatch(/larger than 1048576 bytes/);
  });

  it('stops reading chunked metadata once it passes the limit', async () => {
    let written = 0;
    const url = await protectedBy((response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      const chunk = 'x'.repeat(64 * 1024);
      const pump = () => {
        while (written < 64 * 1024 * 1024 && response.write(chunk)) written += chunk.length;
        if (written < 64 * 1024 * 1024) response.once('drain', pump);
      };
      response.write('{"resource":"');
      pump();
      cleanups.push(() => void response.destroy());
    });
    const error = await refusalOf(url, { maxResponseBytes: 256 * 1024 });
    expect((error as Error).message).toMatch(/larger than 262144 bytes/);
    expect(written).toBeLessThan(16 * 1024 * 1024);
  });

  it('gives up on metadata that never finishes, at the timeout', async () => {
    const url = await protectedBy((response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"resource":');
      cleanups.push(() => void response.destroy());
    });
    const started = Date.now();
    const error = await refusalOf(url, { timeoutMs: 300 });
    expect(error).toBeInstanceOf(Error);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('does not follow a redirect where metadata should be (nothing is found: the 2025-03-26 fallback runs)', async () => {
    let followed = false;
    const { origin: elsewhere } = await listenHttp((_request, response) => {
      followed = true;
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    const url = await protectedBy((response) => response.writeHead(302, { location: `${elsewhere}/prm` }).end());
    await refusalOf(url, { timeoutMs: 2_000 });
    expect(followed).toBe(false);
  });

  it('refuses metadata that is not a JSON object', async () => {
    const url = await protectedBy((response) =>
      response.writeHead(200, { 'content-type': 'application/json' }).end('["not", "an", "object"]'),
    );
    expect(((await refusalOf(url)) as Error).message).toMatch(/is not a JSON object/);
  });
});
