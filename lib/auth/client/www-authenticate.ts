/**
 * `WWW-Authenticate` challenges (RFC 9110 §11.6.1): `Bearer realm="x", scope="a b", error="insufficient_scope"`,
 * several challenges in one header, quoted strings with escapes, token68 values. What an MCP client reads of
 * them: the scheme, `resource_metadata` (RFC 9728 §5.1), `scope`, `error` (RFC 6750 §3).
 */

export interface Challenge {
  /** Lower case: `bearer`, `dpop`, `basic`, … */
  readonly scheme: string;
  /** Parameter names in lower case; a repeated one keeps its first value. */
  readonly params: Readonly<Record<string, string>>;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+/;
const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*/;
const MAX_HEADER_LENGTH = 16 * 1024;

/** Every challenge of a header value; what cannot be read ends the list (never throws). */
export function parseChallenges(header: string | undefined): Challenge[] {
  if (header === undefined || header.length > MAX_HEADER_LENGTH) return [];
  const challenges: Challenge[] = [];
  let rest = header;
  for (;;) {
    rest = rest.replace(/^[\s,]+/, '');
    const scheme = TOKEN.exec(rest);
    if (!scheme) return challenges;
    rest = rest.slice(scheme[0].length);
    const params: Record<string, string> = {};
    challenges.push({ scheme: scheme[0].toLowerCase(), params });
    let read = readParam(rest);
    if (read === undefined) {
      // A token68 credential (`Negotiate abc==`) instead of parameters: skipped, we read none of those.
      const token68 = TOKEN68.exec(rest.replace(/^\s+/, ''));
      if (token68 && /^\s/.test(rest)) rest = rest.replace(/^\s+/, '').slice(token68[0].length);
      continue;
    }
    while (read !== undefined) {
      if (!(read.name in params)) params[read.name] = read.value;
      rest = read.rest;
      // Parameters are separated by commas; a parameter that does not follow starts the next challenge.
      read = /^\s*,/.test(rest) ? readParam(rest.replace(/^[\s,]+/, '')) : undefined;
    }
  }
}

/** `name = value` at the start of `text` (after whitespace), value a token or a quoted string. */
function readParam(text: string): { name: string; value: string; rest: string } | undefined {
  const trimmed = text.replace(/^\s+/, '');
  const name = TOKEN.exec(trimmed);
  if (!name) return undefined;
  let after = trimmed.slice(name[0].length).replace(/^\s*/, '');
  if (!after.startsWith('=')) return undefined;
  after = after.slice(1).replace(/^\s*/, '');
  if (after.startsWith('"')) {
    const quoted = readQuoted(after);
    return quoted && { name: name[0].toLowerCase(), value: quoted.value, rest: after.slice(quoted.length) };
  }
  const token = TOKEN.exec(after);
  return token ? { name: name[0].toLowerCase(), value: token[0], rest: after.slice(token[0].length) } : undefined;
}

function readQuoted(text: string): { value: string; length: number } | undefined {
  let value = '';
  for (let index = 1; index < text.length; index++) {
    const char = text[index]!;
    if (char === '\\') {
      index++;
      if (index >= text.length) return undefined;
      value += text[index];
    } else if (char === '"') {
      return { value, length: index + 1 };
    } else {
      value += char;
    }
  }
  return undefined;
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
