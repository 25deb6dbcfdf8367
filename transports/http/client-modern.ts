/**
 * The headers of a stateless-revision (2026-07-28) POST. Whether a message is modern is read from the
 * message itself (body-primary, as servers classify it): a request whose `params._meta` claims a protocol
 * version. Such a POST carries no session, the claimed version in `MCP-Protocol-Version`, `Mcp-Method` and
 * `Mcp-Name` (lib/protocol/http-headers.ts), and the `Mcp-Param-*` headers the client passed for it. It
 * has its own abort: closing its response is how the revision cancels a request over HTTP (a cancel posts
 * nothing: there is no session to tell).
 */
import { claimOf } from '../../lib/protocol/envelope';
import { standardHeaders } from '../../lib/protocol/http-headers';
import type { JsonRpcBatch, JsonRpcMessage } from '../../lib/jsonrpc/types';
import type { SessionAuthorization } from './client-authorization';
import type { SentPost } from './client-post';
import { headerList, withAuthorization, type HeaderList, type HttpTarget } from './client-request';

const ACCEPT = 'application/json, text/event-stream';

/**
 * The header list of a modern request's POST, or undefined for any other message (a handshake-era request, a
 * notification, a response, a batch): those go as they always did. Three property reads for them.
 */
export function modernRequestHeaders(
  target: HttpTarget,
  extra: Readonly<Record<string, string>> | undefined,
  message: JsonRpcMessage | JsonRpcBatch,
  perMessage: Readonly<Record<string, string>> | undefined,
): HeaderList | undefined {
  if (Array.isArray(message)) return undefined;
  const claim = claimOf(message as unknown as Record<string, unknown>);
  if (typeof claim !== 'string') return undefined;
  const request = message as { method?: unknown; id?: unknown; params?: unknown };
  if (typeof request.method !== 'string' || request.id === undefined) return undefined;
  const own: Record<string, string> = {
    accept: ACCEPT,
    'content-type': 'application/json',
    'mcp-protocol-version': claim,
  };
  const standard = standardHeaders({ method: request.method, params: request.params });
  for (const name in standard) own[name.toLowerCase()] = standard[name]!;
  for (const name in perMessage) own[name.toLowerCase()] = perMessage[name]!;
  return headerList(target, extra, own);
}

/** POSTs a modern request with its `headers` (from `modernRequestHeaders`), on no session. */
export function postModernRequest(
  authorization: SessionAuthorization,
  target: HttpTarget,
  signal: AbortSignal,
  headers: HeaderList,
  body: string,
): SentPost {
  const own = new AbortController();
  const sentAuthorization = authorization.current();
  const exchange = authorization.send({
    method: 'POST',
    target,
    headers: withAuthorization(headers, sentAuthorization),
    body,
    signal: AbortSignal.any([signal, own.signal]),
  });
  return { exchange, session: undefined, abort: () => own.abort(), authorization: sentAuthorization };
}
