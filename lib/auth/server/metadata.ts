/**
 * The Protected Resource Metadata document (RFC 9728) a client reads to learn which authorization servers
 * issue tokens for this MCP server, and where it is served: the well-known prefix inserted before the
 * resource's path (§3.1), so `https://h/mcp` has `https://h/.well-known/oauth-protected-resource/mcp`.
 */

export const PROTECTED_RESOURCE_WELL_KNOWN = '/.well-known/oauth-protected-resource';

export interface ProtectedResourceMetadata {
  readonly resource: string;
  readonly authorization_servers: readonly string[];
  readonly scopes_supported?: readonly string[];
  readonly bearer_methods_supported: readonly string[];
  readonly resource_name?: string;
  readonly resource_documentation?: string;
  /** The DPoP proof algorithms accepted (RFC 9728 §2), when the server accepts DPoP-bound tokens. */
  readonly dpop_signing_alg_values_supported?: readonly string[];
  /** Present (true) when the server accepts DPoP-bound tokens only. */
  readonly dpop_bound_access_tokens_required?: boolean;
}

export interface MetadataInput {
  readonly resource: URL;
  readonly authorizationServers: readonly string[];
  readonly scopesSupported?: readonly string[];
  readonly resourceName?: string;
  readonly resourceDocumentation?: string;
  /** DPoP as the server takes it: its proof algorithms, and whether bound tokens are required; undefined: off. */
  readonly dpop?: { readonly algorithms: readonly string[]; readonly required: boolean };
}

export function protectedResourceMetadata(input: MetadataInput): ProtectedResourceMetadata {
  return {
    resource: canonicalResource(input.resource),
    authorization_servers: input.authorizationServers,
    ...(input.scopesSupported !== undefined && { scopes_supported: input.scopesSupported }),
    bearer_methods_supported: ['header'],
    ...(input.resourceName !== undefined && { resource_name: input.resourceName }),
    ...(input.resourceDocumentation !== undefined && { resource_documentation: input.resourceDocumentation }),
    ...(input.dpop && { dpop_signing_alg_values_supported: input.dpop.algorithms }),
    ...(input.dpop?.required && { dpop_bound_access_tokens_required: true }),
  };
}

/**
 * The resource's identifier as clients compare it: no fragment, and no trailing slash on the root (`new
 * URL('https://h')` reads `https://h/`; RFC 8707 and the MCP spec write the server as `https://h`).
 */
export function canonicalResource(resource: URL): string {
  const url = new URL(resource.href);
  url.hash = '';
  return url.pathname === '/' && url.search === '' ? url.origin : url.href;
}

/**
 * The paths the document is served at: the well-known prefix with the resource's path after it, and the
 * bare well-known path when the resource is the origin's root. `override` replaces both.
 */
export function metadataPaths(resource: URL, override?: string): readonly string[] {
  if (override !== undefined) return [override];
  const path = resource.pathname.replace(/\/$/, '');
  return path === '' ? [PROTECTED_RESOURCE_WELL_KNOWN] : [`${PROTECTED_RESOURCE_WELL_KNOWN}${path}`];
}
