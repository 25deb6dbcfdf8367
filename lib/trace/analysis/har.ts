/**
 * A trace's requests as a HAR 1.2 log (the HTTP Archive format browsers' developer tools export): one entry
 * per request, its JSON-RPC message as the request's postData and its answer as the response's content.
 * The URL names the lane (`mcp://<upstream, name or connection>/<method>`); a JSON-RPC error keeps status
 * 200 (as Streamable HTTP sends it) with `_error`; a request with no answer has status 0, as a browser
 * records an aborted one. Written in pieces, like otlp.ts.
 */
import type { TraceEvent } from '../types';
import type { Exchange } from './exchanges';

export interface HarWriterOptions {
  readonly creatorVersion?: string;
}

const encoder = new TextEncoder();
const NO_ANSWER = {
  cancelled: 'Cancelled',
  'timed-out': 'Timed out',
  closed: 'Connection closed',
  unanswered: 'No answer',
};

export function harWriter(options: HarWriterOptions = {}) {
  let first = true;
  const creator = { name: 'mcp-switchboard', version: options.creatorVersion ?? '0' };
  return {
    begin: () => `{"log":{"version":"1.2","creator":${JSON.stringify(creator)},"pages":[],"entries":[\n`,
    entry(exchange: Exchange): string {
      const text = JSON.stringify(harEntry(exchange));
      const piece = first ? text : `,\n${text}`;
      first = false;
      return piece;
    },
    end: () => '\n]}}\n',
  };
}

function json(event: TraceEvent | undefined): string {
  return event?.message === undefined ? '' : JSON.stringify(event.message);
}

export function harEntry(exchange: Exchange) {
  const { request, answer, outcome } = exchange;
  const lane = request.upstream ?? request.name ?? request.connection;
  const sent = json(request);
  const received = json(answer);
  const wait = Math.max(0, exchange.latencyMs ?? exchange.end - request.time);
  const error = (answer?.message as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
  const status = answer ? 200 : 0;
  const statusText = answer
    ? error
      ? `JSON-RPC error ${String(error.code)}`
      : 'OK'
    : NO_ANSWER[outcome as keyof typeof NO_ANSWER];
  return {
    startedDateTime: new Date(request.time).toISOString(),
    time: wait,
    request: {
      method: 'POST',
      url: `mcp://${encodeURIComponent(lane)}/${(request.method ?? '').split('/').map(encodeURIComponent).join('/')}`,
      httpVersion: 'JSON-RPC/2.0',
      cookies: [],
      headers: [],
      queryString: [],
      postData: { mimeType: 'application/json', text: sent },
      headersSize: -1,
      bodySize: encoder.encode(sent).length,
    },
    response: {
      status,
      statusText,
      httpVersion: 'JSON-RPC/2.0',
      cookies: [],
      headers: [],
      content: { size: encoder.encode(received).length, mimeType: 'application/json', text: received },
      redirectURL: '',
      headersSize: -1,
      bodySize: answer ? encoder.encode(received).length : -1,
    },
    cache: {},
    timings: { send: 0, wait, receive: 0 },
    _connection: request.connection,
    _direction: request.direction,
    _jsonrpcId: request.id,
    _outcome: outcome,
    ...(error && { _error: error }),
    ...(request.upstream !== undefined && { _upstream: request.upstream }),
    ...(exchange.traceId && { _traceId: exchange.traceId, _spanId: exchange.spanId }),
  };
}
