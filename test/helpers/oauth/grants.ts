/**
 * What the authorization server has granted: authorization codes (single use, short-lived), refresh tokens
 * (rotated on use unless told otherwise) and access tokens (RFC 9068 JWTs, revocable by `jti`). Also the
 * scope and resource rules the authorize and token endpoints share.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { decodeJwt } from 'jose';
import { OAuthError } from './http-io';
import type { SigningKeys } from './keys';
import type { IssueTokenOptions } from './types';

export interface Grant {
  readonly clientId: string;
  readonly subject: string;
  /** Space-separated; empty when no scope was asked for. */
  readonly scope: string;
  readonly resource: string | undefined;
  /** The thumbprint of the DPoP key the token request proved (RFC 9449): the access token is bound to it. */
  readonly jkt?: string;
}

export interface PendingCode extends Grant {
  readonly redirectUri: string;
  readonly codeChallenge: string;
  readonly expiresAt: number;
  used: boolean;
  /** The tokens this code produced, revoked if the code is replayed (RFC 6749 §4.1.2). */
  readonly issued: string[];
}

export interface TokenResponse {
  readonly access_token: string;
  readonly token_type: 'Bearer' | 'DPoP';
  readonly expires_in: number;
  readonly scope?: string;
  readonly refresh_token?: string;
}

export interface GrantSettings {
  readonly issuer: string;
  readonly keys: SigningKeys;
  readonly now: () => number;
  readonly accessTokenTtlSec: number;
  readonly codeTtlSec: number;
  readonly scopesSupported: readonly string[] | undefined;
  readonly refreshTokens: 'offline_access' | 'always' | 'never';
  readonly refreshGrantEnabled: boolean;
}

const randomToken = () => randomBytes(32).toString('base64url');

export function scopesOf(scope: string | null | undefined): string[] {
  return (scope ?? '').split(' ').filter((item) => item.length > 0);
}

/** The single `resource` parameter of a request (RFC 8707), which must be an absolute URI without fragment. */
export function resourceOf(parameters: URLSearchParams): string | undefined {
  const resources = parameters.getAll('resource');
  if (resources.length === 0) return undefined;
  if (resources.length > 1) throw new OAuthError('invalid_target', 'one resource per request');
  const resource = resources[0]!;
  if (!URL.canParse(resource) || new URL(resource).hash)
    throw new OAuthError('invalid_target', 'resource must be an absolute URI without fragment');
  return resource;
}

export class GrantBook {
  private readonly codes = new Map<string, PendingCode>();
  private readonly refreshTokens = new Map<string, Grant>();
  private readonly revokedTokenIds = new Set<string>();

  constructor(readonly settings: GrantSettings) {}

  /** The scope asked for, refused with `invalid_scope` beyond the supported ones or the client's own. */
  checkScope(scope: string | null | undefined, clientScope?: string): string {
    const asked = scopesOf(scope);
    const allowed = this.settings.scopesSupported;
    const unknown = asked.filter(
      (item) =>
        (allowed && !allowed.includes(item)) || (clientScope !== undefined && !scopesOf(clientScope).includes(item)),
    );
    if (unknown.length > 0) throw new OAuthError('invalid_scope', `scope not supported: ${unknown.join(' ')}`);
    return asked.join(' ');
  }

  createCode(pending: Omit<PendingCode, 'expiresAt' | 'used' | 'issued'>): string {
    const code = randomToken();
    this.codes.set(code, {
      ...pending,
      expiresAt: this.settings.now() + this.settings.codeTtlSec * 1000,
      used: false,
      issued: [],
    });
    return code;
  }

  /** The code's grant, marked used; a replayed code also revokes what it produced the first time. */
  redeemCode(code: string | null, clientId: string): PendingCode {
    const pending = code === null ? undefined : this.codes.get(code);
    if (!pending || pending.clientId !== clientId) throw new OAuthError('invalid_grant', 'unknown authorization code');
    if (pending.used) {
      for (const token of pending.issued) this.revoke(token);
      throw new OAuthError('invalid_grant', 'authorization code already used');
    }
    pending.used = true;
    if (this.settings.now() > pending.expiresAt) throw new OAuthError('invalid_grant', 'authorization code expired');
    return pending;
  }

