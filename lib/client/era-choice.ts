/**
 * The era a user names (the client's `era` option, a hub config's `"era"`, `switchboard call --era`, an era
 * cache file) and its one normalization. `'legacy'`, the handshake era's name before "legacy" came to mean only the HTTP+SSE
 * transport, is still accepted there and read as `'handshake'` at once: nothing past that boundary (verdicts,
 * `connectedEra`, `ctx.era`, the era cache, log lines) says it.
 */

/** Which era a client speaks: `auto` probes (the default), the others force one. */
export type EraChoice = 'auto' | 'handshake' | 'modern';

/**
 * The handshake era's old name, still accepted and read as `'handshake'`.
 * @deprecated Write `'handshake'`.
 */
export type DeprecatedEraName = 'legacy';

/** What a user may write for an era: an `EraChoice`, or the deprecated `'legacy'` (read as `'handshake'`). */
export type EraOption = EraChoice | DeprecatedEraName;

/** The era choices, as messages list them (the deprecated name is accepted, never offered). */
export const ERA_CHOICES: readonly EraChoice[] = ['auto', 'handshake', 'modern'];

/** The era `value` names, `'legacy'` read as `'handshake'`; undefined for anything that names none. */
export function eraChoiceOf(value: unknown): EraChoice | undefined {
  if (value === 'legacy') return 'handshake';
  return ERA_CHOICES.includes(value as EraChoice) ? (value as EraChoice) : undefined;
}
