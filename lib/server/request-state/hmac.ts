/**
 * HMAC-SHA256 under one ring key. Where the runtime has `node:crypto` (Node, Bun, Deno's Node layer; found
 * through `process.getBuiltinModule`, so nothing is imported and the module stays runtime-neutral), a
 * tag is made synchronously (`oneShotHmac`, or `createHmac` before Node 20.12) and tags compare with
 * `timingSafeEqual`; elsewhere WebCrypto does it, asynchronously, in about 30 µs. A round of input requests
 * signs once and verifies once.
 */

import { nodeCrypto, type NodeCrypto } from '../../core/node-builtins';

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
  const sign = oneShotHmac(crypto, secret) ?? hmacObjectSigner(crypto, secret);
  return {
    sign,
    verify: (tag, text) => {
      const expected = sign(text);
      return tag.length === expected.length && crypto.timingSafeEqual(tag, expected);
    },
  };
}

/** HMAC-SHA256 with `createHmac`: a stream object per tag. */
function hmacObjectSigner(crypto: NodeCrypto, secret: Uint8Array): (text: string) => Uint8Array {
  const key = crypto.createSecretKey(secret);
  return (text) => crypto.createHmac('sha256', key).update(text).digest();
}

const BLOCK_BYTES = 64;
const DIGEST_BYTES = 32;

/**
 * HMAC-SHA256 as RFC 2104 defines it, H((K ^ opad) || H((K ^ ipad) || text)), over `crypto.hash` (Node
 * 20.12+), which hashes in one call: `createHmac` makes a stream object per tag, and on a server between
 * requests (cold caches) that cost several times the hashing, most of what sealing and opening a
 * `requestState` took. Undefined where `crypto.hash` is missing. Tested against `createHmac` and WebCrypto.
 */
export function oneShotHmac(crypto: NodeCrypto, secret: Uint8Array): ((text: string) => Uint8Array) | undefined {
  const hash = crypto.hash;
  if (hash === undefined) return undefined;
  const key = new Uint8Array(BLOCK_BYTES);
  key.set(secret.length > BLOCK_BYTES ? hash('sha256', secret, 'buffer') : secret);
  // Reused between tags (signing is synchronous): the padded key, then the text or the inner digest.
  let inner = new Uint8Array(BLOCK_BYTES + 256);
  const outer = new Uint8Array(BLOCK_BYTES + DIGEST_BYTES);
  for (let index = 0; index < BLOCK_BYTES; index++) {
    inner[index] = key[index]! ^ 0x36;
    outer[index] = key[index]! ^ 0x5c;
  }
  return (text) => {
    // UTF-8 takes at most 3 bytes per UTF-16 code unit.
    if (inner.length < BLOCK_BYTES + text.length * 3) {
      const grown = new Uint8Array(BLOCK_BYTES + text.length * 3);
      grown.set(inner.subarray(0, BLOCK_BYTES));
      inner = grown;
    }
    const { written } = encoder.encodeInto(text, inner.subarray(BLOCK_BYTES));
    outer.set(hash('sha256', inner.subarray(0, BLOCK_BYTES + written), 'buffer'), BLOCK_BYTES);
    return hash('sha256', outer, 'buffer');
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
