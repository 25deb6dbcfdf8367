/**
 * A 2025-11-25 task's asks (`ctx.elicit` and its kin inside a task of a handshake-era session): each one a
 * request to the client carrying the task in its `_meta` (`io.modelcontextprotocol/related-task`), the task
 * `input_required` while any is open. The spec has the client call `tasks/result` to receive them, so an ask
 * goes on the stream of a `tasks/result` waiting for the task when there is one, else on the session (stdio's
 * one stream, or an HTTP client's standalone GET stream when it has one open). An ask outlives the stream it
 * went on: one the client could not get (no stream open, the session closed) stays open and goes out on the
 * next `tasks/result`, from this client or another (a reopened task), which also takes over an ask sent to
 * another connection (withdrawn there).
 */
import type { RequestHost } from '../../core/request-context';
import { ConnectionClosedError, TransportError } from '../../jsonrpc/errors';
import type { JsonObject, RequestId } from '../../jsonrpc/types';
import type { RunningTask } from '../../tasks/task-runner';
import { RELATED_TASK_META_KEY } from '../../tasks/task-wire';
import { rankedKey, type InputRequest } from '../modern/input-round';
import type { TaskInputs } from './task-inputs';

/** Where an ask goes: a connection, and the request whose stream carries it (none: the session's own). */
export interface InputCarrier {
  readonly host: RequestHost;
  readonly relatedRequestId?: RequestId;
}

interface OpenAsk {
  readonly request: InputRequest;
  /** The params sent: the handler's, with the task in `_meta`. */
  readonly params: JsonObject;
  /** The handler's own signal for this ask, if it gave one. */
  readonly signal: AbortSignal | undefined;
  resolve(answer: JsonObject): void;
  reject(reason: unknown): void;
  /** The send under way and where it went; none while the ask waits for a stream. */
  sending: AbortController | undefined;
  via: InputCarrier | undefined;
}

export class SessionInputs implements TaskInputs {
  private readonly open = new Map<string, OpenAsk>();
  private readonly ranks: Record<string, number> = {};

  constructor(
    private readonly task: RunningTask,
    /** Where an ask goes now (a waiting `tasks/result`'s stream, or the session). */
    private readonly carrier: () => InputCarrier,
  ) {
    task.signal.addEventListener('abort', () => this.abandon(task.signal.reason), { once: true });
  }

  ask(
    method: string,
    params: JsonObject | undefined,
    key: string | undefined,
    signal?: AbortSignal,
  ): Promise<JsonObject> {
    if (this.task.signal.aborted) return Promise.reject(this.task.signal.reason);
    const name = key ?? rankedKey(this.ranks, method.split('/')[0]!);
    const meta = {
      ...(params?._meta as JsonObject | undefined),
      [RELATED_TASK_META_KEY]: { taskId: this.task.taskId },
    };
    return new Promise<JsonObject>((resolve, reject) => {
      const ask: OpenAsk = {
        request: params === undefined ? { method } : { method, params },
        params: { ...params, _meta: meta },
        signal,
        resolve,
        reject,
        sending: undefined,
        via: undefined,
      };
      this.open.set(name, ask);
      void this.task.needInput(this.openRequests());
      this.send(name, ask, this.carrier());
    });
  }

  /**
   * A `tasks/result` waits on `carrier` now: the asks waiting for a stream go there, and so do those sent to
   * another connection (withdrawn there). One already sent on this connection stays where the client has it.
   */
  redirect(carrier: InputCarrier): void {
    for (const [name, ask] of this.open) {
      if (ask.via?.host === carrier.host) continue;
      ask.sending?.abort(new Error('The request moved to the stream of a tasks/result'));
      this.send(name, ask, carrier);
    }
  }

  private send(name: string, ask: OpenAsk, carrier: InputCarrier): void {
    const sending = new AbortController();
    ask.sending = sending;
    ask.via = carrier;
    const signals = [sending.signal, this.task.signal, ...(ask.signal ? [ask.signal] : [])];
    // No timeout: a person may take long to answer, and the task waits as long as it lives.
    carrier.host
      .request(ask.request.method, ask.params, {
        signal: AbortSignal.any(signals),
        timeout: 0,
        ...(carrier.relatedRequestId !== undefined
          ? { relatedRequestId: carrier.relatedRequestId }
          : { failWithoutStream: true }),
      })
      .then(
        (answer) => {
          if (ask.sending !== sending) return;
          this.close(name);
          ask.resolve(answer);
        },
        (error: unknown) => {
          if (ask.sending !== sending) return; // moved elsewhere: that send settles it
          if (!this.task.signal.aborted && !ask.signal?.aborted && neverDelivered(error)) {
            ask.sending = undefined;
            ask.via = undefined;
            // A tasks/result waiting now takes it at once; otherwise the next one will.
            const next = this.carrier();
            if (next.relatedRequestId !== undefined && next.relatedRequestId !== carrier.relatedRequestId) {
              this.send(name, ask, next);
            }
            return;
          }
          this.close(name);
          ask.reject(error);
        },
      );
  }

  private close(name: string): void {
    this.open.delete(name);
    if (this.task.signal.aborted) return;
    if (this.open.size === 0) void this.task.inputAnswered();
    else void this.task.needInput(this.openRequests());
  }

  private openRequests(): JsonObject {
    const requests: Record<string, InputRequest> = {};
    for (const [name, ask] of this.open) requests[name] = ask.request;
    return requests as unknown as JsonObject;
  }

  private abandon(reason: unknown): void {
    const asks = [...this.open.values()];
    this.open.clear();
    for (const ask of asks) {
      ask.sending?.abort(reason);
      ask.reject(reason);
    }
  }
}

/** The client never got the request, or its connection ended before it answered: the ask can go out again. */
function neverDelivered(error: unknown): boolean {
  return error instanceof ConnectionClosedError || error instanceof TransportError;
}
