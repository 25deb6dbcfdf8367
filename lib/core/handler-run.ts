/**
 * One handler run, for every inbound request of both eras: the handler is called, its result (or the
 * promise of it) settled, an error turned into the wire error of the request's era, the answer held back
 * until the request's progress notifications are out, traced, and handed to the request's way back (a
 * connection's transport, or one HTTP response). A result that cannot be sent (a cycle, nesting too deep)
 * is answered -32603 in its place, so the requester is never left waiting.
 */
import { ConnectionClosedError, ErrorCode, RequestCancelledError } from '../jsonrpc/errors';
import { HANDSHAKE_ANSWERS, type AnswerShape } from './answer-shape';
import { clipText, excerpt } from '../jsonrpc/excerpt';
import type { JsonObject, JsonRpcErrorResponse, JsonRpcResponse, JsonRpcResultResponse } from '../jsonrpc/types';
import type { RequestOutcome } from '../trace/instrumentation';
import type { Clock } from './clock';
import type { ConnectionTrace } from './connection-trace';
import type { Logger } from './logger';
import type { RequestContext, RequestHost } from './request-context';
import { isThenable } from './thenable';

/** Serves one inbound request: its result, or a promise of it; what it throws becomes the error response. */
export type RequestHandler<H extends RequestHost = RequestHost> = (
  context: RequestContext<H>,
  params: JsonObject | undefined,
) => unknown;

/** The way back of the requests a run answers, and what the run reports to. */
export interface RunChannel {
  readonly logger: Logger;
  readonly clock: Clock;
  /** Where the run's trace events go; none when the way back traces what it sends itself. */
  readonly trace: ConnectionTrace | undefined;
  /** How long an answer waits after its request's last progress notification (`PROGRESS_REPLY_DELAY_MS`). */
  readonly progressReplyDelayMs: number | undefined;
  /** The run is over: its record goes. False when its answer must not be sent (the way back is closed). */
  release(context: RequestContext<any>): boolean;
  /** Hands the answer to the way back; rejects (or throws) when it cannot be encoded or sent. */
  deliver(response: JsonRpcResponse, context: RequestContext<any>): Promise<void>;
  /** Whether a result that could not be sent may still be replaced by an error (false once closing). */
  readonly canReplace: boolean;
  /** Something threw outside any guard, while answering. */
  failInternally(error: unknown): void;
}

/** Runs `handler` for the request of `context`, and answers it through `channel`. */
export function runHandler(channel: RunChannel, context: RequestContext<any>, handler: RequestHandler<any>): void {
  const params = context.params;
  const span = context.traceSpan;
  let result: unknown;
  try {
    result = span?.run ? span.run(() => handler(context, params)) : handler(context, params);
  } catch (error) {
    answerError(channel, context, error);
    return;
  }
  if (isThenable(result)) {
    result.then(
      (value) => settle(channel, context, value, false),
      (error) => settle(channel, context, error, true),
    );
  } else {
    answerResult(channel, context, result);
  }
}

/** Answers the request with `value` (`undefined` and `null` are `{}`), unless it was cancelled. */
export function answerResult(channel: RunChannel, context: RequestContext<any>, value: unknown): void {
  if (!end(channel, context)) return;
  const result = (value === undefined || value === null ? {} : value) as JsonObject;
  const shaped = answersOf(context).result(context.method, result);
  replyTo(channel, context, { jsonrpc: '2.0', id: context.id, result: shaped });
}

/** Answers the request with the wire error of `error`, unless it was cancelled. */
export function answerError(channel: RunChannel, context: RequestContext<any>, error: unknown): void {
  if (!end(channel, context)) return;
  if (!(error instanceof Error && 'code' in error && typeof error.code === 'number')) {
    channel.logger.debug(`Handler for ${context.method} failed`, error);
  }
  replyTo(channel, context, { jsonrpc: '2.0', id: context.id, error: answersOf(context).error(error) });
}

/**
 * Sends `response` as the request's answer: at once, except to a request that sent progress. Then the
 * answer waits until the last progress notification was handed over, and `progressReplyDelayMs` more, so
 * it leaves in a later write that the peer reads apart: SDK clients (v1 and v2) drop a progress
 * notification that arrives in the same chunk as its result (they dispatch notifications a microtask late,
 * responses at once). Requests without progress pay nothing. The caller has ended the run already (an
 * `input_required` round answers a run whose handler is still going).
 */
