/**
 * The `trace` command lines: `trace check <file> [--json] [--allow <rule>...] [--max-latency <ms>]`,
 * `trace export <file> --format otlp|har [--out <file>]`, and `trace view …` (its arguments passed on, read
 * by trace-view.ts), and `serve`'s `--trace-ui` (the live viewer). Like args.ts, nothing here touches the file
 * system.
 */
import { parseAllowEntry, type AllowList, type FindingRule } from '../trace/analysis/findings';
import { UsageError } from './errors';
import { didYouMeanWord, HELP_OPTION, parseMilliseconds, parseOptions, type Options } from './parse-options';

export const TRACE_ACTIONS = ['check', 'export', 'view'] as const;
export const EXPORT_FORMATS = ['otlp', 'har'] as const;

export type TraceCommand =
  | {
      readonly kind: 'trace';
      readonly action: 'check';
      readonly file: string;
      readonly json: boolean;
      readonly allow: AllowList;
      readonly maxLatencyMs?: number;
    }
  | {
      readonly kind: 'trace';
      readonly action: 'export';
      readonly file: string;
      readonly format: (typeof EXPORT_FORMATS)[number];
      /** Absent: stdout. */
      readonly out?: string;
    }
  | { readonly kind: 'trace'; readonly action: 'view'; readonly args: readonly string[] };

const CHECK_OPTIONS: Options = {
  ...HELP_OPTION,
  json: { type: 'boolean' },
  allow: { type: 'string', multiple: true },
  'max-latency': { type: 'string' },
};
const EXPORT_OPTIONS: Options = { ...HELP_OPTION, format: { type: 'string' }, out: { type: 'string' } };

export function parseTrace(args: readonly string[]): TraceCommand | { kind: 'help'; topic: 'trace' } {
  const [action, ...rest] = args;
  if (action === undefined || action === '-h' || action === '--help') return { kind: 'help', topic: 'trace' };
  if (action === 'view') return { kind: 'trace', action, args: rest };
  if (action !== 'check' && action !== 'export') {
    const hint = didYouMeanWord(action, TRACE_ACTIONS) || `: use ${TRACE_ACTIONS.join(', ')}`;
    throw new UsageError(`Unknown trace action "${action}"${hint}`);
  }
  const { values, positionals } = parseOptions(
    `trace ${action}`,
    rest,
    action === 'check' ? CHECK_OPTIONS : EXPORT_OPTIONS,
  );
  if (values.help) return { kind: 'help', topic: 'trace' };
  const [file, ...extra] = positionals;
  if (file === undefined || file === '')
    throw new UsageError(`Missing the trace file: switchboard trace ${action} <trace.ndjson>`);
  if (extra.length > 0) throw new UsageError(`Unexpected argument "${extra[0]}" after the trace file`);
  if (action === 'export') return parseExport(file, values);
  const maxLatency = values['max-latency'] as string | undefined;
  return {
    kind: 'trace',
    action,
    file,
    json: values.json === true,
    allow: parseAllowList((values.allow as string[] | undefined) ?? []),
    ...(maxLatency !== undefined && { maxLatencyMs: parseMilliseconds('max-latency', maxLatency) }),
  };
}

function parseExport(file: string, values: Record<string, unknown>): TraceCommand {
  const format = values.format as string | undefined;
  if (format === undefined) throw new UsageError('Missing --format: otlp (OpenTelemetry, OTLP/JSON) or har (HAR 1.2)');
  if (!(EXPORT_FORMATS as readonly string[]).includes(format)) {
    const hint = didYouMeanWord(format, EXPORT_FORMATS) || ': use otlp or har';
    throw new UsageError(`Unknown export format "${format}"${hint}`);
  }
  const out = values.out as string | undefined;
  if (out === '') throw new UsageError('--out needs the path of the file to write');
  return { kind: 'trace', action: 'export', file, format: format as 'otlp' | 'har', ...(out !== undefined && { out }) };
}

function parseAllowList(entries: readonly string[]): AllowList {
  const rules = new Set<FindingRule>();
  const errorCodes = new Set<number>();
  for (const entry of entries.flatMap((text) => text.split(','))) {
    const parsed = parseAllowEntry(entry.trim());
    if ('problem' in parsed) throw new UsageError(`--allow: ${parsed.problem}`);
    if ('rule' in parsed) rules.add(parsed.rule);
    else errorCodes.add(parsed.errorCode);
  }
  return { rules, errorCodes };
}

/** `serve --trace-ui <port> [--trace-ui-host <host>]`: where the live trace viewer listens. */
export interface TraceUiSettings {
  readonly port: number;
  /** Loopback (127.0.0.1) by default; another host makes the UI require the token printed with its URL. */
  readonly host: string;
}

/** The options of the live trace viewer, for `serve`'s option table. */
export const TRACE_UI_OPTIONS: Options = { 'trace-ui': { type: 'string' }, 'trace-ui-host': { type: 'string' } };

/** `--trace-ui` and `--trace-ui-host` (which needs it), as parsed by `parseOptions`. */
export function parseTraceUi(values: Readonly<Record<string, unknown>>): TraceUiSettings | undefined {
  const port = values['trace-ui'] as string | undefined;
  const host = values['trace-ui-host'] as string | undefined;
  if (port === undefined) {
    if (host !== undefined) throw new UsageError('--trace-ui-host only applies with --trace-ui <port>');
    return undefined;
  }
  if (!/^\d+$/.test(port) || Number(port) > 65_535) {
    throw new UsageError(`--trace-ui needs a port number from 0 to 65535 (0 picks a free one), got "${port}"`);
  }
  if (host === '') throw new UsageError('--trace-ui-host needs a host name or address to listen on');
  return { port: Number(port), host: host ?? '127.0.0.1' };
}
