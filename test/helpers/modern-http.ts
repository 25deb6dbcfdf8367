/**
 * Raw HTTP requests of the stateless revision (2026-07-28), for tests that look at the wire itself: the
 * version, method and name headers a client sends, and the POST that carries them.
 */
import type { JsonObject } from '../../lib/jsonrpc/types';

export const MODERN_VERSION = '2026-07-28';

/** `Mcp-Method`, and `Mcp-Name` when the request names a tool, prompt (`name`) or resource (`uri`). */
export function mirroredHeaders(method: string, params: JsonObject = {}): Record<string, string> {
  const name = method === 'resources/read' ? params.uri : params.name;
  return typeof name === 'string' ? { 'mcp-method': method, 'mcp-name': name } : { 'mcp-method': method };
}

/** The headers of a 2026-07-28 POST: JSON in, JSON or SSE back, the version header; `headers` over them. */
export function modernPostHeaders(headers: Record<string, string> = {}): Record<string, string> {
  return {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': MODERN_VERSION,
    ...headers,
  };
}

/** POSTs `body` as JSON with the 2026-07-28 version header (and `headers` over the defaults). */
export function postModern(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    signal,
    headers: modernPostHeaders(headers),
    body: JSON.stringify(body),
  });
}
