/** Token responses as the store keeps them, and the refresh grant. */
import * as oauth from 'oauth4webapi';
import type { StoredClient, StoredTokens } from '../token-store';
import { AuthorizationError, type AuthHttp } from './http';
import { clientAuthentication, describe } from './registration';
import { retryingDpopNonce } from './dpop';

/** A token response as stored: `expires_in` becomes an instant, a refresh without a new refresh token keeps the old one. */
export function storedTokens(
  response: oauth.TokenEndpointResponse,
  issuer: string,
  now: number,
  requested: { scope?: string; refreshToken?: string },
): StoredTokens {
  const scope = typeof response.scope === 'string' ? response.scope : requested.scope;
  const refreshToken = typeof response.refresh_token === 'string' ? response.refresh_token : requested.refreshToken;
  return {
    accessToken: response.access_token,
    tokenType: typeof response.token_type === 'string' ? response.token_type : 'Bearer',
    ...(typeof response.expires_in === 'number' && { expiresAt: now + response.expires_in * 1000 }),
    ...(refreshToken !== undefined && { refreshToken }),
    ...(scope !== undefined && scope !== '' && { scope }),
    issuer,
  };
}

/** The `Authorization` header for stored tokens: `Bearer <token>` (a DPoP-bound token says `DPoP`). */
export function authorizationHeaderOf(tokens: StoredTokens): string {
  const scheme = tokens.tokenType.toLowerCase() === 'dpop' ? 'DPoP' : 'Bearer';
  return `${scheme} ${tokens.accessToken}`;
}

export async function refreshGrant(
  as: oauth.AuthorizationServer,
  client: StoredClient,
  tokens: StoredTokens,
  resource: string,
  http: AuthHttp,
  now: number,
  dpop?: oauth.DPoPHandle,
): Promise<StoredTokens> {
  const refreshToken = tokens.refreshToken;
  if (refreshToken === undefined) throw new AuthorizationError('There is no refresh token');
  const oauthClient: oauth.Client = { client_id: client.clientId };
  try {
    const refreshed = await retryingDpopNonce(async () => {
      const response = await oauth.refreshTokenGrantRequest(
        as,
        oauthClient,
        clientAuthentication(client),
        refreshToken,
        {
          ...http.requestOptions(as.token_endpoint ?? as.issuer),
          additionalParameters: { resource },
          ...(dpop && { DPoP: dpop }),
        },
      );
      return oauth.processRefreshTokenResponse(as, oauthClient, response);
    });
    return storedTokens(refreshed, as.issuer, now, { scope: tokens.scope, refreshToken });
  } catch (error) {
    throw new AuthorizationError(`Refreshing the access token failed: ${describe(error)}`, { cause: error });
  }
}
