/**
 * The resource server's pure parts: challenge quoting, the metadata paths, the verdict cache's bounds
 * (entries, a finite TTL, the token's own expiry; on an injected clock), principal ids, and credential
 * redaction.
 */
import { describe, expect, it } from 'vitest';
import { bearerChallenge } from '../../lib/auth/server/challenge';
import { canonicalResource, metadataPaths } from '../../lib/auth/server/metadata';
import { InvalidTokenError, principalFromClaims, principalIdOf } from '../../lib/auth/server/principal';
import { checkScopes } from '../../lib/auth/server/scopes';
import { TokenCache, tokenKey } from '../../lib/auth/server/token-cache';
import { redactSecrets } from '../../lib/trace/redact';

describe('bearerChallenge', () => {
  it('escapes quotes and backslashes in quoted-strings', () => {
    expect(bearerChallenge({ error_description: 'a "b" \\c' })).toBe('Bearer error_description="a \\"b\\" \\\\c"');
  });

  it('drops control characters a header cannot carry', () => {
    expect(bearerChallenge({ error_description: 'a\r\nb' })).toBe('Bearer error_description="ab"');
  });

  it('leaves out parameters without a value', () => {
    expect(bearerChallenge({ resource_metadata: 'https://h/m', scope: undefined })).toBe(
      'Bearer resource_metadata="https://h/m"',
    );
  });
});

describe('metadataPaths', () => {
  it('inserts the well-known prefix before the resource path', () => {
    expect(metadataPaths(new URL('https://h.example/api/mcp'))).toEqual([
      '/.well-known/oauth-protected-resource/api/mcp',
    ]);
  });

  it('is the bare well-known path for a resource at the root', () => {
    expect(metadataPaths(new URL('https://h.example/'))).toEqual(['/.well-known/oauth-protected-resource']);
  });

  it('is the configured path when one is given', () => {
    expect(metadataPaths(new URL('https://h.example/mcp'), '/prm.json')).toEqual(['/prm.json']);
  });
});

describe('canonicalResource', () => {
  it('writes a root resource without its trailing slash', () => {
    expect(canonicalResource(new URL('https://h.example/'))).toBe('https://h.example');
  });
});

describe('TokenCache', () => {
  const principal = (expiresAt?: number) =>
    principalFromClaims({ sub: 'a', ...(expiresAt !== undefined && { exp: expiresAt / 1000 }) }, undefined);

  it('forgets an entry once its TTL has passed', () => {
    let now = 0;
    const cache = new TokenCache(10, 1_000, () => now);
    cache.set('k', principal());
    now = 1_000;
    expect(cache.get('k')).toBeUndefined();
  });

  it('keeps an entry no later than the token expires', () => {
    let now = 0;
    const cache = new TokenCache(10, 60_000, () => now);
    cache.set('k', principal(5_000));
    now = 5_000;
    expect(cache.get('k')).toBeUndefined();
  });

  it('drops the oldest entry when full', () => {
    const cache = new TokenCache(2, 60_000, () => 0);
    cache.set('a', principal());
    cache.set('b', principal());
    cache.set('c', principal());
    expect([cache.get('a'), cache.size]).toEqual([undefined, 2]);
  });

  it('refuses a TTL that would keep entries forever', () => {
    expect(() => new TokenCache(10, Infinity, () => 0)).toThrow(/finite/);
  });

  it('keys a token by a hash that does not contain it', async () => {
    expect(await tokenKey('secret-token')).not.toContain('secret');
  });
});

describe('principalFromClaims', () => {
  it('names a client-credentials token by its issuer and client', () => {
    expect(principalFromClaims({ iss: 'https://as', client_id: 'svc' }, undefined).id).toBe('https://as client:svc');
  });

  it('gives distinct ids to callers whose issuer and subject only join the same way', () => {
    const ids = [
      { iss: 'https://as sub:b', sub: 'c' },
      { iss: 'https://as', sub: 'b sub:c' },
      { iss: 'https://as%20sub:b', sub: 'c' },
    ].map((claims) => principalFromClaims(claims, undefined).id);
    expect(new Set(ids).size).toBe(3);
  });

  it('refuses claims that name no one, rather than make one principal of them all', () => {
    expect(() => principalFromClaims({ iss: 'https://as' }, undefined)).toThrow(InvalidTokenError);
    expect(() => principalIdOf('https://as', undefined, undefined)).toThrow(TypeError);
  });
});

describe('checkScopes', () => {
  it('refuses a scope with a space in it', () => {
    expect(() => checkScopes('Tool t', ['mcp:read mcp:write'])).toThrow(/scopes must be/);
  });
});

describe('redactSecrets', () => {
  it('replaces credential members at any depth, whatever their case', () => {
    const message = { params: { arguments: { nested: [{ Authorization: 'Bearer x', refresh_token: 'r' }] } } };
    expect(redactSecrets(message)).toEqual({
      params: { arguments: { nested: [{ Authorization: '[redacted]', refresh_token: '[redacted]' }] } },
    });
  });

  it('returns the message itself when it holds none', () => {
    const message = { params: { name: 'tool', arguments: { city: 'Paris' } } };
    expect(redactSecrets(message)).toBe(message);
  });
});
