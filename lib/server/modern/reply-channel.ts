/**
 * The way back of a stateless (2026-07-28) request that has one of its own: an `ExchangeReply` (over
 * HTTP, the POST's response). It is what the handler run answers through, and, while someone listens to
 * the runtime's trace, the origin of the request's trace events (`x1`, `x2`, …: such a request has no
 * connection to name it).
 */
import type { Clock } from '../../core/clock';
import { ConnectionTrace, type TracedConnection } from '../../core/connection-trace';
import type { ExchangeReply } from '../../core/exchange';
import type { RunChannel } from '../../core/handler-run';
import type { Logger } from '../../core/logger';
import type { Runtime } from '../../core/runtime';
import type { JsonRpcResponse } from '../../jsonrpc/types';

/** What the channel reads of its server. */
export interface ReplyChannelServing {
  readonly runtime: Runtime;
  readonly clock: Clock;
  readonly logger: Logger;
  /** `ConnectionOptions.progressReplyDelayMs` of the server. */
  readonly progressReplyDelayMs: number | undefined;
  /** The server's definition: its name is the name of the request's trace events. */
  readonly definition: { readonly info: { readonly name: string } };
}

let replyCount = 0;

export class ReplyChannel implements RunChannel, TracedConnection {
  readonly id: string;
  readonly trace: ConnectionTrace | undefined;

  constructor(
    private readonly reply: ExchangeReply,
    private readonly serving: ReplyChannelServing,
    /** The request's revision, for its trace events. */
    readonly protocolVersion: string,
  ) {
    this.id = `x${++replyCount}`;
    const runtime = serving.runtime;
    // Made for the trace's listeners and for the request's span: neither costs anything without them.
    this.trace =
      runtime.traceChannel.observed || runtime.instrumentation ? new ConnectionTrace(this, runtime) : undefined;
    this.trace?.attach(reply);
  }

  get role(): 'server' {
    return 'server';
  }

  get upstream(): undefined {
    return undefined;
  }

  /** The server's name, as its connections carry (see `ServerConnection`). */
  get name(): string {
    return this.serving.definition.info.name;
  }

  /** For the trace: a stateless request's lifecycle is the request itself. */
  get state(): 'modern' {
    return 'modern';
  }

  get clock(): Clock {
    return this.serving.clock;
  }

  get logger(): Logger {
    return this.serving.logger;
  }

  get progressReplyDelayMs(): number | undefined {
    return this.serving.progressReplyDelayMs;
  }

  /** The reply ignores what comes after the requester left, so a failed result may always be replaced. */
  get canReplace(): boolean {
    return true;
  }

  release(): boolean {
    return true;
  }

  deliver(response: JsonRpcResponse): Promise<void> {
    return this.reply.answer(response);
  }

  /** No connection to close: the failure is this request's alone. */
  failInternally(error: unknown): void {
    this.serving.logger.error('A stateless request failed while being answered', error);
  }
}