export function replyTo(channel: RunChannel, context: RequestContext<any>, response: JsonRpcResponse): void {
  const progressSent = context.progressSent;
  if (progressSent === undefined) return send(channel, context, response);
  const delay = () => afterDelay(channel.progressReplyDelayMs ?? PROGRESS_REPLY_DELAY_MS);
  progressSent
    .then(delay, delay)
    .then(() => send(channel, context, response))
    .then(undefined, (error: unknown) => channel.failInternally(error));
}

/** An async handler finished: its answer, outside the caller's guard, so guarded here. */
function settle(channel: RunChannel, context: RequestContext<any>, outcome: unknown, failed: boolean): void {
  try {
    if (failed) answerError(channel, context, outcome);
    else answerResult(channel, context, outcome);
  } catch (error) {
    channel.failInternally(error);
  }
}

/** Ends the run's record; false when its answer must not be sent (cancelled, or the way back closed). */
function end(channel: RunChannel, context: RequestContext<any>): boolean {
  const open = channel.release(context);
  if (!context.finish()) {
    context.batch?.skip();
    channel.trace?.message('ignored', 'out', undefined, context.method, context.id, whyUnanswered(context));
    return false;
  }
  return open;
}

function whyUnanswered(context: RequestContext<any>): string {
  const reason = context.cancelReason;
  if (reason === undefined || reason instanceof RequestCancelledError || reason instanceof ConnectionClosedError) {
    return 'The request was cancelled: no response is sent';
  }
  return clipText(reason.message);
}

function answersOf(context: RequestContext<any>): AnswerShape {
  return (context.connection as RequestHost).answers ?? HANDSHAKE_ANSWERS;
}

function send(channel: RunChannel, context: RequestContext<any>, response: JsonRpcResponse): void {
  const error = 'error' in response;
  const span = context.traceSpan;
  if (span) {
    const outcome: RequestOutcome = error
      ? { kind: 'error', error: (response as JsonRpcErrorResponse).error }
      : { kind: 'result', result: (response as JsonRpcResultResponse).result };
    span.end(outcome, channel.clock.now());
  }
  const trace = channel.trace;
  if (trace?.on) {
    const latency = context.startedAt ? channel.clock.now() - context.startedAt : undefined;
    const kind = error ? 'error' : 'result';
    trace.message(kind, 'out', response, context.method, context.id, undefined, latency, undefined, span);
  }
  if (context.batch) return context.batch.answer(response);
  let sent: Promise<void>;
  try {
    sent = channel.deliver(response, context);
  } catch (failure) {
    sent = Promise.reject(failure); // a way back must not throw; one that does fails this answer only
  }
  sent.then(undefined, (failure: unknown) => onSendFailure(channel, context, response, failure));
}

/**
 * An answer could not be sent. While the way back is open that is this answer's fault (a result JSON
 * cannot encode: a cycle, nesting too deep): the request gets -32603 in its place. A failed error
 * answer, or any failure once closing, is only logged.
 */
function onSendFailure(
  channel: RunChannel,
  context: RequestContext<any>,
  response: JsonRpcResponse,
  failure: unknown,
): void {
  if (!('result' in response) || !channel.canReplace) {
    channel.logger.debug('Could not send a response', failure);
    return;
  }
  const cause = (failure as Error)?.cause ?? failure;
  const why = clipText((cause as Error)?.message ?? String(cause));
  channel.logger.warn(`${context.method}: the result of request ${excerpt(context.id)} could not be sent: ${why}`);
  const replacement: JsonRpcErrorResponse = {
    jsonrpc: '2.0',
    id: context.id,
    error: { code: ErrorCode.InternalError, message: `Internal error: the result could not be sent: ${why}` },
  };
  channel.trace?.message('error', 'out', replacement, context.method, context.id, 'The result could not be sent');
  let sent: Promise<void>;
  try {
    sent = channel.deliver(replacement, context);
  } catch (again) {
    sent = Promise.reject(again);
  }
  sent.then(undefined, (again: unknown) => channel.logger.debug('Could not send a response', again));
}

/**
 * How long an answer waits after its request's last progress notification was handed over. A later
 * write is not enough across a pipe: a reader that wakes late reads both writes as one chunk. 10 ms covers
 * a reader's wake-up on a loaded machine (measured: a macrotask was not enough for the SDK's stdio client);
 * only requests that reported progress pay it, and they are the long-running ones.
 */
export const PROGRESS_REPLY_DELAY_MS = 10;

/**
 * The platform's own timer, captured at load: this is a yield to the I/O of other processes, not a
 * timeout, so fake timers a test installs later must not hold responses back.
 */
const platformSetTimeout = globalThis.setTimeout;

function afterDelay(ms: number): Promise<void> {
  return new Promise((resolve) => platformSetTimeout(resolve, ms));
}
