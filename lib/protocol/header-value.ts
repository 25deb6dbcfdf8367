/**
 * The value encoding of the 2026-07-28 Streamable HTTP request headers that mirror body values (`Mcp-Name`,
 * `Mcp-Param-{Name}`), per `basic/transports/streamable-http` "Value Encoding":
 * - a value that is safe as a plain ASCII field value travels as it is;
 * - anything else (non-ASCII, control characters, leading or trailing whitespace, or a plain value that
 *   itself looks like the sentinel) travels as `=?base64?{Base64 of the UTF-8 bytes}?=`.
 * Runtime-neutral: `btoa`/`atob`/`TextEncoder`/`TextDecoder` are globals in Node and in browsers.
 */

const SENTINEL_PREFIX = '=?base64?';
const SENTINEL_SUFFIX = '?=';
const SENTINEL_MIN_LENGTH = SENTINEL_PREFIX.length + SENTINEL_SUFFIX.length;

const SPACE = 0x20;
const TAB = 0x09;
const TILDE = 0x7e;

const utf8Encoder = new TextEncoder();
/** `fatal` refuses bytes that are not UTF-8; `ignoreBOM` keeps a leading U+FEFF the sender meant. */
const utf8Decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** `btoa` takes a "binary string"; building it in slices keeps `String.fromCharCode` off the stack limit. */
const BINARY_CHUNK = 0x8000;

/**
 * True when `value` may be sent as a plain header value: visible ASCII and interior spaces only. A tab is a
 * control character, so it is encoded wherever it is (RFC 9110 would allow an interior one; some
 * intermediaries fold it, and the encoded form is always accepted).
 */
function isPlainSafe(value: string): boolean {
  const last = value.length - 1;
  for (let i = 0; i <= last; i++) {
    const code = value.charCodeAt(i);
    if (code < SPACE || code > TILDE) return false;
    if (code === SPACE && (i === 0 || i === last)) return false;
  }
  return !looksLikeSentinel(value);
}

/** The encoder's test is the wider one (overlapping prefix and suffix count), so nothing ambiguous is sent plain. */
function looksLikeSentinel(value: string): boolean {
  return value.startsWith(SENTINEL_PREFIX) && value.endsWith(SENTINEL_SUFFIX);
}

/** The header form of `value`: as it is when safe, else the `=?base64?…?=` sentinel form. */
export function encodeHeaderValue(value: string): string {
  return isPlainSafe(value) ? value : `${SENTINEL_PREFIX}${base64OfUtf8(value)}${SENTINEL_SUFFIX}`;
}

/**
 * The value a received header carries, or undefined when the header is malformed: a sentinel whose payload
 * is not canonical padded Base64 of UTF-8, or a plain value with characters a field value may not hold.
 * Optional whitespace around the value is not part of it (RFC 9110 §5.5). A value lacking the exact
 * prefix or suffix is a literal. Never throws.
 */
export function decodeHeaderValue(text: string): string | undefined {
  const value = trimOptionalWhitespace(text);
  if (value.length >= SENTINEL_MIN_LENGTH && looksLikeSentinel(value)) {
    return utf8OfBase64(value.slice(SENTINEL_PREFIX.length, value.length - SENTINEL_SUFFIX.length));
  }
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if ((code < SPACE && code !== TAB) || code > TILDE) return undefined;
  }
  return value;
}

/** `text` without the optional whitespace (spaces, tabs) RFC 9110 allows around a field value. */
export function trimOptionalWhitespace(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isOptionalWhitespace(text.charCodeAt(start))) start++;
  while (end > start && isOptionalWhitespace(text.charCodeAt(end - 1))) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

function isOptionalWhitespace(code: number): boolean {
  return code === SPACE || code === TAB;
}

function base64OfUtf8(value: string): string {
  const bytes = utf8Encoder.encode(value);
  let binary = '';
  for (let i = 0; i < bytes.length; i += BINARY_CHUNK) {
    binary += String.fromCharCode(...bytes.subarray(i, i + BINARY_CHUNK));
  }
  return btoa(binary);
}

/** Decodes only canonical, padded Base64 (`atob` alone would accept missing padding and stray bits). */
function utf8OfBase64(payload: string): string | undefined {
  if (!isCanonicalBase64(payload)) return undefined;
  const binary = atob(payload);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  try {
    return utf8Decoder.decode(bytes);
  } catch {
    return undefined;
  }
}

const BASE64_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const BASE64_VALUE: Int8Array = (() => {
  const table = new Int8Array(128).fill(-1);
  for (let i = 0; i < BASE64_ALPHABET.length; i++) table[BASE64_ALPHABET.charCodeAt(i)] = i;
  return table;
})();

function sextetAt(text: string, index: number): number {
  const code = text.charCodeAt(index);
  return code < 128 ? (BASE64_VALUE[code] as number) : -1;
}

/**
 * Whole quads of the standard alphabet, `=` padding only at the end (at most two), and zero bits where the
 * padding leaves some unused, so every byte string has exactly one accepted spelling.
 */
function isCanonicalBase64(payload: string): boolean {
  if (payload.length % 4 !== 0) return false;
  const padding = payload.endsWith('==') ? 2 : payload.endsWith('=') ? 1 : 0;
  const dataLength = payload.length - padding;
  for (let i = 0; i < dataLength; i++) {
    if (sextetAt(payload, i) < 0) return false;
  }
  if (padding === 2) return (sextetAt(payload, dataLength - 1) & 0b1111) === 0;
  if (padding === 1) return (sextetAt(payload, dataLength - 1) & 0b11) === 0;
  return true;
}

/**
 * Received headers, names in lower case: a lookup function, a Fetch `Headers`, or a record such as Node's
 * `IncomingMessage.headers` (passed as it is: nothing is allocated per request).
 */
export type HeaderSource =
  | ((lowerCaseName: string) => string | undefined)
  | { get(name: string): string | null }
  | Readonly<Record<string, string | readonly string[] | undefined>>;

/**
 * The value of header `lowerCaseName` without surrounding optional whitespace. A record is looked up by the
 * lower-case name first, then case-insensitively; a header sent several times reads as its values joined
 * by `, `, as HTTP folds them, so it never equals a single expected value.
 */
export function readHeader(source: HeaderSource | undefined, lowerCaseName: string): string | undefined {
  if (source === undefined) return undefined;
  let raw: string | readonly string[] | null | undefined;
  if (typeof source === 'function') raw = source(lowerCaseName);
  else if (typeof source.get === 'function') raw = (source as { get(name: string): string | null }).get(lowerCaseName);
  else {
    const record = source as Readonly<Record<string, string | readonly string[] | undefined>>;
    raw = Object.hasOwn(record, lowerCaseName) ? record[lowerCaseName] : caseInsensitive(record, lowerCaseName);
  }
  if (raw === undefined || raw === null) return undefined;
  return trimOptionalWhitespace(typeof raw === 'string' ? raw : raw.join(', '));
}

function caseInsensitive(
  record: Readonly<Record<string, string | readonly string[] | undefined>>,
  lowerCaseName: string,
): string | readonly string[] | undefined {
  for (const name of Object.keys(record)) {
    if (name.length === lowerCaseName.length && name.toLowerCase() === lowerCaseName) return record[name];
  }
  return undefined;
}
