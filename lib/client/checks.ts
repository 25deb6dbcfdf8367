/** Small helpers shared by the client feature rules (sampling, elicitation, roots). */
import { ErrorCode, McpError } from '../jsonrpc/errors';

export type Fail = (problem: string) => never;

/**
 * How a rule reports a problem: the server's request breaking the protocol is -32602 to the server; the
 * application's own answer breaking the contract is a TypeError (an internal error to the server).
 */
export function faultsOf(method: string): { serverFault: Fail; appFault: Fail } {
  return {
    serverFault: (problem) => {
      throw new McpError(ErrorCode.InvalidParams, `Invalid ${method} request: ${problem}`);
    },
    appFault: (problem) => {
      throw new TypeError(`Invalid ${method} result: ${problem}`);
    },
  };
}

/** How much of a peer's string an error message quotes. */
export const MAX_QUOTED_CHARS = 80;

/** A string as a message quotes it: JSON-quoted, cut to a bounded excerpt (a peer's string may be megabytes). */
export function quote(text: string): string {
  if (text.length <= MAX_QUOTED_CHARS) return JSON.stringify(text);
  return `${JSON.stringify(text.slice(0, MAX_QUOTED_CHARS))}… (${text.length} characters)`;
}

/** Strings as a message lists them: quoted, at most ten, then how many more. */
export function quoteList(values: readonly string[]): string {
  const shown = values.slice(0, 10).map(quote).join(', ');
  return values.length > 10 ? `${shown} and ${values.length - 10} more` : shown;
}

/** A value as a message shows it: `nothing`, `an array`, `"text"`, `42`, `a object`. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return String(value);
  return typeof value === 'string' ? quote(value) : `a ${typeof value}`;
}
