import { clipText, excerpt } from '../jsonrpc/excerpt';

/**
 * A value from the other side (a tool or prompt name, a URI, an argument name) as an error message or log
 * line shows it: a string as it is, cut to a bounded excerpt; anything else as a bounded JSON excerpt. A peer's
 * string may be megabytes and its value thousands of levels deep (`String` and `JSON.stringify` recurse).
 */
export function peerText(value: unknown): string {
  return typeof value === 'string' ? clipText(value) : excerpt(value);
}
