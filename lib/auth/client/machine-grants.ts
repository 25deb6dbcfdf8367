/**
 * The grants without a user (MCP authorization extensions): client credentials with a secret or a private
 * key JWT (RFC 7523 §2.2), the JWT bearer grant with a workload's identity token (RFC 7523 §2.1, workload
 * identity federation), and enterprise-managed authorization (the identity provider exchanges the user's ID
 * token for an identity assertion grant, RFC 8693, which the authorization server takes as a JWT bearer
 * grant). Each names the client it authenticates as: no registration happens.
 */
import * as jose from 'jose';
import * as oauth from 'oauth4webapi';
import type { StoredClient } from '../token-store';
import { AuthorizationError, type AuthHttp } from './http';
import { clientAuthentication, describe } from './registration';
import { retryingDpopNonce } from './dpop';

/** A token, or how to get a fresh one (read at each grant). */
export type TokenSource = string | (() => string | Promise<string>);

/** The client of a machine grant: its id, and how it authenticates at the token endpoint. */
export interface MachineClient {
  readonly clientId: string;
  readonly clientSecret?: string;
  /** Default: `client_secret_basic` with a secret (or what the server supports), `none` without. */
  readonly tokenEndpointAuthMethod?: string;
}

export interface ClientCredentialsGrant extends MachineClient {
  readonly type: 'client_credentials';
  /** A PKCS#8 PEM private key: authenticates with `private_key_jwt` instead of a secret. */
  readonly privateKeyPem?: string;
  /** The key's algorithm (default ES256). */
  readonly signingAlgorithm?: string;
}

export interface JwtBearerGrant extends MachineClient {
  readonly type: 'jwt_bearer';
  /** The JWT the authorization server trusts (a workload identity token). */
  readonly assertion: TokenSource;
}

export interface EnterpriseGrant extends MachineClient {
  readonly type: 'enterprise';
  /** The enterprise identity provider that issues identity assertion grants (ID-JAG). */
  readonly identityProvider: {
    readonly tokenEndpoint: string;
    readonly issuer?: string;
    readonly clientId: string;
    readonly clientSecret?: string;
  };
  /** The user's ID token from that identity provider. */
  readonly idToken: TokenSource;
}

export type MachineGrant = ClientCredentialsGrant | JwtBearerGrant | EnterpriseGrant;

export const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ID_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:id_token';
const ID_JAG_TYPE = 'urn:ietf:params:oauth:token-type:id-jag';

export interface MachineGrantRequest {
  readonly as: oauth.AuthorizationServer;
  readonly client: StoredClient;
  readonly grant: MachineGrant;
  readonly scopes: readonly string[];
  readonly resource: string;
  /** Binds the token to a key (DPoP) when given. */
  readonly dpop?: oauth.DPoPHandle;
}

export async function machineGrant(request: MachineGrantRequest, http: AuthHttp): Promise<oauth.TokenEndpointResponse> {
  const { as, client, grant, scopes, resource } = request;
  const parameters: Record<string, string> = { resource };
  if (scopes.length > 0) parameters.scope = scopes.join(' ');
  const oauthClient: oauth.Client = { client_id: client.clientId };
  const options = {
    ...http.requestOptions(as.token_endpoint ?? as.issuer),
    ...(request.dpop && { DPoP: request.dpop }),
  };
  try {
    switch (grant.type) {
      case 'client_credentials': {
        const authentication = await credentialsAuthentication(client, grant);
        const response = await oauth.clientCredentialsGrantRequest(
          as,
          oauthClient,
          authentication,
          parameters,
          options,
        );
        return await oauth.processClientCredentialsResponse(as, oauthClient, response);
      }
      case 'jwt_bearer':
        parameters.assertion = await read(grant.assertion);
        break;
      case 'enterprise':
        parameters.assertion = await identityAssertion(grant, as.issuer, request, http);
        break;
    }
    return await retryingDpopNonce(async () => {
      const response = await oauth.genericTokenEndpointRequest(
        as,
        oauthClient,
        clientAuthentication(client),
        JWT_BEARER,
        parameters,
        options,
      );
      return oauth.processGenericTokenEndpointResponse(as, oauthClient, response);
    });
  } catch (error) {
    if (error instanceof AuthorizationError) throw error;
    throw new AuthorizationError(`The ${grant.type} grant at ${as.token_endpoint} failed: ${describe(error)}`, {
      cause: error,
    });
  }
}

/** The identity provider's exchange: the user's ID token for an identity assertion grant for `audience`. */
async function identityAssertion(
  grant: EnterpriseGrant,
  audience: string,
  request: MachineGrantRequest,
  http: AuthHttp,
): Promise<string> {
  const provider = grant.identityProvider;
  const idp: oauth.AuthorizationServer = {
    issuer: provider.issuer ?? new URL(provider.tokenEndpoint).origin,
    token_endpoint: provider.tokenEndpoint,
  };
  const idpClient: oauth.Client = { client_id: provider.clientId };
  const authentication =
    provider.clientSecret === undefined ? oauth.None() : clientAuthentication({ issuer: idp.issuer, ...provider });
  const parameters: Record<string, string> = {
    subject_token: await read(grant.idToken),
    subject_token_type: ID_TOKEN_TYPE,
    requested_token_type: ID_JAG_TYPE,
    audience,
    resource: request.resource,
  };
  if (request.scopes.length > 0) parameters.scope = request.scopes.join(' ');
  try {
    const response = await oauth.genericTokenEndpointRequest(
      idp,
      idpClient,
      authentication,
      TOKEN_EXCHANGE,
      parameters,
      http.requestOptions(provider.tokenEndpoint),
    );
    // An identity assertion grant is not an access token: RFC 8693 §2.2.1 has it answered as `N_A`.
    const exchanged = await oauth.processGenericTokenEndpointResponse(idp, idpClient, response, {
      recognizedTokenTypes: { n_a: () => undefined },
    });
    return exchanged.access_token;
  } catch (error) {
    throw new AuthorizationError(
      `The identity provider's token exchange at ${provider.tokenEndpoint} failed: ${describe(error)}`,
      {
        cause: error,
      },
    );
  }
}

async function credentialsAuthentication(
  client: StoredClient,
  grant: ClientCredentialsGrant,
): Promise<oauth.ClientAuth> {
  if (grant.privateKeyPem === undefined) return clientAuthentication(client);
  const key = await jose.importPKCS8(grant.privateKeyPem, grant.signingAlgorithm ?? 'ES256');
  return oauth.PrivateKeyJwt({ key: key as CryptoKey });
}

async function read(source: TokenSource): Promise<string> {
  return typeof source === 'string' ? source : await source();
}
