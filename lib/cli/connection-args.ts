/**
 * What the commands that talk to a server (`call`, `task`) read alike: the target (`<url>`, or a command after
 * `--` run as a stdio child), how to connect (headers, a stored login, the era and revision, the timeout),
 * tracing, and how to answer the server's questions. Like args.ts, nothing here touches the network or the
 * file system.
 */
import { ERA_CHOICES, eraChoiceOf, type EraChoice } from '../client/era-choice';
import { MODERN_PROTOCOL_VERSIONS, namesModernRevision, type ModernProtocolVersion } from '../protocol/modern';
import { isSupportedVersion, SUPPORTED_PROTOCOL_VERSIONS, type ProtocolVersion } from '../protocol/versions';
import { parseElicitReply, type ElicitReply } from './elicit-args';
import { UsageError } from './errors';
import {
  HELP_OPTION,
  looksLikeUrl,
  parseHttpUrl,
  parseMilliseconds,
  parseOptions,
  parseTraceFile,
  type Options,
  type Parsed,
} from './parse-options';

export const DEFAULT_CALL_TIMEOUT_MS = 60_000;

export type CallTarget =
  | { readonly kind: 'http'; readonly url: URL }
  | { readonly kind: 'stdio'; readonly command: string; readonly args: readonly string[] };

/** How a command reaches its server, and how it behaves on the connection. */
export interface ConnectionSettings {
  readonly target: CallTarget;
  readonly headers: Readonly<Record<string, string>>;
  /** Budget for the handshake and for each request, each; 0 waits forever. */
  readonly timeoutMs: number;
  /** The one revision to speak: a handshake one forces the handshake era, a stateless one the modern era. */
  readonly protocolVersion?: ProtocolVersion | ModernProtocolVersion;
  /** `--era`: which era to speak (absent: probe, or what `protocolVersion` implies). */
  readonly era?: EraChoice;
  /** Keep era verdicts between runs, in the config directory (off with `--no-era-cache`). */
  readonly eraCache: boolean;
  /** Say on stderr which era and revision the connection speaks, and whether the era came from the cache. */
  readonly verbose: boolean;
  readonly trace: boolean;
  /** NDJSON trace to this file. */
  readonly traceFile?: string;
  /** `--client-name`: whose stored login to use (with the URL, the key of `switchboard login`'s record). */
  readonly clientName?: string;
  /** How to answer the server's questions (form elicitation): `--answer`, `--decline`, `--cancel` (absent: a prompt). */
  readonly elicit?: ElicitReply;
}

export const CONNECTION_OPTIONS: Options = {
  ...HELP_OPTION,
  header: { type: 'string', short: 'H', multiple: true },
  timeout: { type: 'string' },
  'protocol-version': { type: 'string' },
  era: { type: 'string' },
  'no-era-cache': { type: 'boolean' },
  verbose: { type: 'boolean' },
  trace: { type: 'boolean' },
  'trace-file': { type: 'string' },
  'client-name': { type: 'string' },
  answer: { type: 'string', multiple: true },
  decline: { type: 'boolean' },
  cancel: { type: 'boolean' },
};

/** A command line read up to its own arguments: the options, the target, and the positionals left. */
export interface ConnectionArgs {
  readonly values: Parsed['values'];
  /** The positionals besides the target URL, in order. */
  readonly rest: readonly string[];
  readonly settings: ConnectionSettings;
}

/**
 * Reads `args` of `switchboard <command>` (its `options` include `CONNECTION_OPTIONS`): `'help'` when asked
 * for, else the target (a URL as the first positional, or the command line after `--`) and the settings.
 */
