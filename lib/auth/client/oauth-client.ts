/**
 * The OAuth client of one MCP server (MCP authorization, 2025-06-18 and later, with the 2025-03-26
 * fallbacks): an `HttpAuthorization` the HTTP client transports consult. It sends the stored token; on a
 * 401 it discovers who authorizes the server, refreshes the token or runs the grant again; on a 403
 * `insufficient_scope` it steps up to the union of the scopes (a bounded number of times). Tokens and the
 * client registration live in a `TokenStore` under (server, client name).
 */
import type * as oauth from 'oauth4webapi';
import type { AuthorizationRefusal, HttpAuthorization } from '../http-authorization';
import { MemoryTokenStore } from '../memory-token-store';
import type { AuthKey, AuthRecord, StoredClient, StoredTokens, TokenStore } from '../token-store';
import { authorizationCodeGrant, type AuthorizationInteraction } from './authorization-code';
import { discoverAuthorizationServer, discoverProtectedResource, type ProtectedResource } from './discovery';
import { AuthHttp, AuthorizationError, LoginRequiredError, type AuthHttpOptions } from './http';
import { clientFor, type PreRegisteredClient } from './registration';
import { chooseScopes, splitScopes } from './scopes';
import { authorizationHeaderOf, refreshGrant, storedTokens } from './tokens';
import { bearerChallenge, challengedScopes, type Challenge } from './www-authenticate';
import { JWT_BEARER, machineGrant, type MachineGrant } from './machine-grants';
import { DpopKey, dpopAlgorithmFor } from './dpop';

export interface OAuthClientOptions extends AuthHttpOptions {
  /** The name the tokens are kept under, with the server's URL (default `mcp-switchboard`). */
  readonly clientName?: string;
  /** Where tokens and the registration live (default: in memory, for this process only). */
  readonly store?: TokenStore;
  /** How the user authorizes (the authorization code grant needs it). */
  readonly interaction?: AuthorizationInteraction;
  /** A grant without a user (client credentials, a workload's JWT, enterprise-managed), instead of `interaction`. */
  readonly grant?: MachineGrant;
  /** A registration made beforehand: no dynamic registration then. */
  readonly client?: PreRegisteredClient;
  /** This client's metadata document URL, used as its `client_id` where the server supports that (CIMD). */
  readonly clientMetadataUrl?: string;
  /** Sent with a dynamic registration (`client_name`, `client_uri`, `logo_uri`, …). */
  readonly clientMetadata?: Readonly<Record<string, unknown>>;
  /** Scopes to ask for, space separated (default: what the server's challenge or metadata names). */
  readonly scope?: string;
  /** Ask for `offline_access` (a refresh token) where the authorization server offers it (default true). */
  readonly offlineAccess?: boolean;
  /** Step-ups (403 `insufficient_scope`) in a row before the request fails with the 403 (default 2). */
  readonly maxStepUps?: number;
  /** Bind tokens to a key (DPoP, RFC 9449) when the authorization server offers it (default true). */
  readonly dpop?: boolean;
  /** Milliseconds since the epoch (default `Date.now`). */
  readonly now?: () => number;
}

/** What discovery found for the server, for one authorization. */
interface Authority {
  readonly resource: string;
  readonly resourceMetadata: ProtectedResource | undefined;
  readonly as: oauth.AuthorizationServer;
}

const DEFAULT_MAX_STEP_UPS = 2;

/** The client name tokens are kept under when none is given (what `switchboard login` uses too). */
export const DEFAULT_CLIENT_NAME = 'mcp-switchboard';

export class OAuthClient implements HttpAuthorization {
  private readonly serverUrl: URL;
  private readonly key: AuthKey;
  private readonly store: TokenStore;
  private readonly http: AuthHttp;
  private readonly now: () => number;
  private header: string | undefined;
  private tokens: StoredTokens | undefined;
  /** The authorization under way: refusals meanwhile wait for it instead of starting their own. */
  private pending: Promise<boolean> | undefined;
  private stepUps = 0;
  /** The scopes the last authorization asked for (a step-up keeps them). */
  private requested: string[] = [];
  /** Made when an authorization server first offers DPoP. */
  private dpopKey: DpopKey | undefined;

