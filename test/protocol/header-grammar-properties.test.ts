/**
 * Property tests of the header parsers that read what a peer sent on the auth path and the 2026-07-28
 * request headers: `WWW-Authenticate` (the OAuth client reads the server's challenges) and the value
 * encoding of `Mcp-Param-*` / `Mcp-Name`. For each: no input throws, nothing is accepted that the grammar
 * (written here independently, as regular expressions of the RFC's ABNF) refuses, and what the grammar
 * builds is read back exactly.
 */
import { validateHeaderValue } from 'node:http';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseChallenges, type Challenge } from '../../lib/auth/client/www-authenticate';
import { bearerChallenge, dpopChallenge } from '../../lib/auth/server/challenge';
import { decodeHeaderValue, encodeHeaderValue } from '../../lib/protocol/header-value';

const RUNS = { numRuns: 500 };

// ---- WWW-Authenticate (RFC 9110 §11.6.1, §5.6) ---------------------------------------------------------

const TCHAR = "!#$%&'*+\\-.^_`|~0-9A-Za-z";
const TOKEN = `[${TCHAR}]+`;
const TOKEN68 = '[A-Za-z0-9\\-._~+/]+=*';
const QUOTED_STRING = '"(?:[\\t \\x21\\x23-\\x5b\\x5d-\\x7e\\x80-\\xff]|\\\\[\\t \\x21-\\x7e\\x80-\\xff])*"';
const AUTH_PARAM = `${TOKEN}[ \\t]*=[ \\t]*(?:${TOKEN}|${QUOTED_STRING})`;
const LIST_SEPARATOR = '[ \\t]*(?:,[ \\t]*)+';
const CHALLENGE = `${TOKEN}(?: +(?:${TOKEN68}|${AUTH_PARAM}(?:${LIST_SEPARATOR}${AUTH_PARAM})*))?`;
const WWW_AUTHENTICATE = new RegExp(
  `^[ \\t]*(?:,[ \\t]*)*${CHALLENGE}(?:${LIST_SEPARATOR}${CHALLENGE})*[ \\t]*(?:,[ \\t]*)*$`,
);

const tokenArb = fc.stringMatching(new RegExp(`^${TOKEN}$`), { maxLength: 12 });
const token68Arb = fc.stringMatching(new RegExp(`^${TOKEN68}$`), { maxLength: 16 });
const quotableChar = fc.oneof(
  fc.constantFrom('\t', ' ', '"', '\\'),
  fc.integer({ min: 0x21, max: 0x7e }).map((code) => String.fromCharCode(code)),
  fc.integer({ min: 0x80, max: 0xff }).map((code) => String.fromCharCode(code)),
);
const ows = fc.constantFrom('', ' ', '\t', '  ');

/** A parameter as the model keeps it, and as the header spells it. */
const paramArb = fc
  .record({
    name: tokenArb,
    value: fc.oneof(
      tokenArb,
      fc.array(quotableChar, { maxLength: 12 }).map((chars) => chars.join('')),
    ),
    quoted: fc.boolean(),
    before: ows,
    after: ows,
  })
  .map(({ name, value, quoted, before, after }) => {
    const mustQuote = quoted || !new RegExp(`^${TOKEN}$`).test(value);
    const spelled = mustQuote ? `"${value.replace(/[\\"]/g, (char) => `\\${char}`)}"` : value;
    return { name, value, text: `${name}${before}=${after}${spelled}` };
  });

const challengeArb = fc.oneof(
  fc.record({ scheme: tokenArb, params: fc.constant([]), text: fc.constant('') }),
  fc.record({ scheme: tokenArb, params: fc.constant([]), text: token68Arb.map((credential) => ` ${credential}`) }),
  fc
    .record({ scheme: tokenArb, params: fc.array(paramArb, { minLength: 1, maxLength: 4 }), separator: ows })
    .map(({ scheme, params, separator }) => ({
      scheme,
      params,
      text: ` ${params.map((param) => param.text).join(`${separator},${separator}`)}`,
    })),
);

function expectedChallenge(challenge: { scheme: string; params: readonly { name: string; value: string }[] }) {
  const params: Record<string, string> = {};
  for (const { name, value } of challenge.params) {
    const key = name.toLowerCase();
    if (!Object.hasOwn(params, key)) params[key] = value;
  }
  return { scheme: challenge.scheme.toLowerCase(), params } satisfies Challenge;
}

const headerArb = fc
  .record({
    challenges: fc.array(challengeArb, { minLength: 1, maxLength: 4 }),
    separator: fc.constantFrom(', ', ',', ' , ', ', , '),
  })
  .map(({ challenges, separator }) => ({
    challenges,
    header: challenges.map((challenge) => `${challenge.scheme}${challenge.text}`).join(separator),
  }));

