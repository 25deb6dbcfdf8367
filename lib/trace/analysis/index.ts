/** Trace analysis: read a recorded NDJSON trace, check it (`trace check`), export it as OTLP/JSON or HAR. */
export { analyzeTrace, TraceAnalyzer, type AnalysisOptions, type TraceReport } from './analyze';
export { ExchangePairer, type Exchange, type ExchangeOutcome } from './exchanges';
export {
  FINDING_RULES,
  isAllowed,
  NOTHING_ALLOWED,
  parseAllowEntry,
  type AllowList,
  type Finding,
  type FindingRule,
} from './findings';
export { harWriter } from './har';
export type { LatencyRow } from './latency';
export { emptyReadStats, readTraceEvents, type TraceReadStats } from './ndjson-reader';
export { otlpWriter } from './otlp';
export { formatTraceReport } from './report-text';
