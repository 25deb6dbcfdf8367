import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { Observable, Subject, type Subscription } from 'rxjs';
import { createActor, type Actor } from 'xstate';
import { defaultRuntime, type Runtime } from '../lib/core/runtime';
import { TransportError } from '../lib/jsonrpc/errors';
import type { InboundFrame, JsonRpcBatch, JsonRpcMessage } from '../lib/jsonrpc/types';
import type { TracedNetwork } from '../lib/trace/instrumentation';
import { childProcessMachine, type ChildExit, type ShutdownPolicy } from '../machines/child-process';
import { redirectConsoleToStderr } from './console-redirect';
import { LineSplitter } from './line-reader';
import { LineStream } from './line-stream';
import { signalGroup, USE_PROCESS_GROUP, waitForGroupEnd } from './process-group';
import type { Transport } from './transport';

// The port and message types its public signatures name, so this subpath stands alone.
export type * from './port-types';
export type { ChildExit, ShutdownPolicy, SignalName } from '../machines/child-process';
export type { Clock } from '../lib/core/clock';
export type { Logger } from '../lib/core/logger';
export type { Runtime, RuntimeOptions } from '../lib/core/runtime';

/** What stdio runs over, in the OpenTelemetry conventions' terms. */
const PIPE: TracedNetwork = { transport: 'pipe' };
export type * from '../lib/trace/instrumentation-types';
export type { RedactionContext, Redactor } from '../lib/trace/redact';
export type { TraceCause, TraceEvent, TraceKind } from '../lib/trace/types';
export type { Progress } from '../lib/protocol/types';
export type { QuitReason } from '../machines/connection';

export interface StdioServerOptions {
  /** Default `process.stdin`. */
  readonly input?: Readable;
  /** Default `process.stdout`. Nothing but messages is ever written to it. */
  readonly output?: Writable;
  /** Largest inbound line, in bytes (default 4 MiB); a larger one becomes a `UnreadableFrame`. */
  readonly maxMessageBytes?: number;
  /** Deepest nesting accepted in a message (default 128); a deeper one is refused with -32600. */
  readonly maxDepth?: number;
  /** Send `console.log/info/debug` to stderr while the transport is open. */
  readonly redirectConsole?: boolean;
  /** Back-pressure: unsent output above which answering pauses reading (default 1 MiB; see `LineStream`). */
  readonly pauseReadingAboveBytes?: number;
  /** Back-pressure: unsent output beyond which the transport fails (default 64 MiB; see `LineStream`). */
  readonly maxUnsentBytes?: number;
}

/**
 * The server's side of stdio: newline-delimited JSON on stdin/stdout. `messages` completes when stdin
 * ends, so a server whose client went away shuts down instead of lingering as an orphan.
 */
export class StdioServerTransport implements Transport {
  readonly messages: Observable<InboundFrame>;
  /** A pipe (`network.transport: pipe` on its spans). */
  readonly network: TracedNetwork = PIPE;
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
  /** Largest inbound line, in bytes (default 4 MiB). */
  readonly maxMessageBytes?: number;
  /** Deepest nesting accepted in a message (default 128); a deeper one is refused with -32600. */
  readonly maxDepth?: number;
  /** The close ladder's waits (default 2 s each). */
  readonly shutdown?: Partial<ShutdownPolicy>;
  /** How many recent stderr lines `recentStderr` keeps (default 100). */
  readonly stderrLines?: number;
  /** Back-pressure: unsent output above which answering pauses reading (default 1 MiB; see `LineStream`). */
  readonly pauseReadingAboveBytes?: number;
  /** Back-pressure: unsent output beyond which the transport fails (default 64 MiB; see `LineStream`). */
  readonly maxUnsentBytes?: number;
  /**
   * The runtime whose actor system the child's lifecycle actor joins (default: the process-wide one): its
   * clock times the close ladder, and its inspection and `trace$` see the child's state changes.
   */
  readonly runtime?: Runtime;
}

/** Each stderr line is capped: a server may log anything there, but not exhaust our memory. */
const MAX_STDERR_LINE_BYTES = 64 * 1024;
/** After the child exits, how long to wait for its stdout to drain before ending `messages`. */
const STDOUT_DRAIN_MS = 1000;

