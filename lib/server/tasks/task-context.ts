/**
 * The context a tool's handler runs in once its call is a task: a real `RequestContext` (the same handler
 * runs as a task or not), whose host is the task's own, not the request's, since the request was answered
 * with the created task at once. It lives as long as the task: cancelled with it, never in any connection's
 * table of requests in flight.
 * - `ctx.progress()` sets the task's status message and, in a handshake-era session, still sends
 *   `notifications/progress` with the request's token (valid until the task ends), on the session;
 * - `ctx.elicit()` and its kin park the task in `input_required` (task-inputs.ts);
 * - `ctx.log()` and `ctx.notify()` reach a handshake-era session; a stateless request has no stream left.
 */
import type { Clock } from '../../core/clock';
import type { Logger } from '../../core/logger';
import { RequestContext, type InputRequestOptions } from '../../core/request-context';
import type { ConnectionState } from '../../../machines/connection';
import type { JsonObject, RequestId } from '../../jsonrpc/types';
import type { ClientCapabilities, Implementation, LoggingLevel, ServerCapabilities } from '../../protocol/types';
import type { RunningTask } from '../../tasks/task-runner';
import type { ListName, ServerHost, ServerSessionHost } from '../context';
import type { ServerDefinition } from '../definition';
import type { ServerHandlersHost } from '../handler-host';
import type { TaskInputs } from './task-inputs';

/** A task's host: the request's host for what was negotiated, the task's own ways to the client. */
export class TaskHost {
  readonly role = 'server' as const;

  constructor(
    private readonly origin: ServerHandlersHost,
    private readonly inputs: TaskInputs,
  ) {}

  get era(): ServerHost['era'] {
    return this.origin.era;
  }
  get clock(): Clock {
    return this.origin.clock;
  }
  get logger(): Logger {
    return this.origin.logger;
  }
  get protocolVersion(): string | undefined {
    return this.origin.protocolVersion;
  }
  get peerCapabilities(): Readonly<Record<string, unknown>> | undefined {
    return this.origin.peerCapabilities;
  }
  get supportsProgressMessage(): boolean {
    return this.origin.supportsProgressMessage;
  }
  get clientInfo(): Implementation | undefined {
    return this.origin.clientInfo;
  }
  get clientCapabilities(): ClientCapabilities | undefined {
    return this.origin.clientCapabilities;
  }
  get capabilities(): ServerCapabilities {
    return this.origin.capabilities;
  }
  get logLevel(): LoggingLevel | undefined {
    return this.origin.logLevel;
  }
  get definition(): ServerDefinition {
    return this.origin.definition;
  }
  /** The session's state (a handshake-era session; undefined for a stateless request). */
  get state(): ConnectionState | undefined {
    return (this.origin as Partial<ServerSessionHost>).state;
  }
  get pendingRequestCount(): number {
    return (this.origin as Partial<ServerSessionHost>).pendingRequestCount ?? 0;
  }
  get activeHandlerCount(): number {
    return (this.origin as Partial<ServerSessionHost>).activeHandlerCount ?? 0;
  }

  listed(list: ListName): void {
    this.origin.listed(list);
  }

  request(method: string, params?: JsonObject, options?: InputRequestOptions): Promise<JsonObject> {
    return this.inputs.ask(method, params, options?.key, options?.signal);
  }

  /** To a handshake-era session, outside any request (the request was answered); nowhere for a stateless one. */
  notify(method: string, params?: JsonObject): Promise<void> {
    if (this.origin.era !== 'handshake') return Promise.resolve();
    return this.origin.notify(method, params).catch((error: unknown) => {
      this.logger.debug(`A task's ${method} could not be sent`, error);
    });
  }

  log(level: LoggingLevel, data: unknown, logger?: string): Promise<void> {
    if (this.origin.era !== 'handshake') return Promise.resolve();
    return this.origin.log(level, data, logger).catch((error: unknown) => {
      this.logger.debug("A task's log message could not be sent", error);
    });
  }

  streamCloser(): undefined {
    return undefined;
  }
}

/** A task's `RequestContext`: progress also reports the task's status. */
export class TaskContext extends RequestContext<ServerHost> {
  constructor(
    host: TaskHost,
    private readonly task: RunningTask,
    id: RequestId,
    params: JsonObject | undefined,
  ) {
    super(host as unknown as ServerHost, id, 'tools/call', params, 0, undefined, undefined);
  }

  override progress(progress: number, total?: number, message?: string): Promise<void> {
    if (this.done) return Promise.resolve();
    const reported = this.task.report(message ?? (total === undefined ? `${progress}` : `${progress}/${total}`));
    if (this.era !== 'handshake') return reported;
    return Promise.all([super.progress(progress, total, message), reported]).then(() => undefined);
  }
}