  constructor(
    server: string | URL,
    private readonly options: OAuthClientOptions = {},
  ) {
    this.serverUrl = new URL(server);
    this.serverUrl.hash = '';
    this.key = { server: canonicalServerUrl(this.serverUrl), client: options.clientName ?? DEFAULT_CLIENT_NAME };
    this.store = options.store ?? new MemoryTokenStore();
    this.http = new AuthHttp(options);
    this.now = options.now ?? Date.now;
  }

  async prepare(): Promise<void> {
    const record = await this.store.load(this.key);
    if (record?.tokens) this.use(record.tokens);
  }

  authorization(): string | undefined {
    return this.header;
  }

  requestHeaders(method: string, url: URL): Promise<Readonly<Record<string, string>>> | undefined {
    const tokens = this.tokens;
    const key = this.dpopKey;
    if (!tokens || !key || tokens.tokenType.toLowerCase() !== 'dpop') return undefined;
    return key.proof(method, url, tokens.accessToken).then((proof) => ({ dpop: proof }));
  }

  /** The tokens in use (undefined before the first authorization). */
  get currentTokens(): StoredTokens | undefined {
    return this.tokens;
  }

  refused(refusal: AuthorizationRefusal): Promise<boolean> {
    // A token newer than the one refused is already here: try it.
    if (this.header !== undefined && refusal.sentAuthorization !== this.header) return Promise.resolve(true);
    return (this.pending ??= this.handle(refusal).finally(() => {
      this.pending = undefined;
    }));
  }

  /** Forgets the tokens and the registration (`switchboard logout`). */
  async forget(): Promise<void> {
    await this.store.delete(this.key);
    this.header = undefined;
    this.tokens = undefined;
  }

  private async handle(refusal: AuthorizationRefusal): Promise<boolean> {
    const challenge = bearerChallenge(refusal.wwwAuthenticate);
    if (challenge?.params.error === 'use_dpop_nonce' && refusal.dpopNonce !== undefined && this.dpopKey) {
      this.dpopKey.rememberNonce(refusal.url, refusal.dpopNonce);
      return true;
    }
    if (refusal.status === 403) {
      if (challenge?.params.error !== 'insufficient_scope') return false;
      if (++this.stepUps > (this.options.maxStepUps ?? DEFAULT_MAX_STEP_UPS)) return false;
      await this.authorize(challenge, await this.discover(challenge), true);
      return true;
    }
    if (refusal.status !== 401) return false;
    const authority = await this.discover(challenge);
    if (refusal.sentAuthorization !== undefined && (await this.refresh(authority, refusal.sentAuthorization)))
      return true;
    await this.authorize(challenge, authority, false);
    this.stepUps = 0;
    return true;
  }

  private async discover(challenge: Challenge | undefined): Promise<Authority> {
    const resourceMetadata = await discoverProtectedResource(this.serverUrl, challenge, this.http);
    const issuer = resourceMetadata?.authorizationServers[0] ?? this.serverUrl.origin;
    if (resourceMetadata && resourceMetadata.authorizationServers.length === 0) {
      throw new AuthorizationError(
        `The protected resource metadata at ${resourceMetadata.url} names no authorization server`,
      );
    }
    const as = await discoverAuthorizationServer(issuer, this.http);
    return { resource: resourceMetadata?.resource ?? this.key.server, resourceMetadata, as };
  }

  /**
   * Refreshes the refused token, holding the store's key: another process may have refreshed it meanwhile
   * (then its token is used, and its refresh token is not spent twice). False when there is nothing to
   * refresh with or the refresh failed (the grant runs again).
   */
  private async refresh(authority: Authority, refused: string): Promise<boolean> {
    let refreshed: StoredTokens | undefined;
    try {
      await this.store.update(this.key, async (current) => {
        const tokens = current?.tokens;
        const client = current?.client;
        if (!tokens || !client || tokens.issuer !== authority.as.issuer || client.issuer !== authority.as.issuer)
          return current;
        if (authorizationHeaderOf(tokens) !== refused) {
          refreshed = tokens;
          return current;
        }
        if (tokens.refreshToken === undefined) return current;
        const dpop = await this.dpopFor(authority.as, client);
        refreshed = await refreshGrant(authority.as, client, tokens, authority.resource, this.http, this.now(), dpop);
        return { ...current, tokens: refreshed };
      });
    } catch {
      return false;
    }
    if (refreshed === undefined) return false;
    this.use(refreshed);
    return true;
  }

