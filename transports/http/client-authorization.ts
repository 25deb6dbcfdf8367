/**
 * A client transport's side of authorization (`HttpClientOptions.authorization`): a 401, or a 403 carrying a
 * challenge, goes to the authorization, which renews the token (or steps up its scopes) and says whether the
 * request should be sent again.
 */
import type { IncomingMessage } from 'node:http';
import type { HttpAuthorization } from '../../lib/auth/http-authorization';
import {
  discardResponse,
  sendHttpRequest,
  withHeader,
  type HttpExchange,
  type HttpRequestSpec,
} from './client-request';

/** 401, or 403: a refusal the authorization may be able to answer. */
export const isRefusal = (status: number | undefined): boolean => status === 401 || status === 403;

/** True when `response` refused the request and the authorization was renewed: send it again (the response is discarded). */
export async function renewedAuthorization(
  authorization: HttpAuthorization | undefined,
  url: URL,
  response: IncomingMessage,
  sentAuthorization: string | undefined,
): Promise<boolean> {
  const status = response.statusCode ?? 0;
  if (!authorization || (status !== 401 && status !== 403)) return false;
  const header = response.headers['www-authenticate'];
  const challenge = Array.isArray(header) ? header.join(', ') : header;
  if (status === 403 && challenge === undefined) return false;
  const nonce = response.headers['dpop-nonce'];
  const again = await authorization.refused({
    status,
    wwwAuthenticate: challenge,
    url,
    sentAuthorization,
    ...(typeof nonce === 'string' && { dpopNonce: nonce }),
  });
  if (again) discardResponse(response);
  return again;
}

/**
 * Sends `spec`, first adding the headers the authorization makes for this one request (a DPoP proof), when
 * it needs any: then the request leaves once they are ready.
 */
export function sendAuthorizedRequest(
  spec: HttpRequestSpec,
  authorization: HttpAuthorization | undefined,
  url: URL,
): HttpExchange {
  const extra = authorization?.requestHeaders?.(spec.method, url);
  if (extra === undefined) return sendHttpRequest(spec);
  const started = extra.then((headers) => {
    let list = spec.headers;
    for (const name in headers) list = withHeader(list, name, headers[name]!);
    return sendHttpRequest({ ...spec, headers: list });
  });
  return {
    written: started.then((exchange) => exchange.written),
    response: started.then((exchange) => exchange.response),
  };
}
