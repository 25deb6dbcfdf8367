/**
 * A client's calls in the stateless revision (2026-07-28), the `ClientEra` of a connection that found that
 * revision: each request is stamped (`ModernRequestStamp`), retried once on a -32022 naming another revision
 * we speak, and completed through its `input_required` rounds; there is no `ping`, `logging/setLevel` or
 * `notifications/roots/list_changed`; and, since such a server sends no notification outside a request's
 * stream, the list changes the server declares are heard on one background `subscriptions/listen` stream, open
 * while something needs it (lib/client/list-change-stream.ts), and each resource subscription is a listen
 * stream of its own.
 *
 * One per modern connection, made by `connect` once the era is known: a handshake-era client has none, and
 * its requests pay nothing for this module.
 */
import type { Observable } from 'rxjs';
import type { SendOptions } from '../core/connection';
import type { RequestCompletion, RequestOptions } from '../core/correlation';
import type { JsonObject, RequestId } from '../jsonrpc/types';
import { hasCapability } from '../protocol/capabilities';
import { LIST_CHANGES } from '../protocol/list-changes';
import { META } from '../protocol/modern';
import type { LoggingLevel, ResourceUpdatedParams, ServerCapabilities, Tool } from '../protocol/types';
import { ignoreResult, type ClientEra, type ClientEraHost } from './client-era';
import type { EraCache } from './era-cache';
import {
  completeInputRequired,
  inputAnswerer,
  isRetriedResult,
  markRetried,
  needsInput,
  retryParams,
  type InputAnswerer,
} from './input-required';
import { hintedListing, type HintedList, type ResultCacheHints } from './list-cache';
import { fixedListChangesStatus, ListChangeStream, type ListChangesStatus } from './list-change-stream';
import type { ListenFilter, ListenHost } from './listen';
import { isHandshakeEraFailure, type ModernRequestStamp } from './modern-request-stamp';
import { listenedUpdates } from './resource-subscriptions';

/**
 * How a modern client hears that the server's lists changed: `listen` opens one `subscriptions/listen`
 * stream for the lists whose `listChanged` the server declares, while something needs it; `off` opens none.
 */
export type ListChangesChoice = 'listen' | 'off';

export interface ModernClientOptions {
  /** Where the era verdict of this server was cached, to drop it when the server stops being modern. */
  readonly eraCache: EraCache | undefined;
  readonly eraKey: string | undefined;
  readonly maxInputRounds: number | undefined;
}

/** The `ClientEra` of the stateless revision (see the module's comment). */
export class ModernClient implements ClientEra {
  /** Answers `input_required` rounds with the registered features; made on the first round. */
  private answerer: InputAnswerer | undefined;
  /** What `followListChanges` was told (undefined before): whether, and for which capabilities. */
  private listChangeChoice: ListChangesChoice | undefined;
  private listChangeCapabilities: ServerCapabilities | undefined;
  /** Made on the first need for list changes (most clients never have one). */
  private listChanges: ListChangeStream | undefined;
  private stopped = false;

  constructor(
    private readonly requests: ModernRequestStamp,
    private readonly host: ClientEraHost,
    private readonly options: ModernClientOptions,
  ) {}

  /**
   * A request as the caller of `Client.request` sees it: stamped, retried once on -32022, and completed
   * through its `input_required` rounds (lib/client/input-required.ts).
   */
  request(method: string, params: JsonObject | undefined, options: SendOptions | undefined): Promise<JsonObject> {
    const sendOptions = this.sendOptionsFor(method, params, options);
    const sent = this.requests.stamp(params);
    // The call completes its result in the step that settles the request: no promise step of its own.
    const call = new ModernCall(this, method, params, options, sent, sendOptions);
    return this.host.sendAsIs(method, sent, sendOptions, call);
  }

  /** What the caller of `call` gets for `result` of its first request `first`: see `complete`. */
  completeCall(call: ModernCall, result: JsonObject, first: RequestId): Promise<JsonObject> | JsonObject {
    return this.complete(call.method, call.sent, result, call.options, first);
  }

  /** What the caller of `call` gets after `error` of its first request `first`: the one -32022 retry, completed, or `error` again. */
  recoverCall(call: ModernCall, error: Error, first: RequestId): Promise<JsonObject> {
    return this.retryOnce(error, call.method, call.params, call.sendOptions, first).then((retried) =>
      this.complete(call.method, retried.params, retried.result, call.options, first),
    );
  }

  /** The revision has no `ping`: `server/discover` is the round trip that shows the server is there. */
  ping(options: RequestOptions | undefined): Promise<void> {
    return this.host.request('server/discover', undefined, options).then(ignoreResult);
  }

  /** The revision has no `logging/setLevel`: the level travels in each later request's envelope. */
  setLogLevel(level: LoggingLevel): Promise<void> {
    this.requests.setLogLevel(level);
    return Promise.resolve();
  }

