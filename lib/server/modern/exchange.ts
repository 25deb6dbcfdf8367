/**
 * One modern (2026-07-28) request, from its arrival to its answer: no connection, no handshake, only the
 * request's own envelope and its way back (`ExchangeReply`). The exchange is the handler's host, as a
 * connection is on a legacy session, so every handler runs unchanged: `ctx.progress`, `ctx.log` and
 * `ctx.notify` go to this request's stream, and `ctx.elicit`, `ctx.createMessage`, `ctx.listRoots` become
 * an `input_required` round (input-round.ts) with a sealed `requestState` (request-state/).
 */
import type { Clock } from '../../core/clock';
import type { ExchangeReply } from '../../core/exchange';
import { principalOf, RequestContext, type InputRequestOptions } from '../../core/request-context';
import type { RequestHandler } from '../../core/inbound-requests';
import type { Logger } from '../../core/logger';
import { ErrorCode, McpError } from '../../jsonrpc/errors';
import type { JsonObject, JsonRpcNotification, JsonRpcRequest, RequestId } from '../../jsonrpc/types';
import { ConnectionTrace } from '../../core/connection-trace';
import type { Runtime } from '../../core/runtime';
import type { ModernRequestVerdict } from '../../protocol/era';
import { checkParamHeaders, type HeaderSource } from '../../protocol/http-headers';
import {
  LOGGING_LEVELS,
  type ClientCapabilities,
  type Implementation,
  type InitializeResult,
  type LoggingLevel,
  type ServerCapabilities,
} from '../../protocol/types';
import type { ListName } from '../context';
import type { ServerDefinition } from '../definition';
import type { ServerHandlersHost } from '../handlers';
import { open, seal, type KeyRing, type RequestStateBinding } from '../request-state';
import type { SubscriptionHub } from '../subscriptions';
import type { ListenHost, ListenStreams } from '../listen';
import { answersOf, carriedOf, InputRound } from './input-round';
import { completeResult, modernError } from './results';

/** How input rounds are sealed and bounded. */
export interface InputRoundSettings {
  readonly keyRing: KeyRing;
  /** How long a sealed `requestState` is accepted (default 10 minutes). */
  readonly ttlMs?: number;
  /** `input_required` answers one request may get before it fails (default `DEFAULT_MAX_INPUT_ROUNDS`). */
  readonly maxRounds?: number;
}

export const DEFAULT_MAX_INPUT_ROUNDS = 8;

/** What the exchange needs of the server that serves it. */
export interface ModernServing {
  /** Where the exchanges' trace events go (the runtime's stream). */
  readonly runtime: Runtime;
  readonly definition: ServerDefinition;
  readonly subscriptions: SubscriptionHub;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly inputRounds: InputRoundSettings;
  /** The revisions `server/discover` names. */
  readonly modernVersions: readonly string[];
  readonly listenStreams: ListenStreams;
  /** A list handler is about to answer. */
  listed(list: ListName): void;
}

const RUNNING = 0;
const ANSWERED = 1;

let exchangeCount = 0;

/** Thrown into the asks of a handler run that ended with an `input_required` answer. */
class InputRequiredSignal extends Error {
  constructor() {
    super('The request was answered with an input_required result; this run of the handler ends here');
    this.name = 'InputRequiredSignal';
  }
}

/**
 * One signal for every round: it carries nothing of the request, and a new Error per round (its stack
 * captured) was about 5% of a round's CPU.
 */
const INPUT_REQUIRED = new InputRequiredSignal();

/** What a modern request's handler finds as its `context.connection`: the shared handlers' host and the listen host. */
export type ModernHost = ServerHandlersHost & ListenHost;

