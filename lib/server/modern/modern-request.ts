/**
 * One stateless (2026-07-28) request as its handler sees it: no session, no handshake, only the request's
 * own envelope (`_meta`) and the stream back to the requester. It is the handler's host, as a connection
 * is on a handshake-era session, so every handler runs unchanged: `ctx.progress`, `ctx.log` and
 * `ctx.notify` go to this request's stream, and `ctx.elicit`, `ctx.createMessage`, `ctx.listRoots` become
 * an `input_required` round (input-round.ts) with a sealed `requestState` (request-state/). The handler
 * itself runs through the one handler run of both eras (lib/core/handler-run.ts).
 */
import { onLaterTurn } from '../../core/microtask';
import { isPlainObject } from '../../jsonrpc/classify';
import type { Clock } from '../../core/clock';
import type { ConnectionTrace } from '../../core/connection-trace';
import type { AnswerShape } from '../../core/answer-shape';
import { answerError, replyTo, runHandler, type RequestHandler, type RunChannel } from '../../core/handler-run';
import type { Logger } from '../../core/logger';
import { principalOf, type InputRequestOptions, type RequestContext } from '../../core/request-context';
import type { Runtime } from '../../core/runtime';
import { invalidParams, McpError } from '../../jsonrpc/errors';
import type { JsonObject, JsonRpcNotification, JsonRpcRequest, RequestId } from '../../jsonrpc/types';
import type { ModernRequestVerdict } from '../../protocol/era';
import { checkParamHeaders, type HeaderSource } from '../../protocol/http-headers';
import {
  LOGGING_LEVELS,
  type ClientCapabilities,
  type Implementation,
  type LoggingLevel,
  type ServerCapabilities,
} from '../../protocol/types';
import type { ListName, StatelessRequestHost } from '../context';
import type { ServerDefinition } from '../definition';
import type { ServedDefinition } from '../handler-host';
import type { ListenHost, ListenStreams } from '../listen';
import { open, seal, type KeyRing, type RequestStateBinding } from '../request-state';
import { answersOf, carriedOf, InputRound } from './input-round';
import type { ServerTasks } from '../tasks/server-tasks';
import { completeResult, identityMeta, modernError } from './results';

/** How input rounds are sealed and bounded. */
export interface InputRoundSettings {
  readonly keyRing: KeyRing;
  /** How long a sealed `requestState` is accepted (default 10 minutes). */
  readonly ttlMs?: number;
  /** `input_required` answers one request may get before it fails (default `DEFAULT_MAX_INPUT_ROUNDS`). */
  readonly maxRounds?: number;
}

export const DEFAULT_MAX_INPUT_ROUNDS = 8;

/** What a stateless request needs of the server that serves it. */
export interface ModernServing {
  /** Where the requests' trace events go (the runtime's stream). */
  readonly runtime: Runtime;
  readonly definition: ServerDefinition;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly inputRounds: InputRoundSettings;
  /** The revisions `server/discover` names. */
  readonly modernVersions: readonly string[];
  readonly listenStreams: ListenStreams;
  /** A list handler is about to answer. */
  listed(list: ListName): void;
  /** The server's tasks, when it serves any. */
  readonly tasks: ServerTasks | undefined;
}

/** Where a stateless request's notifications go before its answer: its own HTTP response, or its connection. */
export interface RequestStream {
  notify(message: JsonRpcNotification, relatedRequestId: RequestId): Promise<void>;
}

/** What a stateless request's handler finds as its `context.connection`. */
export interface ModernHost extends StatelessRequestHost, ServedDefinition, ListenHost {
  readonly era: 'modern';
  readonly protocolVersion: string;
  /** The revisions `server/discover` names. */
  readonly modernVersions: readonly string[];
}

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

