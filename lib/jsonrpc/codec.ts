import { ErrorCode } from './errors';
import { FrameError, type InboundFrame } from './types';

/** Default upper bound for one serialized message: 4 MiB (large tool results fit; runaway frames do not). */
export const DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

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

/** Decodes one text frame into a message (or batch), or a `FrameError` value: never throws. */
export function decodeFrame(text: string, maxBytes = DEFAULT_MAX_MESSAGE_BYTES): InboundFrame {
  if (exceedsBytes(text, maxBytes)) {
    return new FrameError(ErrorCode.InvalidRequest, `Message too large: the limit is ${maxBytes} bytes`);
  }
  try {
    return JSON.parse(text) as InboundFrame;
  } catch (error) {
    return new FrameError(ErrorCode.ParseError, `Parse error: ${(error as Error).message}`);
  }
}

/** Compact JSON: never contains a raw newline, so it is safe for line-delimited transports. */
export function encodeFrame(message: unknown): string {
  return JSON.stringify(message);
}