  /** The grant behind a refresh token; with rotation the token stops working now. */
  redeemRefreshToken(token: string | null, clientId: string, rotate: boolean): Grant {
    const grant = token === null ? undefined : this.refreshTokens.get(token);
    if (!grant || grant.clientId !== clientId) throw new OAuthError('invalid_grant', 'unknown or used refresh token');
    if (rotate) this.refreshTokens.delete(token!);
    return grant;
  }

  /** The token response for a grant; a refresh token is added when `withRefreshToken` and the settings allow. */
  async respond(grant: Grant, withRefreshToken: boolean, produced?: string[]): Promise<TokenResponse> {
    const access = await this.signAccessToken({
      subject: grant.subject,
      audience: grant.resource,
      scope: grant.scope,
      clientId: grant.clientId,
      ...(grant.jkt !== undefined && { claims: { cnf: { jkt: grant.jkt } } }),
    });
    const refresh = withRefreshToken && this.shouldIssueRefreshToken(grant.scope) ? randomToken() : undefined;
    if (refresh) this.refreshTokens.set(refresh, { ...grant, jkt: undefined });
    produced?.push(access, ...(refresh ? [refresh] : []));
    return {
      access_token: access,
      token_type: grant.jkt !== undefined ? 'DPoP' : 'Bearer',
      expires_in: this.settings.accessTokenTtlSec,
      ...(grant.scope ? { scope: grant.scope } : {}),
      ...(refresh ? { refresh_token: refresh } : {}),
    };
  }

  private shouldIssueRefreshToken(scope: string): boolean {
    if (!this.settings.refreshGrantEnabled) return false;
    if (this.settings.refreshTokens === 'always') return true;
    return this.settings.refreshTokens === 'offline_access' && scopesOf(scope).includes('offline_access');
  }

  /** An RFC 9068 access token. */
  signAccessToken(options: IssueTokenOptions): Promise<string> {
    const issuedAt = Math.floor(this.settings.now() / 1000);
    return this.settings.keys.sign(
      {
        iss: this.settings.issuer,
        sub: options.subject ?? 'user-1',
        ...(options.audience !== undefined ? { aud: options.audience } : {}),
        client_id: options.clientId ?? 'test-client',
        ...(options.scope ? { scope: options.scope } : {}),
        iat: issuedAt,
        exp: issuedAt + (options.ttlSec ?? this.settings.accessTokenTtlSec),
        jti: randomUUID(),
        ...options.claims,
      },
      'at+jwt',
    );
  }

  /** Revokes a refresh token, or an access token by its `jti`. */
  revoke(token: string): void {
    if (this.refreshTokens.delete(token)) return;
    try {
      const { jti } = decodeJwt(token);
      if (jti) this.revokedTokenIds.add(jti);
    } catch {
      // Not a token of ours: nothing to revoke (RFC 7009 §2.2).
    }
  }

  /** RFC 7662 §2.2: what the server knows of a token it issued, or `{ active: false }`. */
  async introspect(token: string): Promise<Record<string, unknown>> {
    const refresh = this.refreshTokens.get(token);
    if (refresh) {
      return {
        active: true,
        token_type: 'refresh_token',
        client_id: refresh.clientId,
        sub: refresh.subject,
        iss: this.settings.issuer,
        ...(refresh.scope ? { scope: refresh.scope } : {}),
      };
    }
    const payload = await this.settings.keys.verify(token, new Date(this.settings.now()));
    if (!payload || (payload.jti && this.revokedTokenIds.has(payload.jti))) return { active: false };
    return { ...payload, active: true, token_type: 'Bearer' };
  }
}
