/**
 * The pure parts of the OAuth client: reading `WWW-Authenticate` challenges, where metadata is looked for,
 * which resource metadata may speak for a server, and which scopes are asked for.
 */
import { describe, expect, it } from 'vitest';
import {
  authorizationServerMetadataCandidates,
  resourceCovers,
  resourceMetadataCandidates,
} from '../../lib/auth/client/discovery';
import { isLoopback } from '../../lib/auth/client/http';
import { canonicalServerUrl } from '../../lib/auth/client/oauth-client';
import { chooseScopes } from '../../lib/auth/client/scopes';
import { bearerChallenge, challengedScopes, parseChallenges } from '../../lib/auth/client/www-authenticate';

describe('WWW-Authenticate challenges', () => {
  it('reads a Bearer challenge’s quoted parameters', () => {
    expect(parseChallenges('Bearer resource_metadata="https://x/.well-known/r", scope="a b"')).toEqual([
      { scheme: 'bearer', params: { resource_metadata: 'https://x/.well-known/r', scope: 'a b' } },
    ]);
  });

  it('unescapes quoted-pairs', () => {
    expect(parseChallenges('Bearer error_description="say \\"no\\""')[0]?.params.error_description).toBe('say "no"');
  });

  it('reads token values and lower-cases scheme and parameter names', () => {
    expect(parseChallenges('BEARER Error=invalid_token')).toEqual([
      { scheme: 'bearer', params: { error: 'invalid_token' } },
    ]);
  });

  it('reads several challenges in one header', () => {
    const schemes = parseChallenges('Basic realm="x", Bearer scope="s", DPoP algs="ES256"').map((c) => c.scheme);
    expect(schemes).toEqual(['basic', 'bearer', 'dpop']);
  });

  it('skips a token68 credential and reads the challenge after it', () => {
    expect(parseChallenges('Negotiate abc==, Bearer realm=r')[1]).toEqual({ scheme: 'bearer', params: { realm: 'r' } });
  });

  it('keeps the first value of a repeated parameter', () => {
    expect(parseChallenges('Bearer scope="a", scope="b"')[0]?.params.scope).toBe('a');
  });

  it('refuses a header with an unterminated quoted string whole, without throwing', () => {
    expect(parseChallenges('Bearer realm="r", scope="a')).toEqual([]);
  });

  it('reads nothing from a header over 16 KiB', () => {
    expect(parseChallenges(`Bearer scope="${'a'.repeat(17_000)}"`)).toEqual([]);
  });

  it('finds the Bearer or DPoP challenge among others', () => {
    expect(bearerChallenge('Basic realm="x", DPoP error="use_dpop_nonce"')?.params.error).toBe('use_dpop_nonce');
  });

  it('splits the challenged scopes, undefined when empty', () => {
    expect(challengedScopes(bearerChallenge('Bearer scope="  a   b "'))).toEqual(['a', 'b']);
    expect(challengedScopes(bearerChallenge('Bearer scope=""'))).toBeUndefined();
  });
});

describe('where metadata is looked for', () => {
  it('resource metadata: the challenge’s URL, then path-based, then root', () => {
    const challenge = bearerChallenge('Bearer resource_metadata="https://m.example/custom.json"');
    expect(resourceMetadataCandidates(new URL('https://m.example/a/mcp'), challenge).map(String)).toEqual([
      'https://m.example/custom.json',
      'https://m.example/.well-known/oauth-protected-resource/a/mcp',
      'https://m.example/.well-known/oauth-protected-resource',
    ]);
  });

  it('resource metadata of a server at the root: the root location only', () => {
    expect(resourceMetadataCandidates(new URL('https://m.example/'), undefined).map(String)).toEqual([
      'https://m.example/.well-known/oauth-protected-resource',
    ]);
  });

  it('an issuer with a path: RFC 8414 path-inserted, then OpenID inserted, then OpenID appended', () => {
    expect(authorizationServerMetadataCandidates(new URL('https://as.example/tenant1')).map(String)).toEqual([
      'https://as.example/.well-known/oauth-authorization-server/tenant1',
      'https://as.example/.well-known/openid-configuration/tenant1',
      'https://as.example/tenant1/.well-known/openid-configuration',
    ]);
  });

  it('an issuer without a path: RFC 8414, then OpenID', () => {
    expect(authorizationServerMetadataCandidates(new URL('https://as.example')).map(String)).toEqual([
      'https://as.example/.well-known/oauth-authorization-server',
      'https://as.example/.well-known/openid-configuration',
    ]);
  });
});