export class ModernExchange implements ModernHost {
  readonly definition: ServerDefinition;
  private phase: typeof RUNNING | typeof ANSWERED = RUNNING;
  private context: RequestContext<ModernHost> | undefined;
  /** What the handler's asks are answered from, and the rounds already gone by: the round opens on the first ask. */
  private answers: Readonly<Record<string, unknown>> | undefined;
  private roundsDone = 0;
  /** Opened by the handler's first ask: most calls ask for nothing. */
  private round: InputRound | undefined;
  /** Made when someone listens to the runtime's trace as the request arrives (HTTP; a duplex connection traces itself). */
  private readonly tracing: ConnectionTrace | undefined;
  private readonly startedAt: number;
  private readonly seq: number;

  constructor(
    private readonly serving: ModernServing,
    private readonly verdict: ModernRequestVerdict,
    private readonly reply: ExchangeReply,
  ) {
    // One definition for the whole request, even if the server's changes meanwhile.
    this.definition = serving.definition;
    this.seq = ++exchangeCount;
    const traced = !reply.traced && serving.runtime.traceChannel.observed;
    this.tracing = traced ? new ConnectionTrace(this, serving.runtime) : undefined;
    this.startedAt = traced ? serving.clock.now() : 0;
    const request = verdict.request;
    this.tracing?.message('request', 'in', request, request.method, request.id);
  }

  // ---- what handlers read (constants as getters: an exchange per request stays a small object) -------

  get role(): 'server' {
    return 'server';
  }

  get state(): 'modern' {
    return 'modern';
  }

  get era(): 'modern' {
    return 'modern';
  }

  get supportsProgressMessage(): boolean {
    return true;
  }

  get pendingRequestCount(): number {
    return 0;
  }

  get activeHandlerCount(): number {
    return 1;
  }

  get upstream(): undefined {
    return undefined;
  }

  /** Names the exchange in trace events (`x1`, `x2`, …): a modern request has no connection. */
  get id(): string {
    return `x${this.seq}`;
  }

  get clock(): Clock {
    return this.serving.clock;
  }

  get logger(): Logger {
    return this.serving.logger;
  }

  get subscriptions(): SubscriptionHub {
    return this.serving.subscriptions;
  }

  get listenStreams(): ListenStreams {
    return this.serving.listenStreams;
  }

  get protocolVersion(): string {
    return this.verdict.version;
  }

  get modernVersions(): readonly string[] {
    return this.serving.modernVersions;
  }

  get peerCapabilities(): Readonly<Record<string, unknown>> {
    return this.verdict.meta.clientCapabilities;
  }

  get clientCapabilities(): ClientCapabilities {
    return this.verdict.meta.clientCapabilities as ClientCapabilities;
  }

  get clientInfo(): Implementation | undefined {
    return this.verdict.meta.clientInfo as Implementation | undefined;
  }

  get capabilities(): ServerCapabilities {
    return this.definition.capabilities;
  }

  /** The level the request's `_meta` asked for: no log message is sent without one. */
  get logLevel(): LoggingLevel | undefined {
    return this.verdict.meta.logLevel as LoggingLevel | undefined;
  }

  // ---- serving -----------------------------------------------------------------------------------

  /** Runs `handler` for the request; `headers` (HTTP) are checked against the tool's `x-mcp-header` params. */
  serve(handler: RequestHandler<ModernHost>, headers: HeaderSource | undefined): void {
    const request = this.verdict.request;
    const params = request.params;
    if (headers !== undefined && request.method === 'tools/call') {
      const mismatch = this.paramHeaderMismatch(params, headers);
      if (mismatch) return this.answerError(mismatch);
    }
    const inputResponses = params?.inputResponses;
    if (inputResponses !== undefined && !isObject(inputResponses)) {
      return this.answerError(invalid('"inputResponses" must be an object of answers by key'));
    }
    const requestState = params?.requestState;
    if (requestState === undefined) return this.run(handler, inputResponses, 0);
    if (typeof requestState !== 'string') return this.answerError(invalid('"requestState" must be a string'));
    open(this.serving.inputRounds.keyRing, requestState, bindingOf(request), this.clock.now()).then(
      (opened) => {
        const carried = opened.ok ? carriedOf(opened.state) : undefined;
        if (carried === undefined) {
          this.logger.debug(`${request.method}: requestState refused (${opened.ok ? 'not ours' : opened.reason})`);
          return this.answerError(invalid('"requestState" is not valid for this request'));
        }
        this.run(handler, answersOf(carried, inputResponses), carried.round);
      },
      (error: unknown) => this.answerError(error),
    );
  }

