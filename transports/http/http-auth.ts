/**
 * The `auth` option applied to HTTP requests (lib/auth/server decides; this writes the answers): the
 * metadata document at its well-known path, 401/400/503 for a request whose token is missing or refused, 403
 * for a call whose principal lacks the scopes it needs, and the principal attached to each authenticated
 * request's params, where its handler's `ctx.auth` finds it. Only built when the endpoint has `auth`: an
 * endpoint without it pays one branch per request.
 */
import { byteLength, type ServerReply, type ServerRequest } from './server-port';
import {
  ResourceServer,
  type AuthOutcome,
  type AuthRefusal,
  type ResourceServerOptions,
} from '../../lib/auth/server/resource-server';
import type { ScopeRequirements } from '../../lib/auth/server/scopes';
import { attachPrincipal, type Principal } from '../../lib/core/request-context';
import type { Logger } from '../../lib/core/logger';
import { classifyMessage } from '../../lib/jsonrpc/classify';
import { methodTarget } from '../../lib/protocol/method-targets';
import type { JsonRpcBatch, JsonRpcMessage, JsonRpcRequest, RequestId } from '../../lib/jsonrpc/types';
import { refuseWithHeaders, requestPath } from './request-guard';

/** The `auth` option: its settings, or a `ResourceServer` made from them (to share one between endpoints). */
export type HttpAuthOption = ResourceServerOptions | ResourceServer;

export function resourceServerOf(auth: HttpAuthOption | undefined): ResourceServer | undefined {
  if (auth === undefined) return undefined;
  return auth instanceof ResourceServer ? auth : new ResourceServer(auth);
}

const METADATA_HEADERS = {
  'content-type': 'application/json',
  'cache-control': 'max-age=3600',
  'access-control-allow-origin': '*',
};

/** The endpoint's side of a `ResourceServer`. */
export class HttpAuth {
  private readonly metadataBody: string;

  constructor(
    readonly server: ResourceServer,
    private readonly logger: Logger,
  ) {
    this.metadataBody = JSON.stringify(server.metadata);
  }

  /** Whether `request` asks for the metadata document (served without a token). */
  isMetadataRequest(request: ServerRequest): boolean {
    return this.server.metadataPaths.includes(requestPath(request));
  }

  /** Answers a request for the metadata document: public JSON any origin may read. */
  serveMetadata(request: ServerRequest, response: ServerReply): void {
    switch (request.method) {
      case 'GET':
      case 'HEAD':
        response.writeHead(200, { ...METADATA_HEADERS, 'content-length': byteLength(this.metadataBody) });
        return void response.end(request.method === 'GET' ? this.metadataBody : undefined);
      case 'OPTIONS':
        return void response
          .writeHead(204, { 'access-control-allow-origin': '*', 'access-control-allow-methods': 'GET, HEAD, OPTIONS' })
          .end();
      default:
        response.setHeader('allow', 'GET, HEAD, OPTIONS');
        return void response.writeHead(405).end();
    }
  }

  /**
   * The principal of the request's access token (Bearer, or DPoP with its proof), or undefined once the
   * request was refused (answered here, its body unread: the connection closes). Synchronous when a Bearer
   * token's verdict is cached.
   */
  authenticate(request: ServerRequest, response: ServerReply): Principal | undefined | Promise<Principal | undefined> {
    const { authorization, dpop } = credentialHeaders(request.rawHeaders);
    const outcome = this.server.authenticate({
      authorization,
      dpop,
      tokenInQuery: hasQueryToken(request),
      method: request.method ?? 'GET',
      path: requestPath(request),
    });
    return outcome instanceof Promise
      ? outcome.then((settled) => this.decided(settled, response))
      : this.decided(outcome, response);
  }

  private decided(outcome: AuthOutcome, response: ServerReply): Principal | undefined {
    if (outcome.ok) return outcome.principal;
    const { refusal } = outcome;
    if (refusal.cause !== undefined) this.logger.warn(`auth: ${refusal.message}`, refusal.cause);
    refuse(response, refusal, true);
    return undefined;
  }

  /**
   * Refuses a POST whose body names a call `principal` lacks the scopes for (403 `insufficient_scope`,
   * answering the call's id); true when it did. Which requests name items is the method table's say
   * (`METHOD_TARGETS`, both eras); `requirements` says what each item needs.
   */
  refuseScope(
    body: JsonRpcMessage | JsonRpcBatch,
    principal: Principal,
    requirements: ScopeRequirements | undefined,
    response: ServerReply,
  ): boolean {
    if (!requirements) return false;
    for (const message of Array.isArray(body) ? body : [body]) {
      if (!isTargeted(message)) continue;
      const needed = requirements.requiredScopes(message.method, message.params);
      const refusal = this.server.insufficientScope(principal, needed);
      if (refusal) {
        refuse(response, refusal, false, message.id);
        return true;
      }
    }
    return false;
  }
}

/**
 * `body` with `principal` attached to each request's params (a request without params gets an empty
 * object, a copy of the message: the principal needs an object to travel with).
 */
export function withPrincipal(
  body: JsonRpcMessage | JsonRpcBatch,
  principal: Principal,
): JsonRpcMessage | JsonRpcBatch {
  if (Array.isArray(body)) return body.map((message) => attachTo(message, principal));
  return attachTo(body as JsonRpcMessage, principal);
}

function attachTo(message: JsonRpcMessage, principal: Principal): JsonRpcMessage {
  if (classifyMessage(message) !== 'request') return message;
  const request = message as JsonRpcRequest;
  const params = request.params;
  if (typeof params === 'object' && params !== null) {
    attachPrincipal(params, principal);
    return message;
  }
  if (params !== undefined) return message; // refused as it is, further on
  const withParams = { ...request, params: {} };
  attachPrincipal(withParams.params, principal);
  return withParams;
}

/** A request whose items may need scopes of their own (a tool, a prompt, a resource: see `METHOD_TARGETS`). */
function isTargeted(message: JsonRpcMessage): message is JsonRpcRequest {
  return 'method' in message && 'id' in message && methodTarget(message.method)?.guard === 'item';
}

/**
 * Each `Authorization` and `DPoP` header as sent: `request.headers` keeps only the first Authorization, and
 * a second one must be refused. One pass over the raw headers (`headersDistinct` would build every header's
 * list, several microseconds on each request).
 */
function credentialHeaders(raw: readonly string[]): { authorization?: string[]; dpop?: string[] } {
  let authorization: string[] | undefined;
  let dpop: string[] | undefined;
  for (let index = 0; index < raw.length; index += 2) {
    const name = raw[index]!;
    if (name.length === 13 && name.toLowerCase() === 'authorization') (authorization ??= []).push(raw[index + 1]!);
    else if (name.length === 4 && name.toLowerCase() === 'dpop') (dpop ??= []).push(raw[index + 1]!);
  }
  return { authorization, dpop };
}

function hasQueryToken(request: ServerRequest): boolean {
  const url = request.url ?? '';
  const query = url.indexOf('?');
  return query !== -1 && new URLSearchParams(url.slice(query + 1)).has('access_token');
}

function refuse(response: ServerReply, refusal: AuthRefusal, close: boolean, id?: RequestId): void {
  const headers = refusal.challenge === undefined ? [] : ['www-authenticate', refusal.challenge];
  if (refusal.dpopNonce !== undefined) headers.push('dpop-nonce', refusal.dpopNonce);
  refuseWithHeaders(response, refusal.status, refusal.message, headers, close, id);
}