  /** The revision has no `notifications/roots/list_changed`: the server asks for the roots in each call that needs them. */
  rootsChanged(): Promise<void> {
    return Promise.resolve();
  }

  /** The tools whose `x-mcp-header` annotations are valid (see `ModernRequestStamp.usableTools`); the others are logged. */
  usableTools(tools: Tool[]): Tool[] {
    return this.requests.usableTools(tools, (tool, problem) =>
      this.host.logger.debug(`Tool ${JSON.stringify(tool.name)} is left out: its ${problem}`),
    );
  }

  /** A listing with its pages' cache hints (`ttlMs`, `cacheScope`: see `ListCache`). */
  listing<T>(list: (hints: ResultCacheHints[]) => Promise<readonly T[]>): Promise<HintedList<T>> {
    return hintedListing(list);
  }

  /** A `subscriptions/listen` stream for `uri` (see `listenedUpdates`). */
  resourceUpdates(uri: string): Observable<ResourceUpdatedParams> {
    return listenedUpdates(this.streamHost(), this.host.serverCapabilities, uri);
  }

  /**
   * Where list changes come from once connected: the lists `capabilities` declare can change, unless
   * `choice` is `off`. The stream is made and opened on the first need (now, if something already needs it);
   * its notifications reach the client like any other (`notifications$`), which is how the list caches hear them.
   */
  followListChanges(capabilities: ServerCapabilities | undefined, choice: ListChangesChoice): void {
    this.listChangeChoice = choice;
    this.listChangeCapabilities = capabilities;
    const needs = this.host.listChangeNeeds ?? 0;
    if (needs > 0) this.needListChanges(needs);
  }

  /** Something needs list changes (`count` things): the stream opens if it can. Undo with `releaseListChanges`. */
  needListChanges(count = 1): void {
    (this.listChanges ??= this.listChangeStream())?.need(count);
  }

  /** One need fewer: the stream closes when nothing needs it any more. */
  releaseListChanges(): void {
    this.listChanges?.release();
  }

  /** Whether list changes are heard, and how or why not. */
  get listChangesStatus(): ListChangesStatus {
    if (this.listChanges) return this.listChanges.status;
    const choice = this.listChangeChoice;
    if (choice === undefined || this.stopped) return fixedListChangesStatus('disconnected');
    if (choice === 'off') return fixedListChangesStatus('off');
    return fixedListChangesStatus(listChangeFilter(this.listChangeCapabilities) ? 'idle' : 'undeclared');
  }

  /** Cancels the stream for good (`close` does, before the transport goes). */
  stop(): void {
    this.stopped = true;
    this.listChanges?.stop();
  }

  /** The stream of the lists the server declares can change; undefined when none or when `off`. */
  private listChangeStream(): ListChangeStream | undefined {
    if (this.listChangeChoice !== 'listen' || this.stopped) return undefined;
    const filter = listChangeFilter(this.listChangeCapabilities);
    if (filter === undefined) return undefined;
    return new ListChangeStream(this.streamHost(), filter, this.host.logger);
  }

  /** The host of a listen stream of this client's own: its reading of notifications needs no list changes. */
  private streamHost(): ListenHost {
    const host = this.host;
    return {
      notifications$: host.serverNotifications$ ?? host.notifications$,
      closed: host.closed,
      request: (method, params, options) => host.request(method, params, options),
      reconnected$: host.reconnected$,
    };
  }

  /** The options of a request: a `tools/call` of a tool with `x-mcp-header` parameters adds their headers. */
  private sendOptionsFor(
    method: string,
    params: JsonObject | undefined,
    options: SendOptions | undefined,
  ): SendOptions | undefined {
    const headers = this.requests.headersFor(method, params);
    return headers === undefined ? options : { ...options, headers: { ...options?.headers, ...headers } };
  }

  /**
   * A round's request of the stateless revision (of the call whose first request is `first`): stamped, retried
   * once on a -32022 naming another revision we speak.
   */
  private send(
    method: string,
    params: JsonObject | undefined,
    options: SendOptions | undefined,
    first: RequestId,
  ): Promise<{ params: JsonObject; result: JsonObject }> {
    const sendOptions = this.sendOptionsFor(method, params, options);
    const sent = this.requests.stamp(params);
    return this.host.sendAsIs(method, sent, sendOptions).then(
      (result) => ({ params: sent, result }),
      (error: unknown) => this.retryOnce(error, method, params, sendOptions, first),
    );
  }

