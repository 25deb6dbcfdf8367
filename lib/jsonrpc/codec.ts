import { ErrorCode } from './errors';
import { isRequestId } from './classify';
import { clipText } from './excerpt';
import { UnreadableFrame, type InboundFrame, type RequestId } from './types';

/** Default upper bound for one serialized message: 4 MiB (large tool results fit; runaway frames do not). */
export const DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/**
 * Default bound on how deeply a message may nest objects and arrays (the envelope counts as level 1).
 * 128 is serde_json's recursion limit: far above what MCP messages need (a tool's input schema or a
 * structured result rarely passes 20), far below where recursive code overflows the stack
 * (`JSON.stringify` fails between 2,000 and 10,000 levels, recursive validators sooner).
 */
export const DEFAULT_MAX_DEPTH = 128;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** UTF-8 byte length without encoding when the answer is obvious from the UTF-16 length. */
export function exceedsBytes(text: string, maxBytes: number): boolean {
  if (text.length > maxBytes) return true;
  if (text.length * 3 <= maxBytes) return false;
  return utf8Length(text) > maxBytes;
}

/** UTF-8 length of a string, counted without allocating (this module must not depend on Node's Buffer). */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      bytes += 4; // a surrogate pair is one 4-byte code point
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * Whether JSON `text` nests objects and arrays more than `maxDepth` levels deep. One loop, no recursion,
 * no allocation. Cheap where it cannot be true: nesting `maxDepth + 1` levels takes that many opening and
 * closing brackets, so a shorter text, or one with fewer opening brackets in all (counted with `indexOf`,
 * ~60 ns for a 200-byte message), is answered without the character-by-character scan. Brackets inside
 * strings are skipped by the scan; the result is exact for valid JSON.
 */
export function exceedsDepth(text: string, maxDepth = DEFAULT_MAX_DEPTH): boolean {
  if (text.length < 2 * (maxDepth + 1) || countOpenings(text, maxDepth + 1) <= maxDepth) return false;
  let depth = 0;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const unit = text.charCodeAt(i);
    if (unit === QUOTE) {
      for (i++; i < length; i++) {
        const inner = text.charCodeAt(i);
        if (inner === BACKSLASH) i++;
        else if (inner === QUOTE) break;
      }
    } else if (unit === OPEN_BRACE || unit === OPEN_BRACKET) {
      if (++depth > maxDepth) return true;
    } else if (unit === CLOSE_BRACE || unit === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

/** Opening brackets in `text`, counted up to `stopAt`. */
function countOpenings(text: string, stopAt: number): number {
  let count = 0;
  for (let at = text.indexOf('{'); at !== -1 && count < stopAt; at = text.indexOf('{', at + 1)) count++;
  for (let at = text.indexOf('['); at !== -1 && count < stopAt; at = text.indexOf('[', at + 1)) count++;
  return count;
}

/**
 * Whether a decoded value nests objects and arrays more than `maxDepth` levels deep, walked with an
 * explicit stack (for transports that decode to values, not text: msgpack, structured clone). Stops at
 * the first level too deep.
 */
export function valueExceedsDepth(value: unknown, maxDepth = DEFAULT_MAX_DEPTH): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const values: unknown[] = [value];
  const depths: number[] = [1];
  while (values.length > 0) {
    const current = values.pop() as object;
    const depth = depths.pop()!;
    if (depth > maxDepth) return true;
    const children = Array.isArray(current) ? current : Object.values(current);
    for (const child of children) {
      if (typeof child === 'object' && child !== null) {
        values.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}

/** The refusal of a message nested deeper than `maxDepth`; `message` is the decoded value, to read its id. */
export function tooDeep(message: unknown, maxDepth: number): UnreadableFrame {
  const envelope = typeof message === 'object' && message !== null && !Array.isArray(message) ? message : undefined;
  const fields = envelope as { id?: unknown; method?: unknown; result?: unknown; error?: unknown } | undefined;
  const id: RequestId | undefined = isRequestId(fields?.id) ? fields.id : undefined;
  const response = fields !== undefined && fields.method === undefined && ('result' in fields || 'error' in fields);
  return new UnreadableFrame(
    ErrorCode.InvalidRequest,
    `Invalid Request: the message nests deeper than ${maxDepth} levels`,
    id,
    response,
  );
}

/**
 * Decodes one text frame into a message (or batch), or a `UnreadableFrame` value: never throws. Refused with
 * -32600: a frame over `maxBytes`, or one nesting deeper than `maxDepth` (that refusal carries the
 * message's id when it is readable). Malformed JSON gets -32700.
 */
export function decodeFrame(
  text: string,
  maxBytes = DEFAULT_MAX_MESSAGE_BYTES,
  maxDepth = DEFAULT_MAX_DEPTH,
): InboundFrame {
  if (exceedsBytes(text, maxBytes)) {
    return new UnreadableFrame(ErrorCode.InvalidRequest, `Message too large: the limit is ${maxBytes} bytes`);
  }
  let message: InboundFrame;
  try {
    message = JSON.parse(text) as InboundFrame;
  } catch (error) {
    return new UnreadableFrame(ErrorCode.ParseError, `Parse error: ${clipText((error as Error).message)}`);
  }
  // V8's JSON.parse is iterative, so the depth is checked on text known to be JSON (the scan is then exact).
  return exceedsDepth(text, maxDepth) ? tooDeep(message, maxDepth) : message;
}

/** Compact JSON: never contains a raw newline, so it is safe for line-delimited transports. */
export function encodeFrame(message: unknown): string {
  return JSON.stringify(message);
}
