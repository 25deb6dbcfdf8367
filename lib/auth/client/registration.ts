/**
 * Who the client is at an authorization server, in the specification's order of preference: a registration
 * the user gave (pre-registered), a Client ID Metadata Document (a URL as `client_id`, when the server
 * supports it), else Dynamic Client Registration (RFC 7591). A registration belongs to one issuer: when the
 * resource moves to another authorization server, the client registers again there and never presents the
 * old credentials.
 */
import * as oauth from 'oauth4webapi';
import type { StoredClient } from '../token-store';
import { AuthorizationError, type AuthHttp } from './http';

/** A registration made outside the flow (the user's own client id and secret). */
export interface PreRegisteredClient {
  readonly clientId: string;
  readonly clientSecret?: string;
  /** Default: `client_secret_basic` with a secret (or what the server supports), `none` without. */
  readonly tokenEndpointAuthMethod?: string;
  /** Only for this issuer (default: any). */
  readonly issuer?: string;
}

export interface RegistrationOptions {
  readonly preRegistered?: PreRegisteredClient;
  /** The URL of this client's metadata document (CIMD); used when the server advertises support. */
  readonly clientMetadataUrl?: string;
  /** Sent with a dynamic registration (`client_name`, `client_uri`, …). */
  readonly clientMetadata?: Readonly<Record<string, unknown>>;
  /** The grants the client will use (a dynamic registration names them). */
  readonly grantTypes: readonly string[];
  readonly redirectUris: readonly string[];
}

/** The methods we can authenticate with at a token endpoint, public client first. */
const AUTH_METHODS = ['none', 'client_secret_basic', 'client_secret_post'] as const;

/** The stored registration, if it is for this issuer; otherwise a new one. */
export async function clientFor(
  as: oauth.AuthorizationServer,
  stored: StoredClient | undefined,
  options: RegistrationOptions,
  http: AuthHttp,
): Promise<StoredClient> {
  const preRegistered = options.preRegistered;
  if (preRegistered && (preRegistered.issuer === undefined || preRegistered.issuer === as.issuer)) {
    return {
      issuer: as.issuer,
      clientId: preRegistered.clientId,
      ...(preRegistered.clientSecret !== undefined && { clientSecret: preRegistered.clientSecret }),
      tokenEndpointAuthMethod:
        preRegistered.tokenEndpointAuthMethod ?? defaultAuthMethod(as, preRegistered.clientSecret !== undefined),
    };
  }
  if (stored && stored.issuer === as.issuer && !secretExpired(stored)) return stored;
  if (options.clientMetadataUrl !== undefined && as.client_id_metadata_document_supported === true) {
    return { issuer: as.issuer, clientId: options.clientMetadataUrl, tokenEndpointAuthMethod: 'none' };
  }
  if (as.registration_endpoint === undefined) {
    throw new AuthorizationError(
      `The authorization server ${as.issuer} offers no dynamic client registration and no client id was configured for it`,
    );
  }
  return register(as, options, http);
}

async function register(
  as: oauth.AuthorizationServer,
  options: RegistrationOptions,
  http: AuthHttp,
): Promise<StoredClient> {
  const method = AUTH_METHODS.find((candidate) => supportsAuthMethod(as, candidate)) ?? 'client_secret_basic';
  const metadata = {
    client_name: 'mcp-switchboard',
    application_type: 'native',
    ...options.clientMetadata,
    redirect_uris: [...options.redirectUris],
    grant_types: [...options.grantTypes],
    response_types: options.grantTypes.includes('authorization_code') ? ['code'] : [],
    token_endpoint_auth_method: method,
  };
  try {
    const response = await oauth.dynamicClientRegistrationRequest(
      as,
      metadata as Parameters<typeof oauth.dynamicClientRegistrationRequest>[1],
      http.requestOptions(as.registration_endpoint!),
    );
    const registered = await registrationOf(response);
    return {
      issuer: as.issuer,
      clientId: registered.client_id,
      ...(typeof registered.client_secret === 'string' && { clientSecret: registered.client_secret }),
      ...(typeof registered.client_secret_expires_at === 'number' && {
        clientSecretExpiresAt: registered.client_secret_expires_at,
      }),
      tokenEndpointAuthMethod:
        typeof registered.token_endpoint_auth_method === 'string' ? registered.token_endpoint_auth_method : method,
      redirectUris: options.redirectUris,
    };
  } catch (error) {
    throw new AuthorizationError(
      `Dynamic client registration at ${as.registration_endpoint} failed: ${describe(error)}`,
      {
        cause: error,
      },
    );
  }
}

