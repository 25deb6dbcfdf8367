/**
 * A client transport's side of authorization (`HttpClientOptions.authorization`): a 401, or a 403 carrying a
 * challenge, goes to the authorization, which renews the token (or steps up its scopes) and says whether the
 * request should be sent again. `SessionAuthorization` is that side for one Streamable HTTP client session.
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

/** Times one message is sent again after the authorization was renewed (a new token, a refresh, a step-up). */
export const MAX_AUTHORIZATION_RETRIES = 3;

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

/**
 * The authorization of one client session's requests, or none (`HttpClientOptions.authorization` unset):
 * the stored tokens read before the first request, the header each request carries, what it adds to each
 * one (a DPoP proof), and whether a refused request may go again.
 */
export class SessionAuthorization {
  private preparing: Promise<void> | undefined;
  private prepared: boolean;

  constructor(
    private readonly authorization: HttpAuthorization | undefined,
    private readonly url: URL,
  ) {
    this.prepared = authorization?.prepare === undefined;
  }

  /** What the first request waits for (the stored tokens being read); undefined once there is nothing to wait for. */
  ready(): Promise<void> | undefined {
    if (this.prepared) return undefined;
    return (this.preparing ??= this.authorization!.prepare!().then(() => {
      this.prepared = true;
    }));
  }

  /** The `Authorization` header a request sent now carries (undefined: none, or no authorization). */
  current(): string | undefined {
    return this.authorization?.authorization();
  }

  /** Sends `spec` with what the authorization adds to each request. */
  send(spec: HttpRequestSpec): HttpExchange {
    return sendAuthorizedRequest(spec, this.authorization, this.url);
  }

  /**
   * The server refused a request that carried `sentAuthorization` (401 or 403): true when the authorization
   * was renewed and the request may go again (the response was then discarded); false when it must fail.
   */
  again(response: IncomingMessage, sentAuthorization: string | undefined): Promise<boolean> {
    return renewedAuthorization(this.authorization, this.url, response, sentAuthorization);
  }
}
