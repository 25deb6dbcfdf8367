import { ErrorCode } from './errors';
import { excerpt } from './excerpt';
import type { RequestId } from './types';

/**
 * Structural classification of an inbound value. Plain property checks only: this runs once per message,
 * so it must stay far cheaper than a schema parse (a failing zod guard costs the SDK about 3 µs).
 */
export type MessageKind = 'request' | 'notification' | 'result' | 'error' | 'batch' | 'invalid';

export function isRequestId(value: unknown): value is RequestId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
}

export function classifyMessage(value: unknown): MessageKind {
  if (typeof value !== 'object' || value === null) return 'invalid';
  if (Array.isArray(value)) return 'batch';
  const message = value as Record<string, unknown>;
  if (message.jsonrpc !== '2.0') return 'invalid';
  const method = message.method;
  if (method !== undefined) {
    if (typeof method !== 'string') return 'invalid';
    const id = message.id;
    if (id === undefined) return 'notification';
    return isRequestId(id) ? 'request' : 'invalid';
  }
  if (message.result !== undefined)
    return isRequestId(message.id) && message.error === undefined ? 'result' : 'invalid';
  if (isErrorObject(message.error)) {
    // Error responses may lack an id (the request's id could not be read); a null id is tolerated too.
    return message.id === undefined || message.id === null || isRequestId(message.id) ? 'error' : 'invalid';
  }
  return 'invalid';
}

/** Why `classifyMessage` called a value invalid, and what to do about it. */
export interface InvalidMessage {
  /** The id to answer with (or, for a response, of the request it answers), when readable. */
  readonly id?: RequestId;
  readonly code: number;
  /** Why it was refused; quotes at most a bounded excerpt of the value. */
  readonly message: string;
  /**
   * It looks like a response (no `method`; a `result` or an `error`). JSON-RPC forbids replying to a
   * response, and replying would let two broken peers answer each other's errors forever: a broken
   * response fails the request it names instead, and is otherwise only logged and traced.
   */
  readonly response: boolean;
}

/** For a value `classifyMessage` called invalid: the id (when readable), why it was refused, whether it is a response. */
export function describeInvalid(value: unknown): InvalidMessage {
  if (typeof value !== 'object' || value === null) {
    return {
      code: ErrorCode.InvalidRequest,
      message: `Invalid Request: expected a JSON object, got ${describeType(value)}`,
      response: false,
    };
  }
  const message = value as Record<string, unknown>;
  const id = isRequestId(message.id) ? message.id : undefined;
  const response = message.method === undefined && (message.result !== undefined || message.error !== undefined);
  const refuse = (why: string): InvalidMessage => ({
    id,
    code: ErrorCode.InvalidRequest,
    message: `Invalid ${response ? 'response' : 'Request'}: ${why}`,
    response,
  });
  if (message.jsonrpc !== '2.0')
    return refuse(
      `"jsonrpc" must be "2.0", got ${message.jsonrpc === undefined ? 'nothing' : excerpt(message.jsonrpc)}`,
    );
  if (message.method !== undefined && typeof message.method !== 'string') return refuse('"method" must be a string');
  if (message.method !== undefined) return refuse(`"id" must be a string or a number, got ${describeType(message.id)}`);
  if (message.result !== undefined && message.error !== undefined)
    return refuse('a response carries either "result" or "error", not both');
  if (message.result !== undefined) return refuse('a result response needs a string or number "id"');
  if (message.error !== undefined && !isErrorObject(message.error))
    return refuse('"error" must be an object with a numeric "code" and a string "message"');
  if (message.error !== undefined)
    return refuse(`"id" must be a string, a number or null, got ${describeType(message.id)}`);
  return refuse('not a request, notification or response');
}

function isErrorObject(error: unknown): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    typeof (error as Record<string, unknown>).code === 'number' &&
    typeof (error as Record<string, unknown>).message === 'string'
  );
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value;
}

/** `params` must be an object when present (MCP never uses positional params). */
export function isParamsObject(params: unknown): params is Record<string, unknown> | undefined {
  return params === undefined || isPlainObject(params);
}

/** A JSON object: not null, not an array (what `params`, `_meta`, results and config sections must be). */
export function isPlainObject<T extends object = Record<string, unknown>>(value: unknown): value is T {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
