/**
 * What the OpenTelemetry semantic conventions for MCP say a request's span and metrics carry: the span
 * name, the attributes read from the request, and how an outcome is classified (`error.type`,
 * `rpc.response.status_code`). Followed: open-telemetry/semantic-conventions-genai, docs/gen-ai/mcp.md at
 * commit 0393513c908bf895e7b3ec480a2c1eb073c584af (status Development; the MCP conventions moved there
 * from open-telemetry/semantic-conventions after its v1.41, where `@opentelemetry/semantic-conventions`
 * 1.45 marks them deprecated-as-moved under the same names).
 */
import type { Attributes } from '@opentelemetry/api';
import { META } from '../protocol/modern';
import type { RequestOutcome, TracedNetwork, TracedRequest } from './instrumentation';

/** The version of the conventions followed, for docs and for anyone checking what a span means. */
export const MCP_SEMCONV_SOURCE =
  'open-telemetry/semantic-conventions-genai docs/gen-ai/mcp.md @ 0393513c908bf895e7b3ec480a2c1eb073c584af';

/** Where a request names its tool, prompt or resource: the attribute, the param, and whether it is the span name's target. */
const TARGETS: Readonly<Record<string, readonly [attribute: string, param: string, inName: boolean]>> = {
  'tools/call': ['gen_ai.tool.name', 'name', true],
  'prompts/get': ['gen_ai.prompt.name', 'name', true],
  // Resource URIs are high-cardinality: an attribute, never the span name (the conventions' default).
  'resources/read': ['mcp.resource.uri', 'uri', false],
  'resources/subscribe': ['mcp.resource.uri', 'uri', false],
  'resources/unsubscribe': ['mcp.resource.uri', 'uri', false],
};

/** A request's span name and the attributes it shares with its duration metric, and those only its span has. */
export interface RequestAttributes {
  readonly name: string;
  /** Low-cardinality: on the span and on `mcp.{client,server}.operation.duration`. */
  readonly common: Attributes;
  /** On the span only (`jsonrpc.request.id`, `mcp.session.id`, `mcp.resource.uri`, `client.address`, our own). */
  readonly spanOnly: Attributes;
}

export function requestAttributes(request: TracedRequest): RequestAttributes {
  const target = TARGETS[request.method];
  const value = target ? request.params?.[target[1]] : undefined;
  const named = target !== undefined && typeof value === 'string';
  const protocolVersion = request.protocolVersion ?? envelopeVersion(request.params);
  const common: Attributes = {
    'mcp.method.name': request.method,
    ...connectionAttributes({ ...request, protocolVersion }),
  };
  const spanOnly: Attributes = {
    'jsonrpc.request.id': String(request.id),
    'mcp_switchboard.connection': request.connection,
  };
  if (named) (target[2] ? common : spanOnly)[target[0]] = value;
  if (request.method === 'tools/call') common['gen_ai.operation.name'] = 'execute_tool';
  if (request.sessionId !== undefined) spanOnly['mcp.session.id'] = request.sessionId;
  clientAttributes(request, spanOnly);
  if (request.upstream !== undefined) spanOnly['mcp_switchboard.upstream'] = request.upstream;
  return { name: named && target[2] ? `${request.method} ${value}` : request.method, common, spanOnly };
}

/**
 * A stateless-revision request's own claim (its connection has no negotiated version): only a date-named
 * one, so a peer cannot grow the metric's attribute values with whatever string it sends.
 */
function envelopeVersion(params: TracedRequest['params']): string | undefined {
  const meta = params?._meta;
  const claim =
    typeof meta === 'object' && meta !== null ? (meta as Record<string, unknown>)[META.protocolVersion] : undefined;
  return typeof claim === 'string' && DATE_NAMED.test(claim) ? claim : undefined;
}

const DATE_NAMED = /^\d{4}-\d{2}-\d{2}$/;

/**
 * What a connection's requests and session share on their metrics: the MCP revision, the network and, seen
 * from a client, the server's address (low-cardinality). The conventions' server-side metrics name no client
 * address: a client's port is new for every connection (`clientAttributes`, on spans only).
 */
export function connectionAttributes(
  connection: Pick<TracedRequest, 'role' | 'protocolVersion' | 'network'>,
): Attributes {
  const attributes: Attributes = {};
  if (connection.protocolVersion !== undefined) attributes['mcp.protocol.version'] = connection.protocolVersion;
  const network = connection.network;
  if (network === undefined) return attributes;
  if (network.transport !== undefined) attributes['network.transport'] = network.transport;
  if (network.protocolName !== undefined) attributes['network.protocol.name'] = network.protocolName;
  if (network.protocolVersion !== undefined) attributes['network.protocol.version'] = network.protocolVersion;
  if (connection.role === 'client') addPeer(attributes, 'server', network);
  return attributes;
}

/** A server connection's peer (`client.address`, `client.port`): span attributes. */
export function clientAttributes(connection: Pick<TracedRequest, 'role' | 'network'>, attributes: Attributes): void {
  if (connection.role === 'server' && connection.network) addPeer(attributes, 'client', connection.network);
}

function addPeer(attributes: Attributes, peer: 'server' | 'client', network: TracedNetwork): void {
  if (network.peerAddress === undefined) return;
  attributes[`${peer}.address`] = network.peerAddress;
  if (network.peerPort !== undefined) attributes[`${peer}.port`] = network.peerPort;
}

/** How a request ended, as the conventions classify it. */
export type Classified =
  | { readonly kind: 'ok' }
  | { readonly kind: 'cancelled'; readonly reason: string | undefined }
  /** `statusCode`: the JSON-RPC error code, when the peer (or we) answered with one. */
  | { readonly kind: 'failed'; readonly errorType: string; readonly statusCode?: string; readonly message: string };

/**
 * A result with `isError: true` is a `tool_error`; a JSON-RPC error (`McpError` or the wire error object: a
 * numeric `code`) is its code; a timeout is `timeout`; another local failure is its error class's name. Read
 * by the errors' stable `code`s rather than `instanceof`, which separate bundles of this module would defeat.
 */
export function classifyOutcome(outcome: RequestOutcome): Classified {
  if (outcome.kind === 'result') {
    if ((outcome.result as { isError?: unknown } | undefined)?.isError !== true) return { kind: 'ok' };
    return { kind: 'failed', errorType: 'tool_error', message: 'The tool reported an error' };
  }
  const { error } = outcome;
  const { code, message, reason } = (error ?? {}) as { code?: unknown; message?: unknown; reason?: unknown };
  if (code === 'REQUEST_CANCELLED')
    return { kind: 'cancelled', reason: typeof reason === 'string' ? reason : undefined };
  if (typeof code === 'number')
    return { kind: 'failed', errorType: String(code), statusCode: String(code), message: String(message) };
  const text = error instanceof Error ? error.message : String(error);
  if (code === 'REQUEST_TIMEOUT') return { kind: 'failed', errorType: 'timeout', message: text };
  return { kind: 'failed', errorType: error instanceof Error ? error.name : '_OTHER', message: text };
}

/** What a classified outcome adds to the duration metric's attributes (a cancellation is `cancelled`). */
export function outcomeMetricAttributes(classified: Classified): Attributes | undefined {
  if (classified.kind === 'ok') return undefined;
  if (classified.kind === 'cancelled') return { 'error.type': 'cancelled' };
  const attributes: Attributes = { 'error.type': classified.errorType };
  if (classified.statusCode !== undefined) attributes['rpc.response.status_code'] = classified.statusCode;
  return attributes;
}
