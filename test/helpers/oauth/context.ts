/** What every endpoint handler of the tests' authorization server shares, and the log entry it fills in. */
import type { ClientAuthContext } from './client-auth';
import type { ClientRegistry } from './clients';
import type { GrantBook } from './grants';
import type { SigningKeys } from './keys';
import type { AuthorizationServerOptions, ClientAuthMethod, GrantType, PkceOutcome } from './types';

export interface ServerContext {
  readonly options: AuthorizationServerOptions;
  readonly issuer: string;
  readonly subject: string;
  readonly grantTypes: readonly GrantType[];
  readonly keys: SigningKeys;
  readonly registry: ClientRegistry;
  readonly grants: GrantBook;
  readonly clientAuth: ClientAuthContext;
}

/** The parts of an event a handler learns while it works (the router adds endpoint, path and status). */
export interface RequestNotes {
  grantType?: string;
  clientId?: string;
  resource?: string;
  scope?: string;
  authMethod?: ClientAuthMethod;
  pkce?: PkceOutcome;
  /** An error answered without throwing (the authorization endpoint redirects its errors). */
  error?: string;
}