  /** Answers with `error` without running a handler. */
  refuse(error: McpError): void {
    this.answerError(error);
  }

  private run(
    handler: RequestHandler<ModernHost>,
    answers: Readonly<Record<string, unknown>> | undefined,
    round: number,
  ): void {
    const request = this.verdict.request;
    const maxRounds = this.serving.inputRounds.maxRounds ?? DEFAULT_MAX_INPUT_ROUNDS;
    if (round > maxRounds) {
      return this.answerError(invalid(`the request went through ${round} input rounds; the limit is ${maxRounds}`));
    }
    const context = new RequestContext<ModernHost>(
      this,
      request.id,
      request.method,
      request.params,
      0,
      undefined,
      undefined,
    );
    this.context = context;
    this.answers = answers;
    this.roundsDone = round;
    let result: unknown;
    try {
      result = handler(context, request.params);
    } catch (error) {
      return this.answerError(error);
    }
    if (isThenable(result)) {
      // Only a handler still running can be aborted; a requester already gone calls the hook at once.
      this.reply.onAbort((reason) => {
        this.phase = ANSWERED;
        context.cancel(reason);
      });
      result.then(
        (value) => this.answerResult(value),
        (error) => this.answerError(error),
      );
    } else {
      this.answerResult(result);
    }
  }

  /**
   * The first ask without an answer: the round goes out once the handler had the chance to ask for more
   * at once (`Promise.all` of several asks): on the next macrotask, after the microtasks now queued. Not a
   * 0 ms timer: Node holds those for at least 1 ms, which was most of a round's latency.
   */
  private scheduleRound(): void {
    // A static callback with the exchange as its argument: no closure (under tsx, a named one) per round.
    if (typeof setImmediate === 'function') setImmediate(ModernExchange.sendRoundOf, this);
    else this.clock.setTimeout(() => ModernExchange.sendRoundOf(this), 0);
  }

  private static sendRoundOf(exchange: ModernExchange): void {
    void exchange.sendRound();
  }

  private async sendRound(): Promise<void> {
    const round = this.round!;
    if (this.phase !== RUNNING) return;
    this.phase = ANSWERED;
    round.abandon(INPUT_REQUIRED);
    this.context?.cancel(INPUT_REQUIRED);
    const request = this.verdict.request;
    const settings = this.serving.inputRounds;
    let requestState: string;
    try {
      requestState = await seal(settings.keyRing, {
        state: round.carried(),
        binding: bindingOf(request),
        ttlMs: settings.ttlMs,
        now: this.clock.now(),
      });
    } catch (error) {
      this.logger.warn(`${request.method}: the requestState could not be sealed`, error);
      this.send({ jsonrpc: '2.0', id: request.id, error: modernError(error) });
      return;
    }
    const result = { resultType: 'input_required', inputRequests: round.inputRequests, requestState };
    this.send({ jsonrpc: '2.0', id: request.id, result: result as unknown as JsonObject });
  }

  private answerResult(value: unknown): void {
    if (!this.finish()) return;
    const request = this.verdict.request;
    const result = (value === undefined || value === null ? {} : value) as JsonObject;
    this.send({
      jsonrpc: '2.0',
      id: request.id,
      result: completeResult(request.method, result, this.definition.cacheHints),
    });
  }

