import { ErrorCode } from './errors';
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
  if (message.result !== undefined) return isRequestId(message.id) ? 'result' : 'invalid';
  const error = message.error as Record<string, unknown> | undefined;
  if (
    typeof error === 'object' &&
    error !== null &&
    typeof error.code === 'number' &&
    typeof error.message === 'string'
  ) {
    // Error responses may lack an id (the request's id could not be read); a null id is tolerated too.
    return message.id === undefined || message.id === null || isRequestId(message.id) ? 'error' : 'invalid';
  }
  return 'invalid';
}

/** For a value `classifyMessage` called invalid: the id to answer with (when readable) and why it was refused. */
export function describeInvalid(value: unknown): { id?: RequestId; code: number; message: string } {
  if (typeof value !== 'object' || value === null) {
    return {
      code: ErrorCode.InvalidRequest,
      message: `Invalid Request: expected a JSON object, got ${describeType(value)}`,
    };
  }
  const message = value as Record<string, unknown>;
  const id = isRequestId(message.id) ? message.id : undefined;
  const refuse = (why: string) => ({ id, code: ErrorCode.InvalidRequest, message: `Invalid Request: ${why}` });
  if (message.jsonrpc !== '2.0')
    return refuse(`"jsonrpc" must be "2.0", got ${JSON.stringify(message.jsonrpc) ?? 'nothing'}`);
  if (message.method !== undefined && typeof message.method !== 'string') return refuse('"method" must be a string');
  if (message.method !== undefined) return refuse(`"id" must be a string or a number, got ${describeType(message.id)}`);
  if (message.result !== undefined) return refuse('a result response needs a string or number "id"');
  if (message.error !== undefined)
    return refuse('"error" must be an object with a numeric "code" and a string "message"');
  return refuse('not a request, notification or response');
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value;
}

/** `params` must be an object when present (MCP never uses positional params). */
export function isParamsObject(params: unknown): params is Record<string, unknown> | undefined {
  return params === undefined || (typeof params === 'object' && params !== null && !Array.isArray(params));
}
