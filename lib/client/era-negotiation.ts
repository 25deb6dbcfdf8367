/**
 * How `Client.connect` picks the era of a connection: from the `era` option, the `protocolVersion` option,
 * the verdict cache, or a probe (lib/client/era-probe.ts), with at most one corrective probe. Given the
 * connection's tracer, each probe's exchange and each verdict (`probing → modern | handshake | corrective |
 * failed`, or a cached one) are events of the connection's trace.
 */
import type { Clock } from '../core/clock';
import type { ConnectionTrace } from '../core/connection-trace';
import type { Logger } from '../core/logger';
import type { Transport } from '../core/transport';
import type { JsonObject } from '../jsonrpc/types';
import { namesModernRevision } from '../protocol/modern';
import type { EraCache, EraVerdict } from './era-cache';
import type { EraChoice } from './era-choice';
import { requestEnvelope } from './modern-request-stamp';
import { channelOf, classifyProbe, discoverRequest, notModernError, probeOnce, traceProbeVerdict } from './era-probe';

/** The default time a stdio server has to answer the probe before it counts as handshake-era. */
export const DEFAULT_ERA_PROBE_TIMEOUT_MS = 3_000;

export interface EraNegotiation {
  readonly choice: EraChoice;
  readonly cache: EraCache | undefined;
  /** The modern revisions we speak, newest first (the first is probed first). */
  readonly ours: readonly string[];
  /** What the probe's envelope says of us. */
  readonly capabilities: JsonObject;
  readonly clientInfo: JsonObject;
  /** How long a stdio server has to answer. */
  readonly stdioTimeoutMs: number;
  /** How long an HTTP (or other) server has to answer. */
  readonly timeoutMs: number;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The connection's tracer: the probe is traced as the connection's when someone listens. */
  readonly trace?: ConnectionTrace;
}

/**
 * The era a client connects in, before anything attaches the transport: `handshake` means "do what the
 * handshake era always did". Only `auto` consults and fills the cache; `modern` probes (the discovery
 * result is what the connection knows of the server) and throws when the server is not modern.
 * Transports with no `eraKey` are not probed under `auto`: they are taken as handshake-era.
 */
export async function negotiateEra(transport: Transport, how: EraNegotiation): Promise<EraVerdict> {
  if (how.choice === 'handshake') return HANDSHAKE;
  const key = transport.eraKey;
  if (key === undefined && how.choice === 'auto') return HANDSHAKE;
  if (key !== undefined) {
    const cached = adoptedVerdict(how.choice, await how.cache?.recall(key));
    if (cached) {
      traceProbeVerdict(how.trace, 'idle', cached.era, 'cached');
      return cached;
    }
  }
  const verdict = await probe(transport, how);
  const settled: EraVerdict = verdict.era === 'handshake' ? HANDSHAKE : verdict;
  if (key !== undefined) how.cache?.set(key, settled);
  return settled;
}

/**
 * The cached verdict a connection adopts without probing: any under `auto`, only a modern one under
 * `modern` (a forced era is never overruled by the cache), none under `handshake` (it never probes).
 */
export function adoptedVerdict(choice: EraChoice, cached: EraVerdict | undefined): EraVerdict | undefined {
  if (choice === 'auto') return cached;
  return choice === 'modern' && cached?.era === 'modern' ? cached : undefined;
}

const HANDSHAKE: EraVerdict = Object.freeze({ era: 'handshake' });

type ProbeResult = Exclude<EraVerdict, { era: 'handshake' }> | { readonly era: 'handshake'; readonly reason: string };

/** Probes (once more after a -32022 naming another revision of ours); throws when the probe fails. */
async function probe(transport: Transport, how: EraNegotiation): Promise<ProbeResult> {
  const channel = channelOf(transport.eraKey);
  const timeoutMs = channel === 'stdio' ? how.stdioTimeoutMs : how.timeoutMs;
  let version = how.ours[0]!;
  for (let corrected = false; ; corrected = true) {
    const from = corrected ? 'corrective' : 'probing';
    const outcome = await probeOnce(
      transport,
      discoverRequest(requestEnvelope(version, how.capabilities, how.clientInfo)),
      timeoutMs,
      how.clock,
      how.trace,
    );
    const verdict = classifyProbe(outcome, how.ours, channel);
    switch (verdict.kind) {
      case 'modern':
        traceProbeVerdict(how.trace, from, 'modern', `the server speaks revision ${verdict.version}`);
        return { era: 'modern', version: verdict.version, discover: verdict.discover };
      case 'corrective': {
        if (corrected) return fallBack(how, from, `the server refused revision ${verdict.version} twice`);
        const why = `server/discover at ${version} was refused with -32022: probing again at ${verdict.version}`;
        how.logger.debug(why);
        traceProbeVerdict(how.trace, from, 'corrective', why);
        version = verdict.version;
        continue;
      }
      case 'handshake':
        how.logger.debug(`The era probe says handshake: ${verdict.reason}`);
        return fallBack(how, from, verdict.reason);
      case 'error':
        traceProbeVerdict(how.trace, from, 'failed', verdict.error.message);
        throw verdict.error;
    }
  }
}

/** The handshake-era verdict: the fallback, or (`era: 'modern'` was asked for) the connection's failure. */
function fallBack(how: EraNegotiation, from: string, reason: string): ProbeResult {
  if (how.choice === 'modern') {
    const error = notModernError(reason);
    traceProbeVerdict(how.trace, from, 'failed', error.message);
    throw error;
  }
  traceProbeVerdict(how.trace, from, 'handshake', reason);
  return { era: 'handshake', reason };
}

/** The era the options force, if they do: a `protocolVersion` names one (a stateless revision or a handshake one). */
export function forcedEra(era: EraChoice | undefined, protocolVersion: string | undefined): EraChoice {
  if (era !== undefined && era !== 'auto') return era;
  if (protocolVersion === undefined) return era ?? 'auto';
  return namesModernRevision(protocolVersion) ? 'modern' : 'handshake';
}
