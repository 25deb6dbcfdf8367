/**
 * The client credentials grant (the MCP client-credentials extension): a machine client authenticates
 * with a secret (`client_secret_basic`/`_post`) or a private key JWT (RFC 7523) and gets a token without a user.
 */
import * as jose from 'jose';
import * as oauth from 'oauth4webapi';
import type { StoredClient } from '../token-store';
import { AuthorizationError, type AuthHttp } from './http';
import { clientAuthentication, describe } from './registration';

export interface ClientCredentials {
  readonly clientId: string;
  readonly clientSecret?: string;
  /** A PKCS#8 PEM private key: authenticates with `private_key_jwt` instead of a secret. */
  readonly privateKeyPem?: string;
  /** The key's algorithm (default ES256). */
  readonly signingAlgorithm?: string;
  readonly tokenEndpointAuthMethod?: string;
}

export interface ClientCredentialsRequest {
  readonly as: oauth.AuthorizationServer;
  readonly client: StoredClient;
  readonly credentials: ClientCredentials;
  readonly scopes: readonly string[];
  readonly resource: string;
}

export async function clientCredentialsGrant(
  request: ClientCredentialsRequest,
  http: AuthHttp,
): Promise<oauth.TokenEndpointResponse> {
  const { as, client, credentials, scopes, resource } = request;
  const oauthClient: oauth.Client = { client_id: client.clientId };
  const parameters: Record<string, string> = { resource };
  if (scopes.length > 0) parameters.scope = scopes.join(' ');
  try {
    const response = await oauth.clientCredentialsGrantRequest(
      as,
      oauthClient,
      await authenticationOf(client, credentials),
      parameters,
      http.requestOptions(as.token_endpoint ?? as.issuer),
    );
    return await oauth.processClientCredentialsResponse(as, oauthClient, response);
  } catch (error) {
    throw new AuthorizationError(`The client credentials grant at ${as.token_endpoint} failed: ${describe(error)}`, {
      cause: error,
    });
  }
}

async function authenticationOf(client: StoredClient, credentials: ClientCredentials): Promise<oauth.ClientAuth> {
  if (credentials.privateKeyPem === undefined) return clientAuthentication(client);
  const alg = credentials.signingAlgorithm ?? 'ES256';
  const key = await jose.importPKCS8(credentials.privateKeyPem, alg);
  return oauth.PrivateKeyJwt({ key: key as CryptoKey });
}
