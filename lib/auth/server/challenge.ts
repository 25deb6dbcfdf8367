/**
 * `WWW-Authenticate: Bearer …` challenges (RFC 6750 §3, with RFC 9728 §5.1's `resource_metadata`). Values
 * are quoted-strings: `"` and `\` escaped, control characters (a header cannot carry them) dropped.
 */

/** The parameters of a challenge, in the order given; undefined ones are left out. */
export type ChallengeParams = Readonly<Record<string, string | undefined>>;

export function bearerChallenge(params: ChallengeParams): string {
  const parts: string[] = [];
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined) parts.push(`${name}=${quotedString(value)}`);
  }
  return parts.length === 0 ? 'Bearer' : `Bearer ${parts.join(', ')}`;
}

export function quotedString(value: string): string {
  // eslint-disable-next-line no-control-regex
  return `"${value.replace(/[\u0000-\u001f\u007f]/g, '').replace(/[\\"]/g, '\\$&')}"`;
}
