/** Reading requests and writing OAuth answers for the tests' authorization server (node:http, no framework). */
import type http from 'node:http';

const MAX_BODY_BYTES = 64 * 1024;

/** An OAuth error answer (RFC 6749 §5.2): thrown by a handler, written by the router. */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
    /** A `WWW-Authenticate` challenge, for a client that authenticated with HTTP Basic (RFC 6749 §5.2). */
    readonly challenge?: string,
  ) {
    super(`${error}: ${description}`);
  }
}

export async function readBody(request: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new OAuthError('invalid_request', 'request body too large', 413);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The form body of a POST (`application/x-www-form-urlencoded`, as RFC 6749 requires). */
export async function readForm(request: http.IncomingMessage): Promise<URLSearchParams> {
  const type = request.headers['content-type'] ?? '';
  if (!type.startsWith('application/x-www-form-urlencoded')) {
    throw new OAuthError('invalid_request', 'the body must be application/x-www-form-urlencoded');
  }
  const form = new URLSearchParams(await readBody(request));
  for (const name of new Set(form.keys())) {
    if (name !== 'resource' && form.getAll(name).length > 1) {
      throw new OAuthError('invalid_request', `parameter ${name} repeated`);
    }
  }
  return form;
}

export async function readJson(request: http.IncomingMessage): Promise<Record<string, unknown>> {
  const type = request.headers['content-type'] ?? '';
  if (!type.startsWith('application/json')) throw new OAuthError('invalid_request', 'the body must be JSON');
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readBody(request));
  } catch {
    throw new OAuthError('invalid_request', 'the body is not JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new OAuthError('invalid_request', 'the body must be a JSON object');
  }
  return parsed as Record<string, unknown>;
}

export function sendJson(
  response: http.ServerResponse,
  status: number,
  body: unknown,
  headers: http.OutgoingHttpHeaders = {},
): void {
  response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  response.end(JSON.stringify(body));
}

export function sendError(response: http.ServerResponse, failure: OAuthError): void {
  sendJson(
    response,
    failure.status,
    { error: failure.error, error_description: failure.description },
    failure.challenge ? { 'www-authenticate': failure.challenge } : {},
  );
}

export function redirect(response: http.ServerResponse, location: URL): void {
  response.writeHead(302, { location: location.href, 'cache-control': 'no-store' });
  response.end();
}