export function parseConnectionArgs(
  command: string,
  args: readonly string[],
  options: Options,
): ConnectionArgs | 'help' {
  const separator = args.indexOf('--');
  const ownArgs = separator === -1 ? args : args.slice(0, separator);
  const commandLine = separator === -1 ? undefined : args.slice(separator + 1);
  const { values, positionals } = parseOptions(command, ownArgs, options);
  if (values.help) return 'help';

  let target: CallTarget;
  let rest: string[];
  if (commandLine) {
    const [program, ...programArgs] = commandLine;
    if (program === undefined) throw new UsageError('Missing the command to run after "--"');
    target = { kind: 'stdio', command: program, args: programArgs };
    rest = positionals;
    if (rest[0] !== undefined && looksLikeUrl(rest[0])) {
      throw new UsageError('Give either a URL or a command after "--", not both');
    }
  } else {
    const [url, ...others] = positionals;
    if (url === undefined) {
      throw new UsageError('Missing the target: an http(s):// URL, or a command after "--"');
    }
    target = { kind: 'http', url: parseHttpUrl(url) };
    rest = others;
  }
  return { values, rest, settings: connectionSettings(target, values) };
}

function connectionSettings(target: CallTarget, values: Parsed['values']): ConnectionSettings {
  const headers = parseHeaders((values.header as string[] | undefined) ?? []);
  if (target.kind === 'stdio' && Object.keys(headers).length > 0) {
    throw new UsageError('--header applies to HTTP targets only');
  }
  const clientName = values['client-name'] as string | undefined;
  if (clientName !== undefined && target.kind === 'stdio') {
    throw new UsageError('--client-name applies to HTTP targets only (it names a stored login)');
  }
  if (clientName === '') throw new UsageError('--client-name needs a name');
  const protocolVersion = parseProtocolVersion(values['protocol-version'] as string | undefined);
  const era = parseEra(values.era as string | undefined, protocolVersion);
  const traceFile = parseTraceFile(values['trace-file'] as string | undefined);
  return {
    target,
    headers,
    timeoutMs: parseTimeout(values.timeout as string | undefined),
    ...(protocolVersion && { protocolVersion }),
    ...(era && { era }),
    eraCache: values['no-era-cache'] !== true,
    verbose: values.verbose === true,
    trace: values.trace === true,
    ...(traceFile !== undefined && { traceFile }),
    ...(clientName !== undefined && { clientName }),
    elicit: parseElicitReply(values.answer as string[] | undefined, values.decline === true, values.cancel === true),
  };
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function parseHeaders(lines: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = colon === -1 ? '' : line.slice(0, colon).trim();
    if (!HEADER_NAME.test(name)) throw new UsageError(`--header needs "Name: value", got "${line}"`);
    headers[name] = line.slice(colon + 1).trim();
  }
  return headers;
}

function parseTimeout(text: string | undefined): number {
  return text === undefined ? DEFAULT_CALL_TIMEOUT_MS : parseMilliseconds('timeout', text, 'waits forever');
}

const KNOWN_VERSIONS: readonly string[] = [...MODERN_PROTOCOL_VERSIONS, ...SUPPORTED_PROTOCOL_VERSIONS];

function parseProtocolVersion(text: string | undefined): ProtocolVersion | ModernProtocolVersion | undefined {
  if (text === undefined || isSupportedVersion(text)) return text;
  if ((MODERN_PROTOCOL_VERSIONS as readonly string[]).includes(text)) return text as ModernProtocolVersion;
  throw new UsageError(`Unsupported protocol version "${text}": use one of ${KNOWN_VERSIONS.join(', ')}`);
}

/** `--era` (`legacy`, deprecated, reads as `handshake`), not contradicting the era `--protocol-version` names. */
function parseEra(text: string | undefined, version: string | undefined): EraChoice | undefined {
  if (text === undefined) return undefined;
  const era = eraChoiceOf(text);
  if (era === undefined) throw new UsageError(`--era needs one of ${ERA_CHOICES.join(', ')}, got "${text}"`);
  const implied = version === undefined ? undefined : namesModernRevision(version) ? 'modern' : 'handshake';
  if (implied !== undefined && era !== 'auto' && era !== implied) {
    throw new UsageError(
      `--protocol-version ${version} is a ${implied}-era revision: it cannot be spoken with --era ${era}`,
    );
  }
  return era;
}
