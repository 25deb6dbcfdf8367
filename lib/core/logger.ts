import { clipText, excerpt } from '../jsonrpc/excerpt';

/** The runtime's own diagnostics. Never stdout: in stdio mode stdout belongs to the protocol. */
export interface Logger {
  debug(message: string, detail?: unknown): void;
  info(message: string, detail?: unknown): void;
  warn(message: string, detail?: unknown): void;
  error(message: string, detail?: unknown): void;
}

/** A `Logger` method's level: the minimum a stderr logger writes (`createStderrLogger`). */
export type Level = 'debug' | 'info' | 'warn' | 'error';
const RANK: Record<Level, number> = { debug: 0, info: 1, warn: 2, error: 3 };

function writeStderr(line: string): void {
  const stderr = (globalThis as { process?: { stderr?: { write(text: string): unknown } } }).process?.stderr;
  if (stderr) stderr.write(line + '\n');
  else console.error(line);
}

/** How much of a log call's `detail` (a value, or an error's stack) a stderr line shows, by default. */
export const DEFAULT_MAX_DETAIL_CHARS = 2000;

export interface StderrLoggerOptions {
  /**
   * At most this many characters of a log call's `detail` are written (default 2000): details often carry
   * what a peer sent, which may be megabytes or thousands of levels deep.
   */
  readonly maxDetailChars?: number;
}

function formatDetail(detail: unknown, maxChars: number): string {
  if (detail === undefined) return '';
  try {
    if (detail instanceof Error) return ` ${clipText(detail.stack ?? detail.message, maxChars)}`;
    return ` ${excerpt(detail, maxChars)}`;
  } catch {
    return ' [unprintable detail]'; // a getter or a stack that throws: the line itself still goes out
  }
}

/** A logger writing `[switchboard] level: message` lines to stderr, from `minimum` up (default `warn`). */
export function createStderrLogger(minimum: Level = 'warn', options: StderrLoggerOptions = {}): Logger {
  const maxDetailChars = options.maxDetailChars ?? DEFAULT_MAX_DETAIL_CHARS;
  const make = (level: Level) => (message: string, detail?: unknown) => {
    if (RANK[level] >= RANK[minimum])
      writeStderr(`[switchboard] ${level}: ${message}${formatDetail(detail, maxDetailChars)}`);
  };
  return { debug: make('debug'), info: make('info'), warn: make('warn'), error: make('error') };
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

export const defaultLogger: Logger = createStderrLogger('warn');

/**
 * An MCP log message (`notifications/message`'s level, data and logger name) on a local logger: `notice` as
 * info, `warning` as warn, the levels above it as error; data that is not a string as JSON, or a bounded
 * excerpt when JSON cannot show it (a cycle, deep nesting).
 */
export function logMcpMessage(logger: Logger, level: string, data: unknown, name?: string): void {
  const text = `${name ? `${name}: ` : ''}${typeof data === 'string' ? data : showData(data)}`;
  if (level === 'debug') logger.debug(text);
  else if (level === 'info' || level === 'notice') logger.info(text);
  else if (level === 'warning') logger.warn(text);
  else logger.error(text);
}

function showData(data: unknown): string {
  try {
    return JSON.stringify(data) ?? String(data);
  } catch {
    return excerpt(data, 2_000);
  }
}
