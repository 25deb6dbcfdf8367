/**
 * base64url without padding (RFC 4648 §5), over bytes, written out because `btoa`/`atob` work on binary
 * strings and Node's `Buffer` is not available in every runtime this module runs in.
 */
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Each ASCII code's value in the alphabet, or -1. */
const VALUES = new Int8Array(128).fill(-1);
for (let index = 0; index < ALPHABET.length; index++) VALUES[ALPHABET.charCodeAt(index)] = index;

export function encodeBase64Url(bytes: Uint8Array): string {
  let text = '';
  let index = 0;
  for (; index + 2 < bytes.length; index += 3) {
    const chunk = (bytes[index]! << 16) | (bytes[index + 1]! << 8) | bytes[index + 2]!;
    text +=
      ALPHABET[chunk >>> 18]! + ALPHABET[(chunk >>> 12) & 63]! + ALPHABET[(chunk >>> 6) & 63]! + ALPHABET[chunk & 63]!;
  }
  const left = bytes.length - index;
  if (left === 1) {
    const chunk = bytes[index]! << 16;
    text += ALPHABET[chunk >>> 18]! + ALPHABET[(chunk >>> 12) & 63]!;
  } else if (left === 2) {
    const chunk = (bytes[index]! << 16) | (bytes[index + 1]! << 8);
    text += ALPHABET[chunk >>> 18]! + ALPHABET[(chunk >>> 12) & 63]! + ALPHABET[(chunk >>> 6) & 63]!;
  }
  return text;
}

/**
 * The bytes `text` encodes, or `undefined` unless it is the one canonical unpadded encoding of them: no
 * character outside the alphabet, no impossible length, and the unused low bits of the last character zero.
 * The last rule matters for signatures: otherwise four different strings decode to the same tag.
 */
export function decodeBase64Url(text: string): Uint8Array<ArrayBuffer> | undefined {
  const remainder = text.length % 4;
  if (remainder === 1) return undefined;
  const bytes = new Uint8Array(Math.floor(text.length / 4) * 3 + (remainder === 0 ? 0 : remainder - 1));
  let buffer = 0;
  let bits = 0;
  let written = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    const value = code < 128 ? VALUES[code]! : -1;
    if (value < 0) return undefined;
    buffer = ((buffer << 6) | value) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes[written++] = (buffer >>> bits) & 0xff;
    }
  }
  if ((buffer & ((1 << bits) - 1)) !== 0) return undefined;
  return bytes;
}
