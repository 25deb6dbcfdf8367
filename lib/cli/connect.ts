/**
 * One command's client (`call`, `task`): connects (Streamable HTTP, or a child process over stdio) in the era
 * the server speaks, runs the command's requests, and closes. The server's log messages and (stdio) its stderr
 * go to stderr; its questions are answered as `CallElicitation` says. The era the server speaks is remembered
 * between runs (call-era-cache.ts) unless `--no-era-cache`; a remembered era the server no longer speaks
 * costs one more connection, which probes.
 */
import { StdioClientTransport } from '../../transports/stdio';
import type { Transport } from '../../transports/transport';
import { Client, type ClientOptions } from '../client/client';
import { adoptedVerdict, forcedEra } from '../client/era-negotiation';
import type { EraChoice } from '../client/era-choice';
import type { EraVerdict } from '../client/era-verdict';
import { McpError, RequestCancelledError, RequestTimeoutError } from '../jsonrpc/errors';
import { namesModernRevision } from '../protocol/modern';
import type { ProtocolVersion } from '../protocol/versions';
import { callEraCache, mayMeanAnotherEra, type CallEraCache } from './call-era-cache';
import { CallElicitation } from './call-elicitation';
import type { CallTarget, ConnectionSettings } from './connection-args';
import { PROMPT } from './elicit-args';
import { CliFailure, cliFailureIn, EXIT_INTERRUPTED } from './errors';
import type { PromptStreams } from './form-prompt';
import { commandLine } from './hints';
import type { CliIo } from './io';
import { onStopSignal } from './signals';
import { VERSION } from './version';

/** What a command does once connected. */
export interface ConnectedCommand {
  /**
   * Sends the command's requests and prints their outcome; resolves with the exit code. `signal` aborts on
   * Ctrl-C, or when the server asks a question the command cannot answer (see `CallElicitation`).
   */
  run(client: Client, signal: AbortSignal): Promise<number>;
  /** What a failure of `run` says (it may ask the server more, as "did you mean" does). */
  failure(error: unknown, client: Client): Promise<CliFailure>;
}

/** Connects as `settings` say, runs `command`, and closes. */
export async function runConnected(
  settings: ConnectionSettings,
  io: CliIo,
  command: ConnectedCommand,
): Promise<number> {
  const eraCache = settings.eraCache ? callEraCache(settings, io) : undefined;
  try {
    const outcome = await attempt(settings, io, command, eraCache, undefined);
    // The remembered era is in doubt and forgotten: this connection probes.
    return typeof outcome === 'number'
      ? outcome
      : ((await attempt(settings, io, command, eraCache, outcome)) as number);
  } finally {
    // The process exits right after: the cache file must be written by then.
    await eraCache?.cache.flush();
  }
}

/** A connection in the era the cache remembered failed as a server of the other era would fail it. */
interface EraDoubt {
  readonly error: unknown;
  /** Whether the request had been sent (a modern one) or the connection failed (a refused `initialize`). */
  readonly during: 'connect' | 'request';
}

/**
 * One connection and its requests. The first attempt may end in an `EraDoubt` (the remembered era is then
 * forgotten); the second, given it, probes. If that probe finds the server modern after all, the request's
 * failure was its real answer: it fails with it, and the request is not sent again. A `CliFailure` from `run`
 * is never in doubt (`mayMeanAnotherEra`): the command already said what happened, as for a task made that then
 * failed, which must not be made again.
 */
