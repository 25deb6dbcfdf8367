/**
 * An era verdict (what the probe of one server came to) and its persisted form: the document an `EraStore`
 * keeps (lib/client/era-cache.ts). What is read back is checked entry by entry as if the server had just
 * sent it: a modern verdict's discovery result goes through the probe's own check (`discoverInfoOf`), and an
 * entry that fails any check is dropped, never trusted and never thrown about.
 *
 * A handshake-era entry is written `"era": "handshake"`; files written before that name say `"legacy"`, which
 * still loads. The format version stays 1: nothing else changed, and an older build reading a new file drops
 * only the entries it cannot read (its servers are probed again), as it drops any entry it does not know.
 */
import { isPlainObject } from '../jsonrpc/classify';
import { MODERN_PROTOCOL_VERSIONS } from '../protocol/modern';
import { eraChoiceOf } from './era-choice';
import { discoverInfoOf, type DiscoverInfo } from './era-probe';

export type EraVerdict =
  | { readonly era: 'handshake' }
  /** With what discovery said, so a new connection adopts it without a round trip. */
  | { readonly era: 'modern'; readonly version: string; readonly discover: DiscoverInfo };

/** One verdict as a store keeps it: whose (endpoint and principal), when it was reached, and what. */
export interface PersistedEra {
  /** The transport's `eraKey`: an HTTP endpoint, a stdio command line. */
  readonly endpoint: string;
  /** The authorization context it was reached in (`EraCacheOptions.principal`). */
  readonly principal: string;
  /** When the probe reached it, in ms since the epoch. */
  readonly savedAt: number;
  readonly verdict: EraVerdict;
}

export const ERA_STORE_FORMAT = 'mcp-switchboard/era-cache';
export const ERA_STORE_VERSION = 1;

/** The JSON an `EraStore` saves: every persisted verdict, whoever's. */
export interface EraStoreDocument {
  readonly format: typeof ERA_STORE_FORMAT;
  readonly version: typeof ERA_STORE_VERSION;
  readonly entries: readonly StoredEra[];
}

/** A `PersistedEra` in JSON: a modern verdict's discovery info in the `DiscoverResult` shape it came in. */
export type StoredEra =
  | { readonly endpoint: string; readonly principal: string; readonly savedAt: number; readonly era: 'handshake' }
  | {
      readonly endpoint: string;
      readonly principal: string;
      readonly savedAt: number;
      readonly era: 'modern';
      readonly version: string;
      readonly discover: Readonly<Record<string, unknown>>;
    };

export function eraStoreDocument(entries: readonly PersistedEra[]): EraStoreDocument {
  return { format: ERA_STORE_FORMAT, version: ERA_STORE_VERSION, entries: entries.map(storedEra) };
}

function storedEra({ endpoint, principal, savedAt, verdict }: PersistedEra): StoredEra {
  if (verdict.era === 'handshake') return { endpoint, principal, savedAt, era: 'handshake' };
  const { supportedVersions, capabilities, serverInfo, instructions } = verdict.discover;
  const discover = {
    supportedVersions,
    capabilities,
    ...(instructions !== undefined && { instructions }),
    _meta: { 'io.modelcontextprotocol/serverInfo': serverInfo },
  };
  return { endpoint, principal, savedAt, era: 'modern', version: verdict.version, discover };
}

/** The valid entries of what a store loaded; anything else (a corrupt, foreign or hand-edited part) is dropped. */
export function persistedEras(document: unknown): PersistedEra[] {
  if (!isPlainObject(document) || document.format !== ERA_STORE_FORMAT || document.version !== ERA_STORE_VERSION)
    return [];
  const { entries } = document;
  if (!Array.isArray(entries)) return [];
  const valid: PersistedEra[] = [];
  for (const entry of entries) {
    const era = persistedEra(entry);
    if (era) valid.push(era);
  }
  return valid;
}

function persistedEra(entry: unknown): PersistedEra | undefined {
  if (!isPlainObject(entry)) return undefined;
  const { endpoint, principal, savedAt } = entry;
  if (typeof endpoint !== 'string' || typeof principal !== 'string') return undefined;
  if (typeof savedAt !== 'number' || !Number.isFinite(savedAt)) return undefined;
  const verdict = verdictOf(entry);
  return verdict && { endpoint, principal, savedAt, verdict };
}

function verdictOf(entry: Readonly<Record<string, unknown>>): EraVerdict | undefined {
  // Files written before the rename say 'legacy': read as 'handshake'.
  const era = eraChoiceOf(entry.era);
  if (era === 'handshake') return { era };
  if (era !== 'modern') return undefined;
  const { version } = entry;
  // A revision this build speaks, and one the server said it serves.
  if (typeof version !== 'string' || !(MODERN_PROTOCOL_VERSIONS as readonly string[]).includes(version))
    return undefined;
  const discover = discoverInfoOf(entry.discover);
  if (!discover || !discover.supportedVersions.includes(version)) return undefined;
  return { era: 'modern', version, discover };
}
