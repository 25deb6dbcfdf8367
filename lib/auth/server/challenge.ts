/**
 * `WWW-Authenticate` challenges: `Bearer …` (RFC 6750 §3, with RFC 9728 §5.1's `resource_metadata`) and
 * `DPoP …` (RFC 9449 §7.1, with `algs`). Values are quoted-strings: `"` and `\` escaped, control characters
 * (a header cannot carry them) dropped, anything beyond ASCII written `?` (RFC 6750 allows ASCII only, and
 * Node refuses to send a header holding characters beyond Latin-1: a message from a user's verifier must
 * never make the answer fail). Several challenges go in one header value, separated by commas.
 */

/** The parameters of a challenge, in the order given; undefined ones are left out. */
export type ChallengeParams = Readonly<Record<string, string | undefined>>;

/** A challenge of `scheme` (`Bearer`, `DPoP`) with these parameters. */
export function challenge(scheme: string, params: ChallengeParams): string {
  const parts: string[] = [];
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined) parts.push(`${name}=${quotedString(value)}`);
  }
  return parts.length === 0 ? scheme : `${scheme} ${parts.join(', ')}`;
}

export function bearerChallenge(params: ChallengeParams): string {
  return challenge('Bearer', params);
}

export function dpopChallenge(params: ChallengeParams): string {
  return challenge('DPoP', params);
}

export function quotedString(value: string): string {
  const ascii = value
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .replace(/[\u0080-\uffff]/g, '?');
  return `"${ascii.replace(/[\\"]/g, '\\$&')}"`;
}
