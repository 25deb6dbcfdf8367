/**
 * Finding who authorizes access to an MCP server: its Protected Resource Metadata (RFC 9728), then the
 * authorization server's metadata (RFC 8414 or OpenID Connect Discovery), in the orders the MCP
 * authorization specification gives, with the 2025-03-26 fallbacks (no resource metadata: the server's
 * origin is the authorization server; no metadata at all: `/authorize`, `/token`, `/register` there).
 */
import * as oauth from 'oauth4webapi';
import { AuthorizationError, requireEndpointUrl, type AuthHttp } from './http';
import type { Challenge } from './www-authenticate';

export interface ProtectedResource {
  /** The `resource` value exactly as published: it is sent as the RFC 8707 `resource` parameter verbatim. */
  readonly resource: string;
  readonly authorizationServers: readonly string[];
  readonly scopesSupported?: readonly string[];
  /** Where it was found. */
  readonly url: string;
}

const PRM_WELL_KNOWN = '/.well-known/oauth-protected-resource';

/**
 * Where to look for the server's resource metadata, in order: the challenge's URL, then path-based, then root.
 * The challenge's URL may be on another origin (RFC 9728), but only `https:` (or `http:` on this machine).
 */
export function resourceMetadataCandidates(serverUrl: URL, challenge: Challenge | undefined): URL[] {
  const candidates: URL[] = [];
  const advertised = challenge?.params.resource_metadata;
  // An unreadable URL is passed over: the well-known locations remain.
  if (advertised !== undefined && URL.canParse(advertised, serverUrl)) {
    const resolved = new URL(advertised, serverUrl).href;
    candidates.push(
      requireEndpointUrl(resolved, 'resource_metadata', `the WWW-Authenticate challenge of ${serverUrl.href}`),
    );
  }
  const path = serverUrl.pathname.replace(/\/$/, '');
  if (path !== '') candidates.push(new URL(`${PRM_WELL_KNOWN}${path}`, serverUrl.origin));
  candidates.push(new URL(PRM_WELL_KNOWN, serverUrl.origin));
  return candidates;
}

/**
 * The server's resource metadata, or undefined when none of the locations has it (a 2025-03-26 server).
 * The metadata must be for this server: its `resource` the server's URL or a prefix of it on the same origin.
 */
export async function discoverProtectedResource(
  serverUrl: URL,
  challenge: Challenge | undefined,
  http: AuthHttp,
): Promise<ProtectedResource | undefined> {
  for (const url of resourceMetadataCandidates(serverUrl, challenge)) {
    const response = await http.getJson(url);
    if (response.status !== 200) {
      await response.body?.cancel();
      continue;
    }
    const document = await readJsonObject(response, `the protected resource metadata at ${url.href}`);
    const resource = document.resource;
    if (typeof resource !== 'string') {
      throw new AuthorizationError(`The protected resource metadata at ${url.href} has no "resource"`);
    }
    if (!resourceCovers(resource, serverUrl)) {
      throw new AuthorizationError(
        `The protected resource metadata at ${url.href} is for ${resource}, not for ${serverUrl.href}: refusing to authorize`,
      );
    }
    const servers = document.authorization_servers;
    const authorizationServers = Array.isArray(servers)
      ? servers.filter((item): item is string => typeof item === 'string')
      : [];
    for (const issuer of authorizationServers) {
      requireEndpointUrl(issuer, 'authorization_servers', `the protected resource metadata at ${url.href}`);
    }
    return {
      resource,
      authorizationServers,
      ...(isStringArray(document.scopes_supported) && { scopesSupported: document.scopes_supported }),
      url: url.href,
    };
  }
  return undefined;
}

/** `resource` names `serverUrl` or a parent of it: same origin, and its path a whole-segment prefix. */
export function resourceCovers(resource: string, serverUrl: URL): boolean {
  let parsed: URL;
  try {
    parsed = new URL(resource);
  } catch {
    return false;
  }
  if (parsed.origin !== serverUrl.origin || parsed.hash !== '' || parsed.search !== '') return false;
  const prefix = parsed.pathname.replace(/\/$/, '');
  const path = serverUrl.pathname;
  return prefix === '' || path === prefix || path.startsWith(`${prefix}/`);
}

/** Where an issuer's metadata may be, in the specification's order. */
export function authorizationServerMetadataCandidates(issuer: URL): URL[] {
  const path = issuer.pathname.replace(/\/$/, '');
  const origin = issuer.origin;
  if (path === '') {
    return [
      new URL('/.well-known/oauth-authorization-server', origin),
      new URL('/.well-known/openid-configuration', origin),
    ];
  }
  return [
    new URL(`/.well-known/oauth-authorization-server${path}`, origin),
    new URL(`/.well-known/openid-configuration${path}`, origin),
    new URL(`${path}/.well-known/openid-configuration`, origin),
  ];
}

/**
 * The authorization server's metadata; its `issuer` must be the issuer we looked for (oauth4webapi checks),
 * or it is refused, not skipped. Without metadata anywhere: the 2025-03-26 default endpoints.
 */
export async function discoverAuthorizationServer(issuer: string, http: AuthHttp): Promise<oauth.AuthorizationServer> {
  let issuerUrl: URL;
  try {
    issuerUrl = new URL(issuer);
  } catch (error) {
    throw new AuthorizationError(`The authorization server ${JSON.stringify(issuer)} is not a URL`, { cause: error });
  }
  for (const url of authorizationServerMetadataCandidates(issuerUrl)) {
    const response = await http.getJson(url);
    if (response.status !== 200) {
      await response.body?.cancel();
      continue;
    }
    let as: oauth.AuthorizationServer;
    try {
      as = await oauth.processDiscoveryResponse(issuerUrl, response);
    } catch (error) {
      throw new AuthorizationError(
        `The authorization server metadata at ${url.href} cannot be used: ${(error as Error).message}`,
        { cause: error },
      );
    }
    for (const field of ENDPOINT_FIELDS) {
      if (as[field] !== undefined) {
        requireEndpointUrl(as[field], field, `the authorization server metadata at ${url.href}`);
      }
    }
    return as;
  }
  return defaultEndpoints(issuer);
}

/** The metadata members the client may send a request or the user to. */
const ENDPOINT_FIELDS = [
  'authorization_endpoint',
  'token_endpoint',
  'registration_endpoint',
  'jwks_uri',
  'revocation_endpoint',
  'introspection_endpoint',
] as const;

/**
 * The 2025-03-26 fallback: the default endpoint paths at the issuer's origin. That revision has every client
 * use PKCE (OAuth 2.1) without metadata to say so, so its defaults include S256; later revisions require the
 * metadata to advertise it (`authorizationCodeGrant` refuses otherwise).
 */
function defaultEndpoints(issuer: string): oauth.AuthorizationServer {
  const origin = new URL(issuer).origin;
  return {
    issuer,
    authorization_endpoint: `${origin}/authorize`,
    token_endpoint: `${origin}/token`,
    registration_endpoint: `${origin}/register`,
    code_challenge_methods_supported: ['S256'],
  };
}

async function readJsonObject(response: Response, what: string): Promise<Record<string, unknown>> {
  let body: unknown;
  try {
    body = await response.json();
  } catch (error) {
    if (error instanceof AuthorizationError) throw error; // too large to read
    throw new AuthorizationError(`${what} is not JSON`, { cause: error });
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new AuthorizationError(`${what} is not a JSON object`);
  }
  return body as Record<string, unknown>;
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}