async function attempt(
  settings: ConnectionSettings,
  io: CliIo,
  command: ConnectedCommand,
  eraCache: CallEraCache | undefined,
  doubt: EraDoubt | undefined,
): Promise<number | EraDoubt> {
  const { transport, stderrEnded } = await openTransport(settings, io);
  const key = transport.eraKey;
  const choice = forcedEra(settings.era, settings.protocolVersion);
  const cached = eraCache && key !== undefined ? adoptedVerdict(choice, await eraCache.cache.recall(key)) : undefined;
  // Ctrl-C cancels: the server gets notifications/cancelled for the request in flight, then the connection closes.
  // So does a question the command cannot answer (see CallElicitation).
  const interrupt = new AbortController();
  const elicitation = new CallElicitation(settings.elicit ?? PROMPT, terminalPrompt(), (failure) =>
    interrupt.abort(failure),
  );
  const client = commandClient(settings, io, eraCache, elicitation);
  const doubted = (error: unknown, during: EraDoubt['during']): EraDoubt | undefined => {
    if (doubt !== undefined || cached === undefined || !mayMeanAnotherEra(error, settings.target.kind))
      return undefined;
    eraCache!.cache.delete(key!);
    if (settings.verbose) io.err(`era: the remembered ${cached.era} era is in doubt (${messageOf(error)}): probing`);
    return { error, during };
  };
  const undoSignals = onStopSignal((signal) => interrupt.abort(signal));
  try {
    try {
      await client.connect(transport, { timeout: settings.timeoutMs, signal: interrupt.signal });
    } catch (error) {
      const inDoubt = doubted(error, 'connect');
      if (inDoubt) return inDoubt;
      throw await connectFailure(settings.target, transport, error);
    }
    if (settings.verbose) {
      io.err(eraSourceLine(choice, cached, eraCache));
      io.err(connectedLine(client));
    }
    if (doubt?.during === 'request' && client.connectedEra === 'modern')
      throw await command.failure(doubt.error, client);
    // A handshake-era server sends every log message until asked for less; a 2026-07-28 one sends a request's
    // log messages only at the level that request names: ask for all of them, as before.
    if (client.connectedEra === 'modern') await client.setLoggingLevel('debug');
    try {
      return await command.run(client, interrupt.signal);
    } catch (error) {
      if (elicitation.failure) throw elicitation.failure;
      const inDoubt = doubted(error, 'request');
      if (inDoubt) return inDoubt;
      throw await command.failure(error, client);
    }
  } finally {
    // Closing waits for the child to exit; a second Ctrl-C meanwhile kills it at once (see onStopSignal).
    await client.close();
    undoSignals();
    // The child has exited; what it wrote to stderr last (its goodbye, its trace) is still in the pipe.
    await Promise.race([stderrEnded, delay(STDERR_DRAIN_MS)]);
  }
}

/** The client of one command: the server's log messages on stderr, its questions answered by `elicitation`. */
function commandClient(
  settings: ConnectionSettings,
  io: CliIo,
  eraCache: CallEraCache | undefined,
  elicitation: CallElicitation,
): Client {
  const client = new Client(
    { name: 'switchboard', version: VERSION },
    // One command and out: no stream for list changes nobody would read.
    {
      name: traceName(settings.target),
      defaultTimeout: settings.timeoutMs,
      listChanges: 'off',
      eraCache: eraCache?.cache ?? false,
      elicitation: elicitation.options,
      ...eraOptions(settings),
    },
  );
  client.logs$.subscribe({
    next: ({ level, logger, data }) =>
      io.err(
        `[${level}]${logger === undefined ? '' : ` ${logger}:`} ${typeof data === 'string' ? data : JSON.stringify(data)}`,
      ),
    // The stream errors when the connection ends without close(): the command itself reports that.
    error: () => undefined,
  });
  return client;
}

/**
 * The client's era options for `--era` and `--protocol-version`. A handshake revision is also the only one
 * accepted in `initialize`'s answer (`protocolVersions` lists handshake revisions only); a stateless one is
 * the only one the client speaks, which forces the modern era.
 */
function eraOptions({ protocolVersion, era }: ConnectionSettings): ClientOptions {
  const version: ClientOptions =
    protocolVersion === undefined
      ? {}
      : namesModernRevision(protocolVersion)
        ? { protocolVersion }
        : { protocolVersion, protocolVersions: [protocolVersion as ProtocolVersion] };
  return era === undefined ? version : { ...version, era };
}

/** `--verbose`: where the era came from, `era: from the cache (<file>)`, `era: probed ...` or forced. */
function eraSourceLine(choice: EraChoice, cached: EraVerdict | undefined, eraCache: CallEraCache | undefined): string {
  if (choice === 'handshake') return 'era: the handshake, as asked (no probe)';
  if (cached !== undefined) return `era: from the cache (${eraCache!.path}), no probe`;
  return eraCache ? `era: probed, remembered in ${eraCache.path}` : 'era: probed (--no-era-cache)';
}

/** `--verbose`: the revision and the era the connection speaks, `connected: 2026-07-28 (stateless)`. */
function connectedLine(client: Client): string {
  const era = client.connectedEra === 'modern' ? 'stateless' : 'handshake';
  return `connected: ${client.protocolVersion ?? 'unknown'} (${era})`;
}