export class ModernRequest implements ModernHost, AnswerShape {
  readonly definition: ServerDefinition;
  private context: RequestContext<ModernHost> | undefined;
  private channel: RunChannel | undefined;
  /** What the handler's asks are answered from, and the rounds already gone by: the round opens on the first ask. */
  private inputs: Readonly<Record<string, unknown>> | undefined;
  private roundsDone = 0;
  /** Opened by the handler's first ask: most calls ask for nothing. */
  private round: InputRound | undefined;

  constructor(
    private readonly serving: ModernServing,
    private readonly verdict: ModernRequestVerdict,
    private readonly stream: RequestStream,
    /** Where this request's own notifications are traced, when its stream does not trace them (HTTP). */
    private readonly tracing: ConnectionTrace | undefined,
    /** The connection whose trace events carry this request, when it came on one (stdio, WebSocket, memory). */
    private readonly connectionId?: string,
  ) {
    // One definition for the whole request, even if the server's changes meanwhile.
    this.definition = serving.definition;
  }

  // ---- what handlers read (constants as getters: a request's host stays a small object) -------------

  get role(): 'server' {
    return 'server';
  }

  get era(): 'modern' {
    return 'modern';
  }

  get supportsProgressMessage(): boolean {
    return true;
  }

  get clock(): Clock {
    return this.serving.clock;
  }

  get logger(): Logger {
    return this.serving.logger;
  }

  get listenStreams(): ListenStreams {
    return this.serving.listenStreams;
  }

  get tasks(): ServerTasks | undefined {
    return this.serving.tasks;
  }

  /** The id this request's trace events carry as their connection: its own (HTTP), or its connection's. */
  get traceOrigin(): string | undefined {
    return this.tracing?.originId ?? this.connectionId;
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
    return this.definition.capabilitiesAt(this.verdict.version);
  }

  /** The level the request's `_meta` asked for: no log message is sent without one. */
  get logLevel(): LoggingLevel | undefined {
    return this.verdict.meta.logLevel as LoggingLevel | undefined;
  }

  /** This request's answers are the revision's: `resultType`, cache hints, its error codes (`AnswerShape`). */
  get answers(): AnswerShape {
    return this;
  }

  // ---- serving -----------------------------------------------------------------------------------

  /**
   * Runs `handler` for the request of `context` (whose host is this request), answering through `channel`;
   * `headers` (HTTP) are checked against the tool's `x-mcp-header` params first.
   */
  serve(
    context: RequestContext<ModernHost>,
    channel: RunChannel,
    handler: RequestHandler<ModernHost>,
    headers: HeaderSource | undefined,
  ): void {
    this.context = context;
    this.channel = channel;
    const request = this.verdict.request;
    const params = request.params;
    if (headers !== undefined && request.method === 'tools/call') {
      const mismatch = this.paramHeaderMismatch(params, headers);
      if (mismatch) return answerError(channel, context, mismatch);
    }
    const inputResponses = params?.inputResponses;
    if (inputResponses !== undefined && !isPlainObject(inputResponses)) {
      return answerError(channel, context, invalidParams('"inputResponses" must be an object of answers by key'));
    }
    const requestState = params?.requestState;
    if (requestState === undefined) return this.run(handler, inputResponses, 0);
    if (typeof requestState !== 'string')
      return answerError(channel, context, invalidParams('"requestState" must be a string'));
    open(this.serving.inputRounds.keyRing, requestState, bindingOf(request), this.clock.now()).then(
      (opened) => {
        const carried = opened.ok ? carriedOf(opened.state) : undefined;
        if (carried === undefined) {
          this.logger.debug(`${request.method}: requestState refused (${opened.ok ? 'not ours' : opened.reason})`);
          return answerError(channel, context, invalidParams('"requestState" is not valid for this request'));
        }
        this.run(handler, answersOf(carried, inputResponses), carried.round);
      },
      (error: unknown) => answerError(channel, context, error),
    );
  }

