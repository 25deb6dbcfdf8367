/** Required scopes: what a request needs, what a principal lacks, and the scope a step-up asks for. */

/**
 * What serves the scope check at the HTTP layer: the scopes a request needs besides the endpoint's own
 * (a tool's, a resource's, a prompt's). `ServerDefinition` implements it; undefined or empty: none.
 */
export interface ScopeRequirements {
  requiredScopes(method: string, params: unknown): readonly string[] | undefined;
}

/** Whether `granted` holds every scope of `needed` (undefined: nothing needed). */
export function grantsAll(granted: readonly string[], needed: readonly string[] | undefined): boolean {
  return needed === undefined || needed.every((scope) => granted.includes(scope));
}

/** The scopes of `needed` that `granted` lacks (empty when none). */
export function missingScopes(granted: readonly string[], needed: readonly string[]): readonly string[] {
  return needed.filter((scope) => !granted.includes(scope));
}

/**
 * The `scope` of a 403 `insufficient_scope` challenge: what the caller has and what the call needs, so a
 * client that asks for exactly this in its step-up keeps the access it had (MCP 2025-11-25 step-up).
 */
export function stepUpScope(granted: readonly string[], needed: readonly string[]): string {
  return [...new Set([...granted, ...needed])].join(' ');
}

/** Checks the `scopes` of a tool, resource or prompt definition: scope tokens (RFC 6749 §3.3), no spaces. */
export function checkScopes(owner: string, scopes: unknown): void {
  if (scopes === undefined) return;
  if (!Array.isArray(scopes) || !scopes.every((scope) => typeof scope === 'string' && SCOPE_TOKEN.test(scope))) {
    throw new TypeError(`${owner}: scopes must be an array of scope names (no spaces, quotes or backslashes)`);
  }
}

const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;
