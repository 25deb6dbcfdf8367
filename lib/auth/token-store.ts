/**
 * Where a client keeps what OAuth gave it for one MCP server: the client registration it holds at the
 * authorization server, and the tokens. One record per server and client name (`AuthKey`); the flows in
 * lib/auth/client read and write it only through `update`, which a store runs one at a time per key, across
 * processes for the file store (lib/auth/node/file-token-store.ts), so that two processes refreshing at once
 * do not both spend the same refresh token.
 */

/** Which record: the MCP server (its canonical resource URL) and the client that talks to it. */
export interface AuthKey {
  /** The canonical URL of the MCP server (the OAuth resource), e.g. `https://mcp.example.com/mcp`. */
  readonly server: string;
  /** The client's name (its `clientInfo.name` or a name the user chose): one user may run several clients. */
  readonly client: string;
}

/** A client registration at one authorization server. */
export interface StoredClient {
  /** The authorization server's issuer identifier the registration belongs to (never reused at another). */
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret?: string;
  /** `client_secret_expires_at` in epoch seconds; 0 or absent: it does not expire. */
  readonly clientSecretExpiresAt?: number;
  /** How the client authenticates at the token endpoint: `none`, `client_secret_basic`, `client_secret_post`, … */
  readonly tokenEndpointAuthMethod?: string;
  /** The redirect URIs the client registered (a loopback one, for the command line). */
  readonly redirectUris?: readonly string[];
}

/** The tokens the client holds for the server. */
export interface StoredTokens {
  readonly accessToken: string;
  /** `Bearer` or `DPoP`. */
  readonly tokenType: string;
  /** When the access token stops being valid, in epoch milliseconds; absent when the server did not say. */
  readonly expiresAt?: number;
  readonly refreshToken?: string;
  /** The scopes granted (space separated), as the token response named them, or as requested. */
  readonly scope?: string;
  /** The issuer that granted them. */
  readonly issuer?: string;
}

/** Everything kept for one server and client. */
export interface AuthRecord {
  readonly client?: StoredClient;
  readonly tokens?: StoredTokens;
}

export interface TokenStore {
  /** The record, or undefined when there is none (never throws for a missing or unreadable record). */
  load(key: AuthKey): Promise<AuthRecord | undefined>;
  /**
   * Runs `change` on the current record with the key held, and stores what it returns (undefined: deletes the
   * record). Changes to one key run one at a time, in this process and (for stores shared between processes)
   * across them; `change` sees what the previous one stored. Resolves with the stored record.
   */
  update(
    key: AuthKey,
    change: (current: AuthRecord | undefined) => Promise<AuthRecord | undefined> | AuthRecord | undefined,
  ): Promise<AuthRecord | undefined>;
  /** Forgets the record (`switchboard logout`). */
  delete(key: AuthKey): Promise<void>;
}