  private run(
    handler: RequestHandler<ModernHost>,
    answers: Readonly<Record<string, unknown>> | undefined,
    round: number,
  ): void {
    const context = this.context!;
    const maxRounds = this.serving.inputRounds.maxRounds ?? DEFAULT_MAX_INPUT_ROUNDS;
    if (round > maxRounds) {
      return answerError(
        this.channel!,
        context,
        invalidParams(`the request went through ${round} input rounds; the limit is ${maxRounds}`),
      );
    }
    // The requester went away while the requestState was opened: the run ends unanswered.
    if (context.done) return answerError(this.channel!, context, context.cancelReason);
    this.inputs = answers;
    this.roundsDone = round;
    runHandler(this.channel!, context, handler);
  }

  // ---- how its answers look (AnswerShape) ------------------------------------------------------------

  result(method: string, result: JsonObject): JsonObject {
    const definition = this.definition;
    return completeResult(method, result, definition.cacheHints, identityMeta(definition.info, this.verdict.version));
  }

  error(error: unknown) {
    return modernError(error);
  }

  // ---- input rounds ------------------------------------------------------------------------------

  /**
   * The first ask without an answer: the round goes out once the handler had the chance to ask for more
   * at once (`Promise.all` of several asks): on the next macrotask, after the microtasks now queued. Not a
   * 0 ms timer: Node holds those for at least 1 ms, which was most of a round's latency.
   */
  private scheduleRound(): void {
    // A static callback with the request as its argument: no closure (under tsx, a named one) per round.
    onLaterTurn(ModernRequest.sendRoundOf, this);
  }

  private static sendRoundOf(request: ModernRequest): void {
    void request.sendRound();
  }

  /** Answers with the round instead of the handler's outcome: the handler's run ends (its asks reject). */
  private async sendRound(): Promise<void> {
    const context = this.context!;
    const channel = this.channel!;
    if (context.done) return;
    this.round!.abandon(INPUT_REQUIRED);
    context.cancel(INPUT_REQUIRED);
    if (!channel.release(context)) return;
    const request = this.verdict.request;
    const settings = this.serving.inputRounds;
    let requestState: string;
    try {
      requestState = await seal(settings.keyRing, {
        state: this.round!.carried(),
        binding: bindingOf(request),
        ttlMs: settings.ttlMs,
        now: this.clock.now(),
      });
    } catch (error) {
      this.logger.warn(`${request.method}: the requestState could not be sealed`, error);
      return replyTo(channel, context, { jsonrpc: '2.0', id: request.id, error: modernError(error) });
    }
    const result = { resultType: 'input_required', inputRequests: this.round!.inputRequests, requestState };
    replyTo(channel, context, { jsonrpc: '2.0', id: request.id, result: result as unknown as JsonObject });
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
    this.round ??= new InputRound(this.inputs, this.roundsDone, this.peerCapabilities, () => this.scheduleRound());
    return this.round.ask(method, params, options?.key);
  }

  notify(method: string, params?: JsonObject): Promise<void> {
    const context = this.context;
    if (context === undefined || context.done) return Promise.resolve();
    const message: JsonRpcNotification =
      params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params };
    this.tracing?.message('notification', 'out', message, method);
    return this.stream.notify(message, context.id);
  }

  /** `notifications/message` on this request's stream, only when the request's `_meta` set a level it passes. */
  log(level: LoggingLevel, data: unknown, logger?: string, _relatedRequestId?: RequestId): Promise<void> {
    const minimum = this.logLevel;
    if (minimum === undefined || this.capabilities.logging === undefined) return Promise.resolve();
    if (LOGGING_LEVELS.indexOf(level) < LOGGING_LEVELS.indexOf(minimum)) return Promise.resolve();
    return this.notify('notifications/message', { level, data, ...(logger !== undefined && { logger }) });
  }

  /** A stateless request's stream is its own: there is no other to resume it on. */
  streamCloser(): undefined {
    return undefined;
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
