/**
 * `--trace` and `--trace-file`: every trace event of the command's runtime — each connection's messages and
 * lifecycle, a hub's upstream connections (stamped with their upstream) and state changes, HTTP sessions —
 * as pretty lines on stderr, as NDJSON in a file, or both. The file is flushed and closed when the command
 * ends. A served `Server` of another runtime (one of its own, or that of another copy of this package) has
 * that runtime followed too: its connections and its 2026-07-28 exchanges, which have no connection.
 */
import { open } from 'node:fs/promises';
import { Subscription, type Observable, type Observer } from 'rxjs';
import type { Connection } from '../core/connection';
import { defaultRuntime, type Runtime } from '../core/runtime';
import type { Server } from '../server/server';
import { createNdjsonFileSink } from '../trace/sinks/file';
import { createPrettyTraceSink } from '../trace/sinks/pretty';
import type { TraceSink } from '../trace/sinks/sink';
import type { TraceEvent } from '../trace/types';
import { CliFailure } from './errors';
import type { TraceUiSettings } from './trace-args';
import { openTraceUi } from './trace-ui/open';
import type { CliIo } from './io';

export interface TraceOptions {
  /** Pretty lines on stderr. */
  readonly trace: boolean;
  /** NDJSON to this file (replaced). */
  readonly traceFile?: string;
  /** The live trace viewer (`--trace-ui`). */
  readonly traceUi?: TraceUiSettings;
}

/** Where a command's trace goes while it runs. */
export class CommandTrace {
  private readonly subscriptions = new Subscription();
  /** Every followed stream feeds every sink; a stream's end is not the sinks' end. */
  private readonly fanOut: Partial<Observer<TraceEvent>> = {
    next: (event) => {
      for (const sink of this.sinks) sink.next(event);
    },
  };

  /** The actor systems of the runtimes whose whole trace is followed. */
  private readonly followedSystems = new Set<unknown>();

  private constructor(
    private readonly sinks: readonly TraceSink[],
    runtime: Runtime,
  ) {
    this.followedSystems.add(runtime.root.system);
    this.follow(runtime.trace$);
  }

  /** The trace `options` ask for (none: undefined), following `runtime` from now on. */
  static async open(options: TraceOptions, io: CliIo, runtime = defaultRuntime()): Promise<CommandTrace | undefined> {
    const sinks: TraceSink[] = [];
    if (options.trace) sinks.push(createPrettyTraceSink(io.err));
    if (options.traceFile !== undefined) sinks.push(await openFileSink(options.traceFile));
    const ui = await openTraceUi(options.traceUi, io);
    if (ui) sinks.push(ui);
    return sinks.length === 0 ? undefined : new CommandTrace(sinks, runtime);
  }

  /**
   * `server`, traced: its runtime is followed when it is not the traced one (a modern exchange traces to
   * its server's runtime only), and a connection that joins neither runtime is followed on its own.
   */
  serving(server: Server): Server {
    const own = server.runtime;
    if (!this.followedSystems.has(own.root.system)) {
      this.followedSystems.add(own.root.system);
      this.follow(own.trace$);
    }
    return onConnect(server, (connection) => {
      if (!this.followedSystems.has(connection.actor?.system)) this.follow(connection.trace$);
    });
  }

  /** Stops following, then flushes and closes the sinks; rejects if the file could not be written. */
  async close(): Promise<void> {
    this.subscriptions.unsubscribe();
    await Promise.all(this.sinks.map((sink) => sink.close()));
  }

  private follow(events: Observable<TraceEvent>): void {
    this.subscriptions.add(events.subscribe(this.fanOut));
  }
}

/**
 * Runs `command` with the trace `options` ask for, and closes that trace once the command has ended. A
 * trace file that could not be written fails a command that succeeded; a failed command reports its own error.
 */
export async function withTrace(
  options: TraceOptions,
  io: CliIo,
  command: (trace: CommandTrace | undefined) => Promise<number>,
): Promise<number> {
  const trace = await CommandTrace.open(options, io);
  let code: number;
  try {
    code = await command(trace);
  } catch (error) {
    await trace?.close().catch(() => undefined);
    throw error;
  }
  await trace?.close();
  return code;
}

/** A file sink, once the file is known to be writable: a wrong path fails the command before it starts. */
async function openFileSink(path: string): Promise<TraceSink> {
  try {
    await (await open(path, 'w')).close();
  } catch (error) {
    throw new CliFailure(`Cannot write the trace file ${path}: ${(error as Error).message}`, [], { cause: error });
  }
  return createNdjsonFileSink(path);
}

/**
 * A stand-in for `server` whose `connect` calls `hook` with each new connection; everything else is the
 * server's own. Give it to whatever connects clients (a transport handler) in place of the server.
 */
function onConnect(server: Server, hook: (connection: Connection) => void): Server {
  const connect: Server['connect'] = (transport, options) => {
    const connection = server.connect(transport, options);
    hook(connection);
    return connection;
  };
  // A Proxy rather than a prototype child: writes (and getters) keep landing on the real server.
  return new Proxy(server, { get: (target, key) => (key === 'connect' ? connect : Reflect.get(target, key, target)) });
}
