/**
 * The authorization code grant with PKCE (S256) and a resource indicator (RFC 8707): the authorization URL,
 * the user's trip to it (`AuthorizationInteraction`), the redirect's checks (state, RFC 9207 `iss` compared
 * as a plain string), and the token request.
 */
import * as oauth from 'oauth4webapi';
import type { StoredClient } from '../token-store';
import { AuthHttp, AuthorizationError, requireEndpointUrl, type AuthHttpOptions } from './http';
import { clientAuthentication, describe } from './registration';
import { retryingDpopNonce } from './dpop';

/** How the user authorizes: the seam a command line, a desktop app or a test fills in. */
export interface AuthorizationInteraction {
  /** The redirect URI the flow uses (and a dynamic registration registers). */
  readonly redirectUri: string;
  /** Takes the user to `url`; resolves with the URL the authorization server redirected back to. */
  authorize(url: URL): Promise<URL>;
}

export interface AuthorizationCodeRequest {
  readonly as: oauth.AuthorizationServer;
  readonly client: StoredClient;
  readonly interaction: AuthorizationInteraction;
  readonly scopes: readonly string[];
  /** The RFC 8707 `resource`, as the resource metadata published it. */
  readonly resource: string;
  /** Binds the tokens to a key (DPoP) when given. */
  readonly dpop?: oauth.DPoPHandle;
}

export async function authorizationCodeGrant(
  request: AuthorizationCodeRequest,
  http: AuthHttp,
): Promise<oauth.TokenEndpointResponse> {
  const { as, client, interaction, scopes, resource } = request;
  // MCP authorization (2025-11-25 and later): no advertised S256, no authorization. Metadata-less servers
  // (2025-03-26) get S256 from their defaults (discovery.ts).
  const methods: unknown = as.code_challenge_methods_supported;
  if (!Array.isArray(methods) || !methods.includes('S256')) {
    throw new AuthorizationError(
      `The authorization server ${as.issuer} does not advertise PKCE with S256 support (code_challenge_methods_supported): refusing to authorize`,
    );
  }
  if (as.authorization_endpoint === undefined) {
    throw new AuthorizationError(`The authorization server ${as.issuer} names no authorization endpoint`);
  }
  // Checked again here (discovery checked it), whatever built `as`: no interaction sees another scheme.
  const url = requireEndpointUrl(
    as.authorization_endpoint,
    'authorization_endpoint',
    `the metadata of the authorization server ${as.issuer}`,
  );
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const params = url.searchParams;
  params.set('response_type', 'code');
  params.set('client_id', client.clientId);
  params.set('redirect_uri', interaction.redirectUri);
  params.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
  params.set('code_challenge_method', 'S256');
  params.set('state', state);
  params.set('resource', resource);
  if (scopes.length > 0) params.set('scope', scopes.join(' '));

  const callback = await interaction.authorize(url);
  const oauthClient: oauth.Client = { client_id: client.clientId };
  let callbackParams: URLSearchParams;
  try {
    callbackParams = oauth.validateAuthResponse(as, oauthClient, callback, state);
  } catch (error) {
    throw new AuthorizationError(`The authorization response was refused: ${describe(error)}`, { cause: error });
  }
  try {
    return await retryingDpopNonce(async () => {
      const response = await oauth.authorizationCodeGrantRequest(
        as,
        oauthClient,
        clientAuthentication(client),
        callbackParams,
        interaction.redirectUri,
        verifier,
        {
          ...http.requestOptions(as.token_endpoint ?? as.issuer),
          additionalParameters: { resource },
          ...(request.dpop && { DPoP: request.dpop }),
        },
      );
      return oauth.processAuthorizationCodeResponse(as, oauthClient, response);
    });
  } catch (error) {
    throw new AuthorizationError(`The token request at ${as.token_endpoint} failed: ${describe(error)}`, {
      cause: error,
    });
  }
}

/**
 * An interaction without a user: the authorization URL is fetched and its redirect read (an authorization
 * server that approves at once: tests, conformance mocks, some enterprise setups).
 */
export function headlessInteraction(redirectUri: string, options: AuthHttpOptions = {}): AuthorizationInteraction {
  const http = new AuthHttp(options);
  return {
    redirectUri,
    async authorize(url) {
      const response = await http.fetch(url, { redirect: 'manual' });
      await response.body?.cancel();
      const location = response.headers.get('location');
      if (response.status < 300 || response.status >= 400 || location === null) {
        throw new AuthorizationError(`The authorization endpoint answered ${response.status} without a redirect`);
      }
      return new URL(location, url);
    },
  };
}