/** The children (by pid, each the leader of its own group) of every transport that has not seen its group end. */
const runningChildren = new Set<number>();

/**
 * The client's side of stdio: runs the server as a child process in its own process group, so closing
 * reaches the whole tree (servers started through `npx`, `uvx` or `sh -c` are wrappers around the real
 * one). Nothing runs before `start()` (a `Connection` calls it when it attaches the transport; a `send()`
 * before it starts the child too). Closing ends stdin, then sends SIGTERM, then SIGKILL to the group (see
 * `childProcessMachine`), and resolves once the child has exited and no process of its group runs any more
 * (zombies aside: reaping orphans is init's job), on every path: closed before start, while starting, or
 * running.
 *
 * `messages` may be subscribed before `start()`. It completes after `close()` or when the child exits with
 * code 0; any other exit, and a failed spawn, end it with a `TransportError` whose `cause` is the `ChildExit`.
 */
export class StdioClientTransport implements Transport {
  readonly messages: Observable<InboundFrame>;
  /** A pipe (`network.transport: pipe` on its spans). */
  readonly network: TracedNetwork = PIPE;
  /** Each line the child writes to stderr (logging, not an error signal). Completes with stderr. */
  readonly stderr$: Observable<string>;
  /** Resolves when the child has exited (or failed to start, or was closed before it started), with how. */
  readonly exited: Promise<ChildExit>;
  private readonly stderrSubject = new Subject<string>();
  private readonly recent: string[] = [];
  private readonly actor: Actor<typeof childProcessMachine>;
  /** The actor joins its runtime's system on `start()` or `close()`: a transport dropped unused leaves nothing there. */
  private actorRunning = false;
  private child: ChildProcessWithoutNullStreams | undefined;
  private stream: LineStream | undefined;
  /** Resolves with the line stream once the child is spawned, or with undefined when it never will be. */
  private readonly opened: Promise<LineStream | undefined>;
  private resolveOpened!: (stream: LineStream | undefined) => void;
  private starting: Promise<void> | undefined;
  private groupGone: Promise<void> | undefined;
  private stdoutEnded: Promise<void> = Promise.resolve();

  /**
   * SIGKILLs the process group of every child a `StdioClientTransport` of this process started and that has
   * not been seen to end: the last resort of a process about to exit past its shutdown deadline. Returns
   * the pids signalled. Each transport's `close()` still resolves only once its group has ended.
   */
  static killRunningChildren(): number[] {
    const pids = [...runningChildren];
    for (const pid of pids) signalGroup(pid, 'SIGKILL');
    return pids;
  }