/**
 * The registration in a 201 answer. oauth4webapi holds servers to RFC 7591's letter, which wants
 * `client_secret_expires_at` with every secret; servers often omit it (the conformance suite's mock does):
 * such an answer is read as a secret that does not expire, and anything else wrong still fails.
 */
async function registrationOf(response: Response): Promise<Partial<oauth.Client> & { client_id: string }> {
  const copy = response.clone();
  try {
    return await oauth.processDynamicClientRegistrationResponse(response);
  } catch (error) {
    if (!(error instanceof oauth.OperationProcessingError) || !error.message.includes('client_secret_expires_at'))
      throw error;
    const body = (await copy.json()) as Record<string, unknown>;
    if (typeof body.client_id !== 'string') throw error;
    return { ...body, client_id: body.client_id, client_secret_expires_at: 0 } as Partial<oauth.Client> & {
      client_id: string;
    };
  }
}

/** RFC 8414: a server that names no methods supports `client_secret_basic`. */
function supportsAuthMethod(as: oauth.AuthorizationServer, method: string): boolean {
  const supported = as.token_endpoint_auth_methods_supported;
  return supported === undefined ? method === 'client_secret_basic' : supported.includes(method);
}

function defaultAuthMethod(as: oauth.AuthorizationServer, hasSecret: boolean): string {
  if (!hasSecret) return 'none';
  return supportsAuthMethod(as, 'client_secret_basic') || !supportsAuthMethod(as, 'client_secret_post')
    ? 'client_secret_basic'
    : 'client_secret_post';
}

function secretExpired(client: StoredClient): boolean {
  const expiresAt = client.clientSecretExpiresAt;
  return expiresAt !== undefined && expiresAt !== 0 && expiresAt * 1000 <= Date.now();
}

/** How the client authenticates at the token endpoint, as oauth4webapi takes it. */
export function clientAuthentication(client: StoredClient): oauth.ClientAuth {
  switch (client.tokenEndpointAuthMethod) {
    case 'client_secret_basic':
      return formEncodedBasic(requireSecret(client));
    case 'client_secret_post':
      return oauth.ClientSecretPost(requireSecret(client));
    case 'none':
    case undefined:
      return client.clientSecret === undefined ? oauth.None() : formEncodedBasic(client.clientSecret);
    default:
      throw new AuthorizationError(
        `The token endpoint authentication method ${client.tokenEndpointAuthMethod} is not supported by this client`,
      );
  }
}

/**
 * `client_secret_basic` with the id and secret form-urlencoded as RFC 6749 §2.3.1 says (`-`, `.`, `_`, `*`
 * left as they are). oauth4webapi's own also percent-encodes those, which is valid but trips servers that
 * compare the decoded Basic credentials without undoing the encoding (a `pre-registered-client` id arrives
 * as `pre%2Dregistered%2Dclient`).
 */
function formEncodedBasic(secret: string): oauth.ClientAuth {
  return (_as, client, _body, headers) => {
    const credentials = `${formEncode(client.client_id)}:${formEncode(secret)}`;
    headers.set('authorization', `Basic ${btoa(credentials)}`);
  };
}

const formEncode = (value: string): string => new URLSearchParams([['', value]]).toString().slice(1);

function requireSecret(client: StoredClient): string {
  if (client.clientSecret === undefined) {
    throw new AuthorizationError(
      `The client ${client.clientId} authenticates with ${client.tokenEndpointAuthMethod} but has no secret`,
    );
  }
  return client.clientSecret;
}

/** An OAuth failure as one line: the server's `error` and `error_description` when it sent them. */
export function describe(error: unknown): string {
  if (error instanceof oauth.ResponseBodyError || error instanceof oauth.AuthorizationResponseError)
    return `${error.error}${error.error_description ? `: ${error.error_description}` : ''}`;
  return error instanceof Error ? error.message : String(error);
}
