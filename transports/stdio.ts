import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { Observable, Subject } from 'rxjs';
import { createActor, type Actor } from 'xstate';
import { TransportError } from '../lib/jsonrpc/errors';
import type { InboundFrame, JsonRpcBatch, JsonRpcMessage } from '../lib/jsonrpc/types';
import { childProcessMachine, type ChildExit, type ShutdownPolicy } from '../machines/child-process';
import { redirectConsoleToStderr } from './console-redirect';
import { LineSplitter } from './line-reader';
import { LineStream } from './line-stream';
import type { Transport } from './transport';

export interface StdioServerOptions {
  /** Default `process.stdin`. */
  readonly input?: Readable;
  /** Default `process.stdout`. Nothing but messages is ever written to it. */
  readonly output?: Writable;
  /** Largest inbound line, in bytes (default 4 MiB); a larger one becomes a `FrameError`. */
  readonly maxMessageBytes?: number;
  /** Send `console.log/info/debug` to stderr while the transport is open. */
  readonly redirectConsole?: boolean;
}

/**
 * The server's side of stdio: newline-delimited JSON on stdin/stdout. `messages` completes when stdin
 * ends, so a server whose client went away shuts down instead of lingering as an orphan.
 */
export class StdioServerTransport implements Transport {
  readonly messages: Observable<InboundFrame>;
  private readonly stream: LineStream;
  private restoreConsole: (() => void) | undefined;

  constructor(options: StdioServerOptions = {}) {
    const input = options.input ?? process.stdin;
    const output = options.output ?? process.stdout;
    this.stream = new LineStream(input, output, options);
    this.messages = this.stream.messages;
    if (options.redirectConsole) this.restoreConsole = redirectConsoleToStderr();
  }

  send(message: JsonRpcMessage | JsonRpcBatch): Promise<void> {
    return this.stream.send(message);
  }

  /** Stops reading and ends the output: the client sees EOF. */
  close(): Promise<void> {
    this.stream.close(true);
    this.restoreConsole?.();
    this.restoreConsole = undefined;
    return Promise.resolve();
  }
}

export interface StdioClientOptions {
  readonly command: string;
  readonly args?: readonly string[];
  /** Added to the parent's environment. */
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  readonly maxMessageBytes?: number;
  /** The close ladder's waits (default 2 s each). */
  readonly shutdown?: Partial<ShutdownPolicy>;
  /** How many recent stderr lines `recentStderr` keeps (default 100). */
  readonly stderrLines?: number;
}

/** Each stderr line is capped: a server may log anything there, but not exhaust our memory. */
const MAX_STDERR_LINE_BYTES = 64 * 1024;
/** After the child exits, how long to wait for its stdout to drain before ending `messages`. */
const STDOUT_DRAIN_MS = 1000;
/** Process groups are a POSIX notion; elsewhere only the child itself is signalled. */
const USE_PROCESS_GROUP = process.platform !== 'win32';

/**
 * The client's side of stdio: runs the server as a child process in its own process group, so closing
 * reaches the whole tree (servers started through `npx`, `uvx` or `sh -c` are wrappers around the real
 * one). Closing ends stdin, then sends SIGTERM, then SIGKILL to the group (see `childProcessMachine`).
 *
 * `messages` completes after `close()` or when the child exits with code 0; any other exit, and a failed
 * spawn, end it with a `TransportError` whose `cause` is the `ChildExit`.
 */
export class StdioClientTransport implements Transport {
  readonly messages: Observable<InboundFrame>;
  /** Each line the child writes to stderr (logging, not an error signal). Completes with stderr. */
  readonly stderr$: Observable<string>;
  /** Resolves when the child has exited (or failed to start), with how. */
  readonly exited: Promise<ChildExit>;
  private readonly stderrSubject = new Subject<string>();
  private readonly recent: string[] = [];
  private readonly actor: Actor<typeof childProcessMachine>;
  private child: ChildProcessWithoutNullStreams | undefined;
  private stream: LineStream | undefined;
  private stdoutEnded: Promise<void> = Promise.resolve();