/** Where to ask the server's questions: the terminal on stdin (prompts on stderr), or nowhere. */
function terminalPrompt(): PromptStreams | undefined {
  if (!process.stdin.isTTY) return undefined;
  // Ctrl-C while prompting reaches readline as a key: raised again as the signal, it stops the call as always.
  return {
    input: process.stdin,
    output: process.stderr,
    terminal: true,
    onInterrupt: () => process.kill(process.pid, 'SIGINT'),
  };
}

/** How long to wait for a stdio server's stderr to end once it has exited (a grandchild may hold it open). */
const STDERR_DRAIN_MS = 1000;

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

async function openTransport(
  settings: ConnectionSettings,
  io: CliIo,
): Promise<{ transport: Transport; stderrEnded: Promise<void> }> {
  const { target } = settings;
  if (target.kind === 'stdio') {
    // The working directory as well, though the child would inherit it: it names the server in the era
    // cache, where `node server.js` run in two folders is two servers.
    const child = new StdioClientTransport({ command: target.command, args: target.args, cwd: process.cwd() });
    // The server's own logging: passed through, as any MCP host shows it.
    const stderrEnded = new Promise<void>((resolve) =>
      child.stderr$.subscribe({ next: (line) => io.err(line), complete: resolve, error: () => resolve() }),
    );
    return { transport: child, stderrEnded };
  }
  // Loaded on demand: stdio calls never pay for the HTTP client or the token store.
  const { StreamableHttpClientTransport } = await import('../../transports/http/streamable-client');
  const authorization = hasAuthorizationHeader(settings.headers)
    ? undefined
    : (await import('./stored-login')).storedLoginFor(target.url, settings.clientName);
  const transport = new StreamableHttpClientTransport(target.url, {
    headers: settings.headers,
    ...(authorization && { authorization }),
  });
  return { transport, stderrEnded: Promise.resolve() };
}

/** An `Authorization` the user gave with --header wins: no stored login then. */
function hasAuthorizationHeader(headers: Readonly<Record<string, string>>): boolean {
  return Object.keys(headers).some((name) => name.toLowerCase() === 'authorization');
}

/** Why the handshake failed. A child process that died says more by how it exited than by the closed pipe. */
async function connectFailure(target: CallTarget, transport: Transport, error: unknown): Promise<CliFailure> {
  if (error instanceof RequestCancelledError) return interrupted('the handshake', error);
  const failure = cliFailureIn(error); // a stored login that does not hold: it says which command to run
  if (failure) return failure;
  const prefix = `Could not connect to ${describeTarget(target)}`;
  // The connection has closed the transport, so a live child is being stopped: `exited` is near.
  const exit =
    transport instanceof StdioClientTransport && !(error instanceof RequestTimeoutError) && (await transport.exited);
  if (exit && exit.kind === 'spawn-failed') {
    return new CliFailure(`Could not start ${describeTarget(target)}: ${exit.error?.message ?? 'unknown error'}`);
  }
  if (exit && exit.kind === 'crashed') {
    const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
    return new CliFailure(`${prefix}: the process ${how} before answering`, [], { cause: error });
  }
  return new CliFailure(`${prefix}: ${messageOf(error)}`, [], { cause: error });
}

/** The name of the command's connection in its trace: the target, without what a URL may carry of secrets. */
export function traceName(target: CallTarget): string {
  if (target.kind === 'stdio') return commandLine([target.command, ...target.args]);
  return `${target.url.origin}${target.url.pathname}`;
}

function describeTarget(target: CallTarget): string {
  return target.kind === 'http' ? target.url.href : `"${commandLine([target.command, ...target.args])}"`;
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function interrupted(what: string, error: unknown): CliFailure {
  return new CliFailure(`Interrupted: ${what} was cancelled`, [], { cause: error, exitCode: EXIT_INTERRUPTED });
}

/** What the failure of `method` says: the server's error with its code and data, a cancel, or what went wrong. */
export function requestFailure(method: string, error: unknown): CliFailure {
  if (error instanceof RequestCancelledError) return interrupted(method, error);
  const failure = cliFailureIn(error);
  if (failure) return failure;
  if (error instanceof McpError) {
    const data = error.data === undefined ? [] : [`data: ${JSON.stringify(error.data)}`];
    return new CliFailure(`${method}: the server answered with error ${error.code}: ${error.message}`, data, {
      cause: error,
    });
  }
  return new CliFailure(`${method}: ${messageOf(error)}`, [], { cause: error });
}
