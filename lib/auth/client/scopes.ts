/**
 * Which scopes to ask for (the MCP specification's scope selection strategy): the scopes the user configured,
 * else those the server's challenge names, else everything the resource metadata lists, else none (the
 * `scope` parameter is then omitted). A step-up asks for the union of what was asked before and what the
 * challenge names (configured scopes included: the server just said they are not enough). `offline_access` is added when the client wants a refresh token and the authorization
 * server lists it, and never otherwise.
 */

export interface ScopeChoice {
  readonly configured?: string;
  readonly challenged?: readonly string[];
  readonly resourceScopes?: readonly string[];
  /** A step-up (403 `insufficient_scope`): what was asked before, and what the challenge names, whatever was configured. */
  readonly previous?: readonly string[];
  readonly authorizationServerScopes?: readonly string[];
  readonly offlineAccess: boolean;
}

export const OFFLINE_ACCESS = 'offline_access';

/** The scopes to request, in order and without duplicates; empty: omit the parameter. */
export function chooseScopes(choice: ScopeChoice): string[] {
  const base =
    choice.configured !== undefined
      ? splitScopes(choice.configured)
      : (choice.challenged ?? choice.resourceScopes ?? []);
  const stepUp = choice.previous !== undefined;
  const chosen = new Set<string>([...(choice.previous ?? []), ...base, ...(stepUp ? (choice.challenged ?? []) : [])]);
  const offered = choice.authorizationServerScopes;
  if (offered === undefined || !offered.includes(OFFLINE_ACCESS)) chosen.delete(OFFLINE_ACCESS);
  else if (choice.offlineAccess) chosen.add(OFFLINE_ACCESS);
  return [...chosen];
}

export function splitScopes(scope: string | undefined): string[] {
  return scope === undefined ? [] : scope.split(/\s+/).filter((item) => item !== '');
}
