/** The runtime's own diagnostics. Never stdout: in stdio mode stdout belongs to the protocol. */
export interface Logger {
  debug(message: string, detail?: unknown): void;
  info(message: string, detail?: unknown): void;
  warn(message: string, detail?: unknown): void;
  error(message: string, detail?: unknown): void;
}

type Level = 'debug' | 'info' | 'warn' | 'error';
const RANK: Record<Level, number> = { debug: 0, info: 1, warn: 2, error: 3 };

function writeStderr(line: string): void {
  const stderr = (globalThis as { process?: { stderr?: { write(text: string): unknown } } }).process?.stderr;
  if (stderr) stderr.write(line + '\n');
  else console.error(line);
}

function formatDetail(detail: unknown): string {
  if (detail === undefined) return '';
  if (detail instanceof Error) return ` ${detail.stack ?? detail.message}`;
  try {
    return ' ' + JSON.stringify(detail);
  } catch {
    return ' ' + String(detail);
  }
}

/** A logger writing `[switchboard] level: message` lines to stderr, from `minimum` up (default `warn`). */
export function createStderrLogger(minimum: Level = 'warn'): Logger {
  const make = (level: Level) => (message: string, detail?: unknown) => {
    if (RANK[level] >= RANK[minimum]) writeStderr(`[switchboard] ${level}: ${message}${formatDetail(detail)}`);
  };
  return { debug: make('debug'), info: make('info'), warn: make('warn'), error: make('error') };
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

export const defaultLogger: Logger = createStderrLogger('warn');