  constructor(private readonly options: StdioClientOptions) {
    this.stderr$ = this.stderrSubject.asObservable();
    this.actor = createActor(
      childProcessMachine.provide({
        actions: {
          spawn: () => this.spawn(),
          endStdin: () => this.child?.stdin.end(),
          terminate: () => this.signal('SIGTERM'),
          kill: () => this.signal('SIGKILL'),
          // The leader is gone: whatever is left of its group is an orphan nobody else will stop.
          reap: () => this.signal('SIGKILL'),
        },
      }),
      { input: { shutdown: options.shutdown } },
    );
    this.exited = new Promise((resolve) => {
      this.actor.subscribe({ complete: () => resolve(this.actor.getSnapshot().output!) });
    });
    this.actor.start();
    const stream = this.stream;
    this.messages = stream ? stream.messages : new Observable((subscriber) => subscriber.error(this.failure));
    this.exited.then((exit) => this.stdoutEnded.then(() => stream?.finish(exitError(options.command, exit))));
  }

  /** The child's pid, once it runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The most recent stderr lines, oldest first. */
  get recentStderr(): readonly string[] {
    return this.recent;
  }

  send(message: JsonRpcMessage | JsonRpcBatch): Promise<void> {
    const stream = this.stream;
    if (!stream) return Promise.reject(this.failure);
    const sent = stream.send(message);
    return this.child?.pid === undefined ? sent.catch((error) => this.explainUnstarted(error)) : sent;
  }

  /** Ends stdin and escalates until the child has exited; resolves then. */
  close(): Promise<void> {
    this.stream?.close(true);
    if (this.actor.getSnapshot().status === 'active') this.actor.send({ type: 'stop' });
    return this.exited.then(() => undefined);
  }

  /**
   * A child that could not start (no pid) has its stdin closed before Node reports why: a send then
   * fails with "the output stream closed". Its spawn error is the useful answer, and it follows at once.
   */
  private async explainUnstarted(error: unknown): Promise<never> {
    const exit = await this.exited;
    throw (exit.kind === 'spawn-failed' && exitError(this.options.command, exit)) || error;
  }

  private get failure(): TransportError {
    return new TransportError(`Could not start "${this.options.command}"`);
  }

  private spawn(): void {
    const { command, args = [], env, cwd } = this.options;
    let child: ChildProcessWithoutNullStreams;
    try {
      child = spawn(command, args, {
        cwd,
        env: env ? { ...process.env, ...env } : process.env,
        stdio: 'pipe',
        detached: USE_PROCESS_GROUP,
        windowsHide: true,
      });
    } catch (error) {
      queueMicrotask(() => this.actor.send({ type: 'spawn.failed', error: error as Error }));
      return;
    }
    this.child = child;
    this.stream = new LineStream(child.stdout, child.stdin, {
      maxMessageBytes: this.options.maxMessageBytes,
      completeOnInputEnd: false,
    });
    this.stdoutEnded = new Promise((resolve) => {
      child.stdout.once('close', resolve);
      this.exited.then(() => setTimeout(resolve, STDOUT_DRAIN_MS).unref());
    });
    child.once('spawn', () => this.actor.send({ type: 'spawned' }));
    child.once('error', (error) => {
      if (child.pid === undefined) this.actor.send({ type: 'spawn.failed', error });
    });
    child.once('exit', (code, signal) => this.actor.send({ type: 'exited', code, signal }));
    child.stdin.on('error', () => undefined); // EPIPE once the child is gone: reported through its exit
    this.captureStderr(child.stderr);
  }

  private captureStderr(stderr: Readable): void {
    const keep = this.options.stderrLines ?? 100;
    const splitter = new LineSplitter(MAX_STDERR_LINE_BYTES, {
      line: (bytes, start, end) => {
        const line = bytes.toString('utf8', start, end);
        this.recent.push(line);
        if (this.recent.length > keep) this.recent.shift();
        this.stderrSubject.next(line);
      },
      oversized: () => undefined,
    });
    stderr.on('data', (chunk: Buffer) => splitter.push(chunk));
    stderr.on('error', () => undefined);
    stderr.once('end', () => {
      splitter.end();
      this.stderrSubject.complete();
    });
  }

  private signal(signal: NodeJS.Signals): void {
    const pid = this.child?.pid;
    if (pid === undefined) return;
    try {
      process.kill(USE_PROCESS_GROUP ? -pid : pid, signal);
    } catch {
      // ESRCH: already gone.
    }
  }
}

/** How an exit ends `messages`: `null` for a clean end, else the error that says what happened. */
function exitError(command: string, exit: ChildExit): TransportError | null {
  if (exit.kind === 'stopped') return null;
  if (exit.kind === 'spawn-failed') {
    return new TransportError(`Could not start "${command}": ${exit.error?.message ?? 'unknown error'}`, {
      cause: exit,
    });
  }
  if (exit.code === 0) return null;
  const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
  return new TransportError(`The server process "${command}" ${how}`, { cause: exit });
}
