/**
 * Reading the HTTP headers the 2026-07-28 revision mirrors from the body (`MCP-Protocol-Version`,
 * `Mcp-Method`, `Mcp-Name`, later `Mcp-Param-*`), without tying the protocol layer to a runtime: no Node
 * imports, only the `atob` and `TextDecoder` globals every runtime has.
 */

/**
 * Where header values come from, names in lower case: a lookup function, or a record such as Node's
 * `IncomingMessage.headers` (passing that record as is costs no allocation per request).
 */
export type HeaderSource =
  | ((lowerCaseName: string) => string | undefined)
  | Readonly<Record<string, string | readonly string[] | undefined>>;

/** True for RFC 9110 optional whitespace: space and horizontal tab. */
const isOws = (code: number) => code === 0x20 || code === 0x09;

/**
 * The value of header `lowerCaseName`, without surrounding optional whitespace (HTTP parsers strip it; a
 * hand-built source might not). A header sent several times reads as its values joined by `, `, as HTTP
 * folds them, so it never equals a single expected value.
 */
export function readHeader(source: HeaderSource | undefined, lowerCaseName: string): string | undefined {
  if (source === undefined) return undefined;
  const raw = typeof source === 'function' ? source(lowerCaseName) : source[lowerCaseName];
  if (raw === undefined) return undefined;
  const value = typeof raw === 'string' ? raw : raw.join(', ');
  if (value.length === 0 || (!isOws(value.charCodeAt(0)) && !isOws(value.charCodeAt(value.length - 1)))) return value;
  let start = 0;
  let end = value.length;
  while (start < end && isOws(value.charCodeAt(start))) start++;
  while (end > start && isOws(value.charCodeAt(end - 1))) end--;
  return value.slice(start, end);
}

const SENTINEL_PREFIX = '=?base64?';
const SENTINEL_SUFFIX = '?=';
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The value a mirrored header stands for: the header itself, or, for the `=?base64?…?=` form a client uses
 * for values that are not header-safe (non-ASCII, control characters, surrounding whitespace), the UTF-8 text
 * it encodes. Undefined when the encoded form is malformed (not base64, or not UTF-8).
 */
export function decodeHeaderValue(header: string): string | undefined {
  if (!header.startsWith(SENTINEL_PREFIX) || !header.endsWith(SENTINEL_SUFFIX)) return header;
  if (header.length < SENTINEL_PREFIX.length + SENTINEL_SUFFIX.length) return undefined;
  const encoded = header.slice(SENTINEL_PREFIX.length, header.length - SENTINEL_SUFFIX.length);
  if (!BASE64.test(encoded)) return undefined;
  const binary = atob(encoded);
  const bytes = new Uint8Array(binary.length);
  for (let index = 0; index < binary.length; index++) bytes[index] = binary.charCodeAt(index);
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}
