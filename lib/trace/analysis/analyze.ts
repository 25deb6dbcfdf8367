/**
 * `trace check`'s analysis: one pass over a trace's events, counting what flowed, pairing requests with
 * their answers (exchanges.ts), and gathering findings, errors by code and latency percentiles per method
 * and per upstream.
 */
import type { TraceEvent, TraceKind } from '../types';
import { ExchangePairer, type Exchange } from './exchanges';
import { isAllowed, NOTHING_ALLOWED, type AllowList, type Finding, type FindingRule } from './findings';
import { LatencyTable, type LatencyRow } from './latency';

export interface AnalysisOptions {
  readonly allow?: AllowList;
  /** Answers slower than this are `slow` findings. */
  readonly maxLatencyMs?: number;
  /** Findings kept to list (all are counted): 1,000 by default. */
  readonly maxListed?: number;
  /** Each request with what ended it, as it ends (for exports). */
  readonly onExchange?: (exchange: Exchange) => void;
}

export interface TraceReport {
  readonly events: number;
  readonly byKind: Readonly<Partial<Record<TraceKind, number>>>;
  readonly connections: number;
  /** First and last event times (undefined for an empty trace). */
  readonly from?: number;
  readonly to?: number;
  /** Requests by how they ended. */
  readonly outcomes: Readonly<Record<string, number>>;
  /** Error responses by JSON-RPC code (`none` for one without a numeric code). */
  readonly errorsByCode: Readonly<Record<string, number>>;
  /** Findings by rule, allowed ones included. */
  readonly findingsByRule: Readonly<Partial<Record<FindingRule, number>>>;
  /** Findings not allowed: the ones that fail the check. */
  readonly failures: number;
  /** The first `maxListed` findings, in trace order, each marked when allowed. */
  readonly findings: readonly (Finding & { readonly allowed: boolean })[];
  readonly latencyByMethod: readonly LatencyRow[];
  readonly latencyByUpstream: readonly LatencyRow[];
}

const DEFAULT_MAX_LISTED = 1000;

export class TraceAnalyzer {
  private events = 0;
  private from: number | undefined;
  private to: number | undefined;
  private readonly byKind: Partial<Record<TraceKind, number>> = {};
  private readonly connections = new Set<string>();
  private readonly outcomes: Record<string, number> = {};
  private readonly errorsByCode: Record<string, number> = {};
  private readonly findingsByRule: Partial<Record<FindingRule, number>> = {};
  private readonly findings: (Finding & { allowed: boolean })[] = [];
  private failures = 0;
  private readonly byMethod = new LatencyTable();
  private readonly byUpstream = new LatencyTable();
  private readonly pairer: ExchangePairer;
  private readonly allow: AllowList;

  constructor(private readonly options: AnalysisOptions = {}) {
    this.allow = options.allow ?? NOTHING_ALLOWED;
    this.pairer = new ExchangePairer({
      exchange: (exchange) => this.exchange(exchange),
      finding: (finding) => this.finding(finding),
    });
  }

  add(event: TraceEvent): void {
    this.events++;
    if (this.from === undefined || event.time < this.from) this.from = event.time;
    if (this.to === undefined || event.time > this.to) this.to = event.time;
    this.byKind[event.kind] = (this.byKind[event.kind] ?? 0) + 1;
    this.connections.add(event.connection);
    if (event.kind === 'error') {
      const code = (event.message as { error?: { code?: unknown } } | undefined)?.error?.code;
      const label = typeof code === 'number' ? String(code) : 'none';
      this.errorsByCode[label] = (this.errorsByCode[label] ?? 0) + 1;
    }
    this.pairer.add(event);
  }

  /** Ends the trace (requests still in flight are unanswered) and reports. Call once. */
  finish(): TraceReport {
    this.pairer.finish();
    return {
      events: this.events,
      byKind: this.byKind,
      connections: this.connections.size,
      ...(this.from !== undefined && { from: this.from, to: this.to }),
      outcomes: this.outcomes,
      errorsByCode: this.errorsByCode,
      findingsByRule: this.findingsByRule,
      failures: this.failures,
      findings: this.findings,
      latencyByMethod: this.byMethod.rows(),
      latencyByUpstream: this.byUpstream.rows(),
    };
  }

  private exchange(exchange: Exchange): void {
    this.outcomes[exchange.outcome] = (this.outcomes[exchange.outcome] ?? 0) + 1;
    const { latencyMs, request } = exchange;
    if (latencyMs !== undefined) {
      this.byMethod.add(request.method ?? '(no method)', latencyMs);
      if (request.upstream !== undefined) this.byUpstream.add(request.upstream, latencyMs);
      const max = this.options.maxLatencyMs;
      if (max !== undefined && latencyMs > max) {
        const name = request.name ?? request.upstream;
        this.finding({
          rule: 'slow',
          connection: request.connection,
          ...(name !== undefined && { name }),
          ...(request.method !== undefined && { method: request.method }),
          ...(request.id !== undefined && { id: request.id }),
          time: request.time,
          detail: `answered in ${latencyMs} ms, over ${max} ms`,
        });
      }
    }
    this.options.onExchange?.(exchange);
  }

  private finding(finding: Finding): void {
    this.findingsByRule[finding.rule] = (this.findingsByRule[finding.rule] ?? 0) + 1;
    const allowed = isAllowed(finding, this.allow);
    if (!allowed) this.failures++;
    if (this.findings.length < (this.options.maxListed ?? DEFAULT_MAX_LISTED))
      this.findings.push({ ...finding, allowed });
  }
}

/** Analyses every event of `events` (from `readTraceEvents`, or an array). */
export async function analyzeTrace(
  events: AsyncIterable<TraceEvent> | Iterable<TraceEvent>,
  options: AnalysisOptions = {},
): Promise<TraceReport> {
  const analyzer = new TraceAnalyzer(options);
  for await (const event of events) analyzer.add(event);
  return analyzer.finish();
}