describe('which resource metadata speaks for a server', () => {
  const server = new URL('https://m.example/api/mcp');

  it('its own URL', () => expect(resourceCovers('https://m.example/api/mcp', server)).toBe(true));
  it('a parent path', () => expect(resourceCovers('https://m.example/api', server)).toBe(true));
  it('the origin', () => expect(resourceCovers('https://m.example', server)).toBe(true));
  it('not a path that only shares a prefix', () => expect(resourceCovers('https://m.example/ap', server)).toBe(false));
  it('not another origin', () => expect(resourceCovers('https://evil.example/api/mcp', server)).toBe(false));
  it('not another port', () => expect(resourceCovers('https://m.example:8443/api/mcp', server)).toBe(false));
  it('not a child path', () => expect(resourceCovers('https://m.example/api/mcp/x', server)).toBe(false));
  it('not a URL with a fragment', () => expect(resourceCovers('https://m.example/api/mcp#x', server)).toBe(false));
  it('not something that is no URL', () => expect(resourceCovers('mcp', server)).toBe(false));
});

describe('the scopes asked for', () => {
  it('the configured ones first', () => {
    expect(chooseScopes({ configured: 'x y', challenged: ['a'], resourceScopes: ['r'], offlineAccess: false })).toEqual(
      ['x', 'y'],
    );
  });

  it('else the challenge’s', () => {
    expect(chooseScopes({ challenged: ['a'], resourceScopes: ['r'], offlineAccess: false })).toEqual(['a']);
  });

  it('else everything the resource metadata lists', () => {
    expect(chooseScopes({ resourceScopes: ['r', 's'], offlineAccess: false })).toEqual(['r', 's']);
  });

  it('else none (the parameter is omitted)', () => {
    expect(chooseScopes({ offlineAccess: true })).toEqual([]);
  });

  it('a step-up: what was asked before and what the challenge names, configured or not', () => {
    expect(
      chooseScopes({ configured: 'read', challenged: ['read', 'write'], previous: ['read'], offlineAccess: false }),
    ).toEqual(['read', 'write']);
  });

  it('offline_access when wanted and the authorization server lists it', () => {
    expect(
      chooseScopes({ challenged: ['a'], authorizationServerScopes: ['a', 'offline_access'], offlineAccess: true }),
    ).toEqual(['a', 'offline_access']);
  });

  it('never offline_access when the authorization server does not list it, even if the resource does', () => {
    expect(
      chooseScopes({ resourceScopes: ['a', 'offline_access'], authorizationServerScopes: ['a'], offlineAccess: true }),
    ).toEqual(['a']);
  });
});

describe('addresses', () => {
  it.each([
    'http://localhost:1/x',
    'http://127.0.0.1/x',
    'http://127.9.9.9/',
    'http://[::1]:80/',
    'http://a.localhost/',
  ])('%s is loopback', (url) => expect(isLoopback(url)).toBe(true));

  it.each(['http://example.com/', 'http://127.0.0.1.nip.io/', 'http://10.0.0.1/', 'not a url'])('%s is not', (url) =>
    expect(isLoopback(url)).toBe(false),
  );

  it('a server URL as a resource: no fragment, no slash after a bare origin, the path kept', () => {
    expect(canonicalServerUrl(new URL('https://m.example/'))).toBe('https://m.example');
    expect(canonicalServerUrl(new URL('https://M.example/mcp'))).toBe('https://m.example/mcp');
  });
});
