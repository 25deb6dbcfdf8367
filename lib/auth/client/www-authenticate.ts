/**
 * `WWW-Authenticate` challenges (RFC 9110 §11.6.1): `Bearer realm="x", scope="a b", error="insufficient_scope"`,
 * several challenges in one header, quoted strings with escapes, token68 values. What an MCP client reads of
 * them: the scheme, `resource_metadata` (RFC 9728 §5.1), `scope`, `error` (RFC 6750 §3).
 *
 * The header comes from the server being authorized against, so it is read strictly: a header that does not
 * follow the grammar is refused whole (no challenge at all; the client then looks for the metadata at its
 * well-known locations), rather than guessed at.
 */

export interface Challenge {
  /** Lower case: `bearer`, `dpop`, `basic`, … */
  readonly scheme: string;
  /** Parameter names in lower case; a repeated one keeps its first value. */
  readonly params: Readonly<Record<string, string>>;
}

const TOKEN = /[!#$%&'*+\-.^_`|~0-9A-Za-z]+/y;
const TOKEN68 = /[A-Za-z0-9\-._~+/]+=*/y;
/** Optional whitespace (RFC 9110 §5.6.3). */
const OWS = /[ \t]*/y;
/** What may follow a token68 credential: the end of the challenge (the header's, or a comma). */
const AFTER_TOKEN68 = /[ \t]*(?:,|$)/y;
const MAX_HEADER_LENGTH = 16 * 1024;

/** Every challenge of a header value; none when the header does not follow the grammar. Never throws. */
export function parseChallenges(header: string | undefined): Challenge[] {
  if (header === undefined || header.length > MAX_HEADER_LENGTH) return [];
  return new ChallengeReader(header).read() ?? [];
}

/** A reader over one header value: each method reads at `at` and moves past what it read, or reads nothing. */
class ChallengeReader {
  private at = 0;

  constructor(private readonly text: string) {}

  /** `1#challenge`: challenges separated by commas, empty list elements allowed; undefined if malformed. */
  read(): Challenge[] | undefined {
    const challenges: Challenge[] = [];
    this.skipListSeparators();
    while (this.at < this.text.length) {
      const challenge = this.challenge();
      if (challenge === undefined) return undefined;
      challenges.push(challenge);
      this.skip(OWS);
      if (this.at === this.text.length) break;
      if (this.text[this.at] !== ',') return undefined;
      this.skipListSeparators();
    }
    return challenges.length > 0 ? challenges : undefined;
  }

  /** `auth-scheme [ 1*SP ( token68 / #auth-param ) ]`. */
  private challenge(): Challenge | undefined {
    const scheme = this.match(TOKEN);
    if (scheme === undefined) return undefined;
    const params: Record<string, string> = {};
    const challenge = { scheme: scheme.toLowerCase(), params };
    const afterScheme = this.at;
    while (this.text[this.at] === ' ') this.at++;
    if (this.at === afterScheme) return challenge;
    if (this.param(params)) {
      // More parameters follow a comma, unless what follows is the next challenge (a token without `=`).
      for (;;) {
        const beforeComma = this.at;
        this.skip(OWS);
        if (this.text[this.at] !== ',') return ((this.at = beforeComma), challenge);
        this.skipListSeparators();
        if (!this.param(params)) return ((this.at = beforeComma), challenge);
      }
    }
    // A token68 credential (`Negotiate abc==`): read and dropped, no client here uses one.
    if (this.match(TOKEN68) !== undefined && this.lookingAt(AFTER_TOKEN68)) return challenge;
    // Spaces after the scheme and nothing else: the scheme alone, the list goes on.
    this.at = afterScheme;
    this.skip(OWS);
    return this.at === this.text.length || this.text[this.at] === ',' ? challenge : undefined;
  }

  /** `token BWS "=" BWS ( token / quoted-string )` into `params`; false, having read nothing, when not there. */
  private param(params: Record<string, string>): boolean {
    const start = this.at;
    const name = this.match(TOKEN);
    if (name !== undefined) {
      this.skip(OWS);
      if (this.text[this.at] === '=') {
        this.at++;
        this.skip(OWS);
        const value = this.text[this.at] === '"' ? this.quotedString() : this.match(TOKEN);
        if (value !== undefined) {
          const key = name.toLowerCase();
          if (!Object.hasOwn(params, key)) params[key] = value;
          return true;
        }
      }
    }
    this.at = start;
    return false;
  }

  /** `DQUOTE *( qdtext / quoted-pair ) DQUOTE`: no control character but tab, nothing beyond Latin-1. */
  private quotedString(): string | undefined {
    let value = '';
    for (let index = this.at + 1; index < this.text.length; index++) {
      let code = this.text.charCodeAt(index);
      if (code === 0x5c) {
        code = this.text.charCodeAt(++index);
        if (!isQuotable(code)) return undefined;
      } else if (code === 0x22) {
        this.at = index + 1;
        return value;
      } else if (!isQuotable(code)) {
        return undefined;
      }
      value += String.fromCharCode(code);
    }
    return undefined;
  }

  /** `*( OWS "," )` then OWS: the separators of a list, where empty elements are allowed. */
  private skipListSeparators(): void {
    for (;;) {
      this.skip(OWS);
      if (this.text[this.at] !== ',') return;
      this.at++;
    }
  }

  private match(pattern: RegExp): string | undefined {
    pattern.lastIndex = this.at;
    const found = pattern.exec(this.text);
    if (found === null) return undefined;
    this.at += found[0].length;
    return found[0];
  }

  private skip(pattern: RegExp): void {
    this.match(pattern);
  }

  private lookingAt(pattern: RegExp): boolean {
    pattern.lastIndex = this.at;
    return pattern.test(this.text);
  }
}

/** Tab, space, visible ASCII and obs-text (0x80-0xFF): what a quoted string may hold (escaped or not, but `"` and `\`). */
function isQuotable(code: number): boolean {
  return code === 0x09 || (code >= 0x20 && code !== 0x7f && code <= 0xff);
}

/** The first Bearer (or DPoP) challenge: what an MCP server sends on 401 and 403. */
export function bearerChallenge(header: string | undefined): Challenge | undefined {
  return parseChallenges(header).find((challenge) => challenge.scheme === 'bearer' || challenge.scheme === 'dpop');
}

/** The scopes a challenge names (`scope="a b"`), or undefined when it names none. */
export function challengedScopes(challenge: Challenge | undefined): string[] | undefined {
  const scope = challenge?.params.scope;
  if (scope === undefined) return undefined;
  const scopes = scope.split(/\s+/).filter((item) => item !== '');
  return scopes.length > 0 ? scopes : undefined;
}