  constructor(private readonly options: StdioClientOptions) {
    this.stderr$ = this.stderrSubject.asObservable();
    this.opened = new Promise((resolve) => (this.resolveOpened = resolve));
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
      {
        id: `child-process:${options.command}`,
        input: { shutdown: options.shutdown },
        parent: (options.runtime ?? defaultRuntime()).root,
      },
    );
    this.exited = new Promise((resolve) => {
      this.actor.subscribe({ complete: () => resolve(this.actor.getSnapshot().output!) });
    });
    this.messages = new Observable<InboundFrame>((subscriber) => {
      let inner: Subscription | undefined;
      let active = true;
      void this.opened.then(async (stream) => {
        if (!active) return;
        if (stream) {
          inner = stream.messages.subscribe(subscriber);
          return;
        }
        const error = exitError(options.command, await this.exited);
        if (error) subscriber.error(error);
        else subscriber.complete();
      });
      return () => {
        active = false;
        inner?.unsubscribe();
      };
    });
    void this.exited.then(async (exit) => {
      this.resolveOpened(undefined);
      await this.stdoutEnded;
      this.stream?.finish(exitError(options.command, exit));
    });
  }

  /** The command line (and working directory) this transport runs: the client's era verdicts are kept by it. */
  get eraKey(): string {
    const { command, args = [], cwd } = this.options;
    return `stdio:${JSON.stringify(cwd === undefined ? [command, ...args] : [command, ...args, { cwd }])}`;
  }

  /** The child's pid, once it runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The most recent stderr lines, oldest first. */
  get recentStderr(): readonly string[] {
    return this.recent;
  }

  /**
   * Spawns the child; resolves once it runs, rejects with a `TransportError` when it cannot start (or the
   * transport was closed first). Idempotent.
   */
  start(): Promise<void> {
    this.starting ??= this.spawnOnce();
    return this.starting;
  }

  private async spawnOnce(): Promise<void> {
    const actor = this.runningActor();
    // Settled once the machine is past `starting`: running, or already ended (spawn failed, closed first).
    const settled = new Promise<void>((resolve) => {
      if (actor.getSnapshot().status !== 'active') return resolve();
      const watch = actor.subscribe({
        next: ({ value }) => {
          if (value === 'idle' || value === 'starting') return;
          watch.unsubscribe();
          resolve();
        },
        complete: resolve,
      });
    });
    // A transport closed before it started has a stopped actor: nothing to start, the error below says why.
    if (actor.getSnapshot().status === 'active') actor.send({ type: 'start' });
    await settled;
    if (this.child?.pid !== undefined) return;
    throw (
      exitError(this.options.command, await this.exited) ??
      new TransportError(`The transport for "${this.options.command}" was closed before it started`)
    );
  }

  /** Sends `message`; before `start()`, starts the child first. */
  send(message: JsonRpcMessage | JsonRpcBatch): Promise<void> {
    const stream = this.stream;
    if (!stream) {
      return this.start().then(() => this.send(message));
    }
    const sent = stream.send(message);
    return this.child?.pid === undefined ? sent.catch((error) => this.explainUnstarted(error)) : sent;
  }

  /**
   * Ends stdin and escalates until the child has exited; resolves then, once no process of its group runs
   * any more (or, for one stuck in the kernel, after a bounded wait and a warning on stderr). Before
   * `start()` nothing is spawned and it resolves at once.
   */
  close(): Promise<void> {
    // Stop reading and end stdin, but let `messages` end with the exit: the connection is closed only then.
    this.stream?.close(true, false);
    const actor = this.runningActor();
    if (actor.getSnapshot().status === 'active') actor.send({ type: 'stop' });
    return this.exited.then(() => this.groupGone);
  }

  private runningActor(): Actor<typeof childProcessMachine> {
    if (!this.actorRunning) {
      this.actorRunning = true;
      this.actor.start();
    }
    return this.actor;
  }

  /**
   * A child that could not start (no pid) has its stdin closed before Node reports why: a send then
   * fails with "the output stream closed". Its spawn error is the useful answer, and it follows at once.
   */
  private async explainUnstarted(error: unknown): Promise<never> {
    const exit = await this.exited;
    throw (exit.kind === 'spawn-failed' && exitError(this.options.command, exit)) || error;
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
    const stream = (this.stream = new LineStream(child.stdout, child.stdin, {
      maxMessageBytes: this.options.maxMessageBytes,
      maxDepth: this.options.maxDepth,
      pauseReadingAboveBytes: this.options.pauseReadingAboveBytes,
      maxUnsentBytes: this.options.maxUnsentBytes,
      completeOnInputEnd: false,
    }));
    this.stdoutEnded = new Promise((resolve) => {
      child.stdout.once('close', resolve);
      this.exited.then(() => setTimeout(resolve, STDOUT_DRAIN_MS).unref());
    });
    child.once('spawn', () => {
      if (child.pid !== undefined) {
        runningChildren.add(child.pid);
        const pid = child.pid;
        this.groupGone = this.exited
          .then(() => waitForGroupEnd(pid, this.options.command))
          .then(() => void runningChildren.delete(pid));
      }
      this.actor.send({ type: 'spawned' });
    });
    child.once('error', (error) => {
      if (child.pid === undefined) this.actor.send({ type: 'spawn.failed', error });
    });
    child.once('exit', (code, signal) => this.actor.send({ type: 'exited', code, signal }));
    child.stdin.on('error', () => undefined); // EPIPE once the child is gone: reported through its exit
    this.captureStderr(child.stderr);
    this.resolveOpened(stream);
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
    if (pid !== undefined) signalGroup(pid, signal);
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
