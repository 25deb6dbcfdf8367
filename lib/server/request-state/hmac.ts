/**
 * HMAC-SHA256 under one ring key. Where the runtime has `node:crypto` (Node, Bun, Deno's Node layer; found
 * through `process.getBuiltinModule`, so nothing is imported and the module stays runtime-neutral), a
 * `KeyObject` signs synchronously in about 2.5 µs and tags compare with `timingSafeEqual`; elsewhere
 * WebCrypto does it, asynchronously, in about 30 µs. A round of input requests signs and verifies four
 * times, so on Node this is most of what sealing costs.
 */

import { nodeCrypto } from '../../core/node-builtins';

export interface HmacKey {
  sign(text: string): Uint8Array | Promise<Uint8Array>;
  /** Constant-time: the comparison takes as long whichever byte differs. */
  verify(tag: Uint8Array, text: string): boolean | Promise<boolean>;
}

const encoder = new TextEncoder();

/** An HMAC key over `secret` (a copy the caller owns). */
export function hmacKey(secret: Uint8Array<ArrayBuffer>): HmacKey {
  return nodeHmacKey(secret) ?? webCryptoHmacKey(secret);
}

/** The `node:crypto` key, or undefined where the runtime has no `node:crypto`. */
export function nodeHmacKey(secret: Uint8Array): HmacKey | undefined {
  const crypto = nodeCrypto();
  if (crypto === undefined) return undefined;
  const key = crypto.createSecretKey(secret);
  const sign = (text: string) => crypto.createHmac('sha256', key).update(text).digest();
  return {
    sign,
    verify: (tag, text) => {
      const expected = sign(text);
      return tag.length === expected.length && crypto.timingSafeEqual(tag, expected);
    },
  };
}

export function webCryptoHmacKey(secret: Uint8Array<ArrayBuffer>): HmacKey {
  const key = globalThis.crypto.subtle.importKey('raw', secret, { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
    'verify',
  ]);
  // Awaited when the key is used; this keeps a failed import of an unused key from being an unhandled rejection.
  key.catch(() => undefined);
  return {
    sign: async (text) => new Uint8Array(await globalThis.crypto.subtle.sign('HMAC', await key, encoder.encode(text))),
    verify: async (tag, text) =>
      globalThis.crypto.subtle.verify('HMAC', await key, tag as Uint8Array<ArrayBuffer>, encoder.encode(text)),
  };
}
