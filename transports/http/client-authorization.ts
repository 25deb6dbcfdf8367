/**
 * A client transport's side of authorization (`HttpClientOptions.authorization`): a 401, or a 403 carrying a
 * challenge, goes to the authorization, which renews the token (or steps up its scopes) and says whether the
 * request should be sent again.
 */
import type { IncomingMessage } from 'node:http';
import type { HttpAuthorization } from '../../lib/auth/http-authorization';
import { discardResponse } from './client-request';

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
  const again = await authorization.refused({ status, wwwAuthenticate: challenge, url, sentAuthorization });
  if (again) discardResponse(response);
  return again;
}
