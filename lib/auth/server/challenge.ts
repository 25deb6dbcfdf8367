/**
 * `WWW-Authenticate` challenges: `Bearer …` (RFC 6750 §3, with RFC 9728 §5.1's `resource_metadata`) and
 * `DPoP …` (RFC 9449 §7.1, with `algs`). Values are quoted-strings: `"` and `\` escaped, control characters
 * (a header cannot carry them) dropped. Several challenges go in one header value, separated by commas.
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
  // eslint-disable-next-line no-control-regex
  return `"${value.replace(/[\u0000-\u001f\u007f]/g, '').replace(/[\\"]/g, '\\$&')}"`;
}
