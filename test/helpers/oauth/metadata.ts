/** The authorization server's metadata document (RFC 8414 / OpenID Discovery) and where it is served. */
import {
  DPOP_ALGORITHMS,
  type AuthorizationServerOptions,
  type ClientAuthMethod,
  type GrantType,
  type MetadataLocation,
} from './types';

export interface MetadataInput {
  readonly issuer: string;
  /** The issuer's path, `''` or `/tenant1`. */
  readonly issuerPath: string;
  readonly grantTypes: readonly GrantType[];
  readonly authMethods: readonly ClientAuthMethod[];
  readonly signingAlgorithm: string;
}

/** The path of each well-known URL the options ask for, and whether it is an OpenID one. */
export function metadataPaths(
  issuerPath: string,
  locations: readonly MetadataLocation[],
): Map<string, 'oauth' | 'openid'> {
  const paths = new Map<string, 'oauth' | 'openid'>();
  for (const location of locations) {
    if (location === 'oauth-authorization-server')
      paths.set(`/.well-known/oauth-authorization-server${issuerPath}`, 'oauth');
    if (location === 'openid-configuration' || location === 'openid-configuration-inserted') {
      paths.set(`/.well-known/openid-configuration${issuerPath}`, 'openid');
    }
    if (location === 'openid-configuration' || location === 'openid-configuration-appended') {
      paths.set(`${issuerPath}/.well-known/openid-configuration`, 'openid');
    }
  }
  return paths;
}

export function metadataDocument(
  input: MetadataInput,
  options: AuthorizationServerOptions,
  flavour: 'oauth' | 'openid',
): Record<string, unknown> {
  const endpoint = (path: string) => `${input.issuer}${path}`;
  const authMethods = [...input.authMethods];
  const document: Record<string, unknown> = {
    issuer: options.metadataIssuer ?? input.issuer,
    authorization_endpoint: endpoint('/authorize'),
    token_endpoint: endpoint('/token'),
    ...(options.dynamicRegistration === false ? {} : { registration_endpoint: endpoint('/register') }),
    introspection_endpoint: endpoint('/introspect'),
    revocation_endpoint: endpoint('/revoke'),
    jwks_uri: endpoint('/jwks'),
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: [...input.grantTypes],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: authMethods,
    introspection_endpoint_auth_methods_supported: authMethods.filter((method) => method !== 'none'),
    revocation_endpoint_auth_methods_supported: authMethods,
    ...(authMethods.includes('private_key_jwt')
      ? { token_endpoint_auth_signing_alg_values_supported: ['ES256', 'RS256'] }
      : {}),
    ...(options.scopesSupported ? { scopes_supported: [...options.scopesSupported] } : {}),
    authorization_response_iss_parameter_supported: options.advertiseIssParameter ?? true,
    ...(options.clientIdMetadataDocumentSupported ? { client_id_metadata_document_supported: true } : {}),
    ...(options.dpop ? { dpop_signing_alg_values_supported: [...DPOP_ALGORITHMS] } : {}),
    ...(flavour === 'openid'
      ? { subject_types_supported: ['public'], id_token_signing_alg_values_supported: [input.signingAlgorithm] }
      : {}),
  };
  for (const [member, value] of Object.entries(options.metadataOverrides ?? {})) {
    if (value === undefined) delete document[member];
    else document[member] = value;
  }
  return document;
}