  private answerError(error: unknown): void {
    if (!this.finish()) return;
    if (!(error instanceof Error && 'code' in error && typeof error.code === 'number')) {
      this.logger.debug(`Handler for ${this.verdict.request.method} failed`, error);
    }
    this.send({ jsonrpc: '2.0', id: this.verdict.request.id, error: modernError(error) });
  }

  /** The handler's outcome is the answer, unless the request already got one (a round, or it was aborted). */
  private finish(): boolean {
    if (this.phase !== RUNNING) return false;
    this.phase = ANSWERED;
    this.context?.finish();
    return true;
  }

  private send(message: Parameters<ExchangeReply['answer']>[0]): void {
    const tracing = this.tracing;
    if (tracing) {
      const latency = this.clock.now() - this.startedAt;
      const kind = 'error' in message ? 'error' : 'result';
      tracing.message(kind, 'out', message, this.verdict.request.method, message.id, undefined, latency);
    }
    this.reply.answer(message).catch((error) => this.logger.debug('Could not send a response', error));
  }

  private paramHeaderMismatch(params: JsonObject | undefined, headers: HeaderSource): McpError | undefined {
    const name = params?.name;
    const tool = typeof name === 'string' ? this.definition.tools?.definitionOf(name) : undefined;
    if (tool === undefined) return undefined;
    const verdict = checkParamHeaders(tool, params!.arguments ?? {}, headers);
    return verdict.ok ? undefined : new McpError(verdict.code, verdict.message);
  }

  // ---- the host's side of a handler's calls ---------------------------------------------------------

  /** A handler's ask for input: answered from this request's inputs, or part of an `input_required` round. */
  request(method: string, params?: JsonObject, options?: InputRequestOptions): Promise<JsonObject> {
    this.round ??= new InputRound(this.answers, this.roundsDone, this.peerCapabilities, () => this.scheduleRound());
    return this.round.ask(method, params, options?.key);
  }

  notify(method: string, params?: JsonObject): Promise<void> {
    if (this.phase !== RUNNING) return Promise.resolve();
    const message: JsonRpcNotification =
      params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params };
    this.tracing?.message('notification', 'out', message, method);
    return this.reply.notify(message);
  }

  /** `notifications/message` on this request's stream, only when the request's `_meta` set a level it passes. */
  log(level: LoggingLevel, data: unknown, logger?: string, _relatedRequestId?: RequestId): Promise<void> {
    const minimum = this.logLevel;
    if (minimum === undefined || this.capabilities.logging === undefined) return Promise.resolve();
    if (LOGGING_LEVELS.indexOf(level) < LOGGING_LEVELS.indexOf(minimum)) return Promise.resolve();
    return this.notify('notifications/message', { level, data, ...(logger !== undefined && { logger }) });
  }

  /** A modern request's stream is its own: there is no other to resume it on. */
  streamCloser(): undefined {
    return undefined;
  }

  acceptInitialize(): InitializeResult {
    throw new McpError(ErrorCode.MethodNotFound, 'Method not found: initialize (2026-07-28 has no handshake)');
  }

  setLogLevel(): void {
    throw new McpError(ErrorCode.MethodNotFound, 'Method not found: logging/setLevel (set the level in _meta)');
  }

  listed(list: ListName): void {
    this.serving.listed(list);
  }
}

/**
 * What a sealed state is bound to: the method, its target, its arguments, and who asked (the principal
 * the HTTP endpoint authenticated), so a state minted for one caller is refused for another.
 */
function bindingOf(request: JsonRpcRequest): RequestStateBinding {
  const params = request.params;
  const target = params?.name ?? params?.uri;
  const principal = principalOf(params)?.id;
  return {
    method: request.method,
    target: typeof target === 'string' ? target : '',
    ...(params?.arguments !== undefined && { arguments: params.arguments }),
    ...(principal !== undefined && { principal }),
  };
}

function invalid(message: string): McpError {
  return new McpError(ErrorCode.InvalidParams, `Invalid params: ${message}`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | undefined)?.then === 'function';
}