  /** Runs the grant (again): a new token, with the scopes chosen for `challenge`. */
  private async authorize(challenge: Challenge | undefined, authority: Authority, stepUp: boolean): Promise<void> {
    const { as, resource, resourceMetadata } = authority;
    if (!this.options.grant && !this.options.interaction) {
      throw new LoginRequiredError(
        `${this.serverUrl.href} requires a new authorization, and this client has no way to ask the user (give it an interaction, or log in first)`,
      );
    }
    const stored = await this.store.load(this.key);
    // A new grant keeps asking for what was asked before (an expired token's scopes); a step-up adds what was granted.
    const previous = stepUp ? [...this.requested, ...splitScopes(this.tokens?.scope)] : this.requested;
    const scopes = chooseScopes({
      ...(this.options.scope !== undefined && { configured: this.options.scope }),
      ...(challengedScopes(challenge) && { challenged: challengedScopes(challenge) }),
      ...(resourceMetadata?.scopesSupported && { resourceScopes: resourceMetadata.scopesSupported }),
      ...(previous.length > 0 && { previous }),
      ...(as.scopes_supported && { authorizationServerScopes: as.scopes_supported }),
      offlineAccess: this.options.offlineAccess ?? true,
    });
    const client = await this.clientAt(as, stored);
    const response = await this.grant(as, client, scopes, resource);
    const tokens = storedTokens(response, as.issuer, this.now(), { scope: scopes.join(' ') || undefined });
    this.requested = scopes;
    await this.store.update(this.key, () => ({ client, tokens }) satisfies AuthRecord);
    this.use(tokens);
  }

  /** The registration at `as`: never one made at another authorization server. */
  private clientAt(as: oauth.AuthorizationServer, stored: AuthRecord | undefined): Promise<StoredClient> {
    const machine = this.options.grant;
    const redirectUri = this.options.interaction?.redirectUri;
    return clientFor(
      as,
      stored?.client,
      {
        ...(machine && { preRegistered: machine }),
        ...(this.options.client && { preRegistered: this.options.client }),
        ...(this.options.clientMetadataUrl !== undefined && { clientMetadataUrl: this.options.clientMetadataUrl }),
        ...(this.options.clientMetadata && { clientMetadata: this.options.clientMetadata }),
        grantTypes: machine
          ? [machine.type === 'client_credentials' ? 'client_credentials' : JWT_BEARER]
          : ['authorization_code', 'refresh_token'],
        redirectUris: redirectUri === undefined ? [] : [redirectUri],
      },
      this.http,
    );
  }

  private async grant(
    as: oauth.AuthorizationServer,
    client: StoredClient,
    scopes: readonly string[],
    resource: string,
  ): Promise<oauth.TokenEndpointResponse> {
    const dpop = await this.dpopFor(as, client);
    const machine = this.options.grant;
    if (machine)
      return machineGrant({ as, client, grant: machine, scopes, resource, ...(dpop && { dpop }) }, this.http);
    const interaction = this.options.interaction!;
    return authorizationCodeGrant({ as, client, interaction, scopes, resource, ...(dpop && { dpop }) }, this.http);
  }

  /** The DPoP handle for token requests at `as`, when it offers DPoP with an algorithm we sign with. */
  private async dpopFor(as: oauth.AuthorizationServer, client: StoredClient): Promise<oauth.DPoPHandle | undefined> {
    if (this.options.dpop === false) return undefined;
    const algorithm = dpopAlgorithmFor(as);
    if (algorithm === undefined) return undefined;
    if (this.dpopKey?.algorithm !== algorithm) this.dpopKey = await DpopKey.generate(algorithm);
    return this.dpopKey.tokenRequests({ client_id: client.clientId });
  }

  private use(tokens: StoredTokens): void {
    this.tokens = tokens;
    this.header = authorizationHeaderOf(tokens);
  }
}

/** The server's URL as a resource identifier: no fragment, no trailing slash on a bare origin. */
export function canonicalServerUrl(url: URL): string {
  const path = url.pathname === '/' ? '' : url.pathname;
  return `${url.origin}${path}${url.search}`;
}