  /**
   * After `error`: the one retry with the revision a -32022 named (its trace names the call's first request,
   * `first`), or `error` again (dropping a stale era verdict).
   */
  private async retryOnce(
    error: unknown,
    method: string,
    params: JsonObject | undefined,
    sendOptions: SendOptions | undefined,
    first: RequestId,
  ): Promise<{ params: JsonObject; result: JsonObject }> {
    const requests = this.requests;
    const retry = requests.retryVersion(error);
    if (retry === undefined) {
      const { eraKey, eraCache } = this.options;
      if (eraKey !== undefined && isHandshakeEraFailure(error)) eraCache?.delete(eraKey);
      throw error;
    }
    this.host.logger.debug(`${method} was refused with -32022: switching to revision ${retry} and retrying once`);
    requests.switchVersion(retry);
    const sent = requests.stamp(params);
    const retryOptions: SendOptions = { ...sendOptions, retryOf: { id: first, kind: 'retry' } };
    return { params: sent, result: await this.host.sendAsIs(method, sent, retryOptions) };
  }

  /**
   * A modern result as the caller gets it: an `input_required` one is answered by the registered sampling,
   * elicitation and roots handlers and the request retried (a new id each round, the server's
   * `requestState` echoed, its trace naming the call's first request `first`), until it completes. Other
   * results pass as they are.
   */
  private complete(
    method: string,
    params: JsonObject,
    result: JsonObject,
    options: SendOptions | undefined,
    first: RequestId,
  ): Promise<JsonObject> | JsonObject {
    if (!needsInput(result, method)) return withoutResultType(result, false);
    const host = this.host;
    return completeInputRequired(result, {
      method,
      answer: (this.answerer ??= inputAnswerer(host.features, host)),
      retry: (sent, signal) =>
        this.send(
          method,
          retryParams(params, sent),
          { ...options, signal, retryOf: { id: first, kind: 'round' } },
          first,
        ).then((retried) => retried.result),
      signal: options?.signal,
      clock: host.clock,
      ...(this.options.maxInputRounds !== undefined && { maxRounds: this.options.maxInputRounds }),
    }).then((completed) => withoutResultType(completed, isRetriedResult(completed)));
  }
}

/** One modern request in flight, as its connection settles it: the `RequestCompletion` of `ModernClient.request`. */
class ModernCall implements RequestCompletion {
  constructor(
    private readonly client: ModernClient,
    readonly method: string,
    /** The caller's params, stamped again for a retry. */
    readonly params: JsonObject | undefined,
    readonly options: SendOptions | undefined,
    readonly sent: JsonObject,
    readonly sendOptions: SendOptions | undefined,
  ) {}

  complete(result: JsonObject, id: RequestId): Promise<JsonObject> | JsonObject {
    return this.client.completeCall(this, result, id);
  }

  recover(error: Error, id: RequestId): Promise<JsonObject> {
    return this.client.recoverCall(this, error, id);
  }
}

/** The filter of the list-change stream for a server declaring `capabilities`; undefined when it declares none. */
export function listChangeFilter(capabilities: ServerCapabilities | undefined): ListenFilter | undefined {
  let filter: { -readonly [K in keyof ListenFilter]: ListenFilter[K] } | undefined;
  for (const { capability, filterField } of LIST_CHANGES) {
    if (hasCapability(capabilities, capability)) (filter ??= {})[filterField] = true;
  }
  return filter;
}

/**
 * A complete result as the caller sees it in either era: `resultType: "complete"` is how the stateless
 * revision frames an answer on the wire, and the server's identity in `_meta` (which the revision asks of
 * every result) is already the client's `serverInfo`: neither is part of what was answered. A result
 * completed by retries stays marked as such (it is never cached).
 */
function withoutResultType(result: JsonObject, retried: boolean): JsonObject {
  if (result.resultType !== 'complete') return result;
  // A key loop: on V8 (Node 20) rest destructuring (`{ resultType, ...answer }`) takes twice as long.
  const answer: JsonObject = {};
  const keys = Object.keys(result);
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index]!;
    if (key === 'resultType') continue;
    if (key === '_meta') {
      const meta = withoutIdentity(result._meta);
      if (meta !== undefined) answer._meta = meta;
      continue;
    }
    // An own "__proto__" member (JSON.parse makes one) stays a member: assigning it would set the prototype.
    if (key === '__proto__') Object.defineProperty(answer, key, { ...OWN_MEMBER, value: result[key] });
    else answer[key] = result[key];
  }
  if (retried) markRetried(answer);
  return answer;
}

/** A result's `_meta` without the server's identity; undefined when nothing else is left. */
function withoutIdentity(meta: unknown): JsonObject | undefined {
  if (typeof meta !== 'object' || meta === null || !(META.serverInfo in meta)) return meta as JsonObject | undefined;
  const rest: JsonObject = {};
  let kept = false;
  for (const key of Object.keys(meta)) {
    if (key === META.serverInfo) continue;
    rest[key] = (meta as JsonObject)[key];
    kept = true;
  }
  return kept ? rest : undefined;
}

const OWN_MEMBER = { enumerable: true, writable: true, configurable: true } as const;
