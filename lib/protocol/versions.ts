/** Protocol revisions we negotiate, newest first. Revision strings are dates, so they compare as strings. */
export const SUPPORTED_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const;

export type ProtocolVersion = (typeof SUPPORTED_PROTOCOL_VERSIONS)[number];

export const LATEST_PROTOCOL_VERSION: ProtocolVersion = '2025-11-25';

/** Streamable HTTP assumes this revision when a request carries no `MCP-Protocol-Version` header. */
export const HTTP_DEFAULT_PROTOCOL_VERSION: ProtocolVersion = '2025-03-26';

export function isSupportedVersion(
  version: unknown,
  supported: readonly string[] = SUPPORTED_PROTOCOL_VERSIONS,
): version is ProtocolVersion {
  return typeof version === 'string' && supported.includes(version);
}

/**
 * Server side of the negotiation: echo the requested revision when we support it, otherwise answer with
 * our newest (the client then decides whether it can use that).
 */
export function negotiateVersion(
  requested: unknown,
  supported: readonly ProtocolVersion[] = SUPPORTED_PROTOCOL_VERSIONS,
): ProtocolVersion {
  return isSupportedVersion(requested, supported) ? requested : supported[0]!;
}

/** True when `version` is `minimum` or a later revision. */
export function isAtLeast(version: string, minimum: string): boolean {
  return version >= minimum;
}
