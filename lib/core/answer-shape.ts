/** How an era writes the answers of a handler run (lib/core/handler-run.ts). */
import { toWireError } from '../jsonrpc/errors';
import type { JsonObject, JsonRpcErrorObject } from '../jsonrpc/types';

/** How an era writes its answers (the stateless revision adds `resultType` and cache hints, and renames codes). */
export interface AnswerShape {
  result(method: string, result: JsonObject): JsonObject;
  error(error: unknown): JsonRpcErrorObject;
}

/** The handshake era's answers: the handler's result as it is, errors by `toWireError`. */
export const HANDSHAKE_ANSWERS: AnswerShape = Object.freeze({
  result: (_method: string, result: JsonObject) => result,
  error: toWireError,
});