/** Strings near the grammar: well-formed headers with a character inserted, removed or replaced. */
const mutatedHeaderArb = fc
  .record({
    header: headerArb.map(({ header }) => header),
    position: fc.nat(),
    char: fc.oneof(
      fc.constantFrom('"', '\\', ',', '=', ' ', '\r', '\n', '\0', '\u2028', 'é', '€'),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
    ),
    how: fc.constantFrom('insert', 'remove', 'replace'),
  })
  .map(({ header, position, char, how }) => {
    const at = position % (header.length + 1);
    if (how === 'insert') return header.slice(0, at) + char + header.slice(at);
    if (how === 'remove') return header.slice(0, at) + header.slice(at + 1);
    return header.slice(0, at) + char + header.slice(at + 1);
  });

describe('WWW-Authenticate: parseChallenges', () => {
  it('never throws, whatever the header', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' }), mutatedHeaderArb),
        (text) => {
          expect(Array.isArray(parseChallenges(text))).toBe(true);
        },
      ),
      RUNS,
    );
  });

  it('accepts nothing the grammar refuses', () => {
    fc.assert(
      fc.property(fc.oneof(mutatedHeaderArb, fc.string({ unit: 'binary-ascii' })), (text) => {
        if (parseChallenges(text).length > 0) expect(text).toMatch(WWW_AUTHENTICATE);
      }),
      { numRuns: 2_000 },
    );
  });

  it('reads back every challenge and parameter of a header the grammar builds', () => {
    fc.assert(
      fc.property(headerArb, ({ challenges, header }) => {
        expect(header).toMatch(WWW_AUTHENTICATE);
        expect(parseChallenges(header)).toEqual(challenges.map(expectedChallenge));
      }),
      RUNS,
    );
  });

  it.each([
    ['an unterminated quoted string', 'Bearer scope="a'],
    ['a control character in a quoted string', 'Bearer error_description="a\nb"'],
    ['a character beyond Latin-1', 'Bearer error_description="\u20ac"'],
    ['a parameter without a value', 'Bearer scope="a", realm='],
    ['a comma where the scheme should be followed by a space', 'Bearer,realm="x"'],
    ['garbage after the parameters', 'Bearer realm="x" trailing'],
  ])('refuses the whole header for %s', (_why, header) => {
    expect(parseChallenges(header)).toEqual([]);
  });
});

describe("WWW-Authenticate: the resource server's challenges", () => {
  it('are headers Node sends and the grammar accepts, read back by our client, whatever the parameter values', () => {
    const values = fc.dictionary(tokenArb, fc.string({ unit: 'binary', maxLength: 40 }), { minKeys: 1, maxKeys: 4 });
    fc.assert(
      fc.property(values, fc.constantFrom(bearerChallenge, dpopChallenge), (params, make) => {
        const header = make(params);
        expect(() => validateHeaderValue('www-authenticate', header)).not.toThrow();
        expect(header).toMatch(WWW_AUTHENTICATE);
        const sent = Object.entries(params).map(([name, value]) => ({
          name,
          // eslint-disable-next-line no-control-regex
          value: value.replace(/[\u0000-\u001f\u007f]/g, '').replace(/[\u0080-\uffff]/g, '?'),
        }));
        const scheme = make === bearerChallenge ? 'Bearer' : 'DPoP';
        expect(parseChallenges(header)).toEqual([expectedChallenge({ scheme, params: sent })]);
      }),
      RUNS,
    );
  });
});

// ---- Mcp-Param-* / Mcp-Name values (2026-07-28 Streamable HTTP "Value Encoding") ----------------------

/** Canonical padded Base64: whole quads, and the bits the padding leaves unused are zero. */
const CANONICAL_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/][AQgw]==|[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=)?$/;
const PLAIN_VALUE = /^[\t\x20-\x7e]*$/;

/** The grammar: after optional whitespace is trimmed, a sentinel with a canonical payload, or a plain field value. */
function grammarAccepts(text: string): boolean {
  const value = text.replace(/^[ \t]+|[ \t]+$/g, '');
  if (value.startsWith('=?base64?') && value.endsWith('?=') && value.length >= 11) {
    return CANONICAL_BASE64.test(value.slice(9, -2));
  }
  return PLAIN_VALUE.test(value);
}

const sentinelLike = fc
  .oneof(fc.base64String({ maxLength: 24 }), fc.string({ unit: 'binary-ascii', maxLength: 24 }))
  .map((payload) => `=?base64?${payload}?=`);

describe('Mcp-Param-* values: decodeHeaderValue', () => {
  it('accepts nothing the grammar refuses, and never throws', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ unit: 'binary' }), sentinelLike, fc.string({ unit: 'binary-ascii' })),
        (text) => {
          if (decodeHeaderValue(text) !== undefined) expect(grammarAccepts(text)).toBe(true);
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('accepts what the grammar builds: any encoded value, any plain one', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (value) => {
        const encoded = encodeHeaderValue(value);
        expect(grammarAccepts(encoded)).toBe(true);
        expect(decodeHeaderValue(encoded)).toBe(value);
      }),
      RUNS,
    );
  });
});
