/**
 * The clients the authorization server knows: pre-registered ones, those registered at `/register`
 * (RFC 7591), and URL client_ids resolved through their metadata documents when that is enabled.
 */
import { randomBytes } from 'node:crypto';
import type { JSONWebKeySet } from 'jose';
import { OAuthError } from './http-io';
import type {
  AuthorizationServerOptions,
  ClientAuthMethod,
  ClientIdMetadataDocument,
  ClientRegistration,
} from './types';

export interface RegisteredClient {
  readonly clientId: string;
  readonly clientSecret?: string;
  readonly redirectUris: readonly string[];
  readonly authMethod: ClientAuthMethod;
  readonly jwks?: JSONWebKeySet;
  readonly scope?: string;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** Exact match, or the same loopback URI on another port (RFC 8252 §7.3: native apps pick their port). */
export function redirectUriAllowed(client: RegisteredClient, redirectUri: string): boolean {
  if (client.redirectUris.includes(redirectUri)) return true;
  let asked: URL;
  try {
    asked = new URL(redirectUri);
  } catch {
    return false;
  }
  if (asked.protocol !== 'http:' || !LOOPBACK_HOSTS.has(asked.hostname)) return false;
  return client.redirectUris.some((registered) => {
    const known = new URL(registered);
    return (
      known.protocol === 'http:' &&
      known.hostname === asked.hostname &&
      known.pathname === asked.pathname &&
      known.search === asked.search
    );
  });
}

function isUrlClientId(clientId: string): boolean {
  return clientId.startsWith('https://') || clientId.startsWith('http://');
}

async function fetchMetadataDocument(clientId: string): Promise<ClientIdMetadataDocument> {
  const response = await fetch(clientId, { headers: { accept: 'application/json' }, redirect: 'error' });
  if (!response.ok) throw new Error(`client metadata document answered ${response.status}`);
  return (await response.json()) as ClientIdMetadataDocument;
}

function stringArray(value: unknown, member: string): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
    throw new OAuthError('invalid_client_metadata', `${member} must be an array of strings`);
  }
  return value as string[];
}

export class ClientRegistry {
  private readonly clients = new Map<string, RegisteredClient>();

  constructor(
    private readonly options: AuthorizationServerOptions,
    private readonly supportedAuthMethods: readonly ClientAuthMethod[],
  ) {
    for (const registration of options.clients ?? []) this.add(registration);
  }

  add(registration: ClientRegistration): RegisteredClient {
    const client: RegisteredClient = {
      clientId: registration.clientId,
      clientSecret: registration.clientSecret,
      redirectUris: registration.redirectUris ?? [],
      authMethod: registration.authMethod ?? (registration.clientSecret ? 'client_secret_basic' : 'none'),
      jwks: registration.jwks,
      scope: registration.scope,
    };
    this.clients.set(client.clientId, client);
    return client;
  }

  /** A registered client, or the client a URL client_id's metadata document describes (when supported). */
  async find(clientId: string): Promise<RegisteredClient | undefined> {
    const known = this.clients.get(clientId);
    if (known || !this.options.clientIdMetadataDocumentSupported || !isUrlClientId(clientId)) return known;
    let document: ClientIdMetadataDocument;
    try {
      document = await (this.options.resolveClientIdMetadataDocument ?? fetchMetadataDocument)(clientId);
    } catch {
      return undefined;
    }
    // The document must name itself: a URL cannot borrow another client's metadata.
    if (document.client_id !== clientId) return undefined;
    return {
      clientId,
      redirectUris: document.redirect_uris ?? [],
      authMethod: document.token_endpoint_auth_method ?? 'none',
      jwks: document.jwks,
    };
  }

  /** RFC 7591 §3.2.1: registers the metadata and answers the client information response. */
  register(metadata: Record<string, unknown>): Record<string, unknown> {
    const redirectUris = stringArray(metadata.redirect_uris, 'redirect_uris') ?? [];
    const grantTypes = stringArray(metadata.grant_types, 'grant_types') ?? ['authorization_code'];
    if (grantTypes.includes('authorization_code') && redirectUris.length === 0) {
      throw new OAuthError('invalid_redirect_uri', 'redirect_uris is required for the authorization_code grant');
    }
    for (const uri of redirectUris) {
      if (!URL.canParse(uri) || new URL(uri).hash)
        throw new OAuthError('invalid_redirect_uri', `not a redirect URI: ${uri}`);
    }
    const asked = metadata.token_endpoint_auth_method;
    if (asked !== undefined && !this.supportedAuthMethods.includes(asked as ClientAuthMethod)) {
      throw new OAuthError('invalid_client_metadata', `token_endpoint_auth_method ${String(asked)} is not supported`);
    }
    // RFC 7591 §2: the default is client_secret_basic; a server without it gives its first method instead.
    const authMethod =
      (asked as ClientAuthMethod | undefined) ??
      (this.supportedAuthMethods.includes('client_secret_basic')
        ? 'client_secret_basic'
        : this.supportedAuthMethods[0]!);
    if (authMethod === 'private_key_jwt' && typeof metadata.jwks !== 'object') {
      throw new OAuthError('invalid_client_metadata', 'private_key_jwt needs jwks');
    }
    const secretless = authMethod === 'none' || authMethod === 'private_key_jwt';
    const client = this.add({
      clientId: `client-${randomBytes(8).toString('hex')}`,
      clientSecret: secretless ? undefined : randomBytes(24).toString('base64url'),
      redirectUris,
      authMethod,
      jwks: metadata.jwks as JSONWebKeySet | undefined,
      scope: typeof metadata.scope === 'string' ? metadata.scope : undefined,
    });
    const now = Math.floor((this.options.now ?? Date.now)() / 1000);
    return {
      ...metadata,
      client_id: client.clientId,
      client_id_issued_at: now,
      ...(client.clientSecret ? { client_secret: client.clientSecret, client_secret_expires_at: 0 } : {}),
      redirect_uris: redirectUris,
      grant_types: grantTypes,
      token_endpoint_auth_method: authMethod,
    };
  }
}
