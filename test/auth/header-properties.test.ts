/**
 * Property tests of the resource server's credential headers (lib/auth/server/authorization-header.ts):
 * `Authorization` (RFC 7235 §2.1 credentials with a token68, RFC 6750 §2.1, RFC 9449 §7.1) and the `DPoP`
 * proof header (a compact JWS, RFC 7515 §7.1). For each: no input throws, whatever is accepted matches the
 * grammar (written here again, independently, from the RFCs' ABNF), and values built from the grammar are
 * accepted with the right parts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isCompactJws, MAX_DPOP_PROOF_LENGTH, parseAuthorization } from '../../lib/auth/server/authorization-header';

const RUNS = { numRuns: 500 };

// RFC 7235 §2.1: token68 = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
const TOKEN68_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/';
const TOKEN68 = `[${TOKEN68_CHARS.replace(/[-/\\^\]]/g, '\\$&')}]+=*`;
// credentials = auth-scheme 1*SP token68 (trailing spaces tolerated); the schemes taken are Bearer and DPoP.
const CREDENTIALS_GRAMMAR = new RegExp(`^(Bearer|DPoP) +(${TOKEN68}) *$`, 'i');
// RFC 7515 §7.1: BASE64URL(header) "." BASE64URL(payload) "." BASE64URL(signature), none of them empty here.
const BASE64URL_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const SEGMENT = `[${BASE64URL_CHARS.replace('-', '\\-')}]+`;
const JWS_GRAMMAR = new RegExp(`^${SEGMENT}\\.${SEGMENT}\\.${SEGMENT}$`);

/** Strings of every kind: ASCII, binary, full unicode, and long ones; mixed with grammar pieces. */
const anyString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.string({ unit: 'grapheme', maxLength: 100 }),
  fc.string({ maxLength: 20_000 }),
  fc
    .tuple(fc.constantFrom('Bearer ', 'DPoP ', 'bearer  ', 'dpop', 'Basic ', ''), fc.string({ maxLength: 200 }))
    .map(([scheme, rest]) => scheme + rest),
);

const charsOf = (alphabet: string, minLength: number, maxLength: number) =>
  fc.string({ unit: fc.constantFrom(...alphabet), minLength, maxLength });

const token68 = fc
  .tuple(charsOf(TOKEN68_CHARS, 1, 400), fc.integer({ min: 0, max: 3 }))
  .map(([body, padding]) => body + '='.repeat(padding));

/** A scheme name in some mix of cases. */
const schemeIn = (name: string) =>
  fc
    .array(fc.boolean(), { minLength: name.length, maxLength: name.length })
    .map((upper) => [...name].map((char, index) => (upper[index] ? char.toUpperCase() : char.toLowerCase())).join(''));

const spaces = (min: number) => fc.integer({ min, max: 4 }).map((count) => ' '.repeat(count));

describe('parseAuthorization', () => {
  it('never throws, whatever the input', () => {
    fc.assert(
      fc.property(anyString, (value) => {
        parseAuthorization(value);
      }),
      RUNS,
    );
  });

  it('reads a megabyte value in one pass, accepted or not', () => {
    const huge = 'a'.repeat(1 << 20);
    expect([
      parseAuthorization(`Bearer ${huge}`)?.token.length,
      parseAuthorization(`Bearer ${huge} x`),
      parseAuthorization(`DPoP ${' '.repeat(1 << 20)}`),
      parseAuthorization(`Bearer ${huge}${'='.repeat(1 << 20)}!`),
    ]).toEqual([1 << 20, undefined, undefined, undefined]);
  });

  it('accepts only what the grammar accepts, with its scheme and token', () => {
    fc.assert(
      fc.property(anyString, (value) => {
        const parsed = parseAuthorization(value);
        const grammar = CREDENTIALS_GRAMMAR.exec(value);
        if (grammar === null) return parsed === undefined;
        return parsed?.scheme === grammar[1]!.toLowerCase() && parsed.token === grammar[2];
      }),
      RUNS,
    );
  });

  it('accepts every well-formed value, any case of the scheme, with its token', () => {
    const wellFormed = fc.record({
      scheme: fc.oneof(schemeIn('bearer'), schemeIn('dpop')),
      gap: spaces(1),
      token: token68,
      trailing: spaces(0),
    });
    fc.assert(
      fc.property(wellFormed, ({ scheme, gap, token, trailing }) => {
        const parsed = parseAuthorization(`${scheme}${gap}${token}${trailing}`);
        expect(parsed).toEqual({ scheme: scheme.toLowerCase(), token });
      }),
      RUNS,
    );
  });

  it('refuses a token with a character outside token68, or padding inside it', () => {
    const broken = fc
      .tuple(token68, fc.constantFrom(' x', ',', '"', '=a', '\t', 'é', '\u0000', ';'), token68)
      .map(([before, bad, after]) => `Bearer ${before.replace(/=+$/, '')}${bad}${after}`);
    fc.assert(
      fc.property(broken, (value) => parseAuthorization(value) === undefined),
      RUNS,
    );
  });

  it('refuses other schemes', () => {
    fc.assert(
      fc.property(fc.constantFrom('Basic', 'Digest', 'Bearer2', 'DPoP-', 'Token'), token68, (scheme, token) => {
        return parseAuthorization(`${scheme} ${token}`) === undefined;
      }),
      RUNS,
    );
  });
});

describe('isCompactJws', () => {
  const segment = charsOf(BASE64URL_CHARS, 1, 300);

  it('never throws, whatever the input', () => {
    fc.assert(
      fc.property(anyString, (value) => {
        isCompactJws(value);
      }),
      RUNS,
    );
  });

  it('accepts only what the grammar accepts, up to the length limit', () => {
    const jwsLike = fc.oneof(
      anyString,
      fc
        .array(fc.oneof(segment, fc.constantFrom('', '.', '=', '+', ' ')), { maxLength: 6 })
        .map((parts) => parts.join('.')),
    );
    fc.assert(
      fc.property(jwsLike, (value) => {
        return isCompactJws(value) === (JWS_GRAMMAR.test(value) && value.length <= MAX_DPOP_PROOF_LENGTH);
      }),
      RUNS,
    );
  });

  it('accepts every three base64url segments within the limit', () => {
    fc.assert(
      fc.property(segment, segment, segment, (header, payload, signature) => {
        return isCompactJws(`${header}.${payload}.${signature}`);
      }),
      RUNS,
    );
  });

  it('refuses an unsigned JWS (empty signature) and one longer than the limit', () => {
    expect([isCompactJws('eyJh.eyJi.'), isCompactJws(`a.${'b'.repeat(MAX_DPOP_PROOF_LENGTH)}.c`)]).toEqual([
      false,
      false,
    ]);
  });
});
