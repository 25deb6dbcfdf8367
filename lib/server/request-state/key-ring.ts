/**
 * The keys that seal and open `requestState`. A ring seals with its current key and opens with any of its
 * keys, so keys rotate without breaking rounds in flight: add the new key as current, keep the old one until
 * the longest state TTL has passed, then drop it. Every replica that may receive a retried request must hold
 * the same ring (a state sealed by one instance is opened by whichever instance the retry reaches).
 *
 * Secrets are imported once into HMAC keys (hmac.ts: a `node:crypto` `KeyObject`, or a non-extractable
 * WebCrypto key) and not kept: nothing on a ring (serialized, inspected or thrown) shows them.
 */
import { hmacKey, type HmacKey } from './hmac';

/** One key: `id` travels in clear in every state it seals; `secret` never does. */
export interface RequestStateKey {
  /** 1 to 32 characters of `A-Z a-z 0-9 _ -`. */
  readonly id: string;
  /** At least 32 bytes (a string counts its UTF-8 bytes); random bytes, not a password. */
  readonly secret: Uint8Array | string;
}

export interface KeyRingOptions {
  readonly keys: readonly RequestStateKey[];
  /** The key that seals; the first of `keys` when not given. */
  readonly current?: string;
}

/** Shortest secret accepted: HMAC-SHA256's output size, below which the key is the weak point. */
export const MIN_SECRET_BYTES = 32;

export const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;

export class KeyRing {
  readonly #keys: ReadonlyMap<string, HmacKey>;
  /** The id of the key that seals. */
  readonly currentKeyId: string;

  /** @internal Made by `createKeyRing` and `processKeyRing`. */
  constructor(keys: ReadonlyMap<string, HmacKey>, currentKeyId: string) {
    this.#keys = keys;
    this.currentKeyId = currentKeyId;
  }

  /** Every key id the ring opens with. */
  get keyIds(): readonly string[] {
    return [...this.#keys.keys()];
  }

  /** @internal The HMAC key of `id`, or undefined when the ring has no such key (any string is safe to ask). */
  cryptoKey(id: string): HmacKey | undefined {
    return this.#keys.get(id);
  }

  toJSON(): { currentKeyId: string; keyIds: readonly string[] } {
    return { currentKeyId: this.currentKeyId, keyIds: this.keyIds };
  }
}

/** A ring from configured keys. Throws (naming ids, never secrets) on an invalid configuration. */
export function createKeyRing(options: KeyRingOptions): KeyRing {
  if (options.keys.length === 0) throw new TypeError('A request-state key ring needs at least one key');
  const keys = new Map<string, HmacKey>();
  for (const { id, secret } of options.keys) {
    if (typeof id !== 'string' || !KEY_ID.test(id)) {
      throw new TypeError('A request-state key id must be 1 to 32 characters of A-Z a-z 0-9 _ -');
    }
    if (keys.has(id)) throw new TypeError(`The request-state key id "${id}" appears twice`);
    const bytes = typeof secret === 'string' ? new TextEncoder().encode(secret) : secret;
    if (!(bytes instanceof Uint8Array) || bytes.length < MIN_SECRET_BYTES) {
      throw new TypeError(`The request-state key "${id}" needs a secret of at least ${MIN_SECRET_BYTES} bytes`);
    }
    keys.set(id, hmacKey(new Uint8Array(bytes)));
  }
  const current = options.current ?? options.keys[0]!.id;
  if (!keys.has(current)) throw new TypeError(`The current request-state key "${current}" is not in the ring`);
  return new KeyRing(keys, current);
}

let processRing: KeyRing | undefined;

/**
 * This process's own ring: one random key, made on first use. Enough for a single instance (stdio, or one
 * HTTP server); states it seals cannot be opened by another process or after a restart, so replicas behind
 * a load balancer must be given one shared ring with `createKeyRing` instead. Its key id is random too, so a
 * retry that reaches the wrong replica fails as `unknown-key`, which says what went wrong.
 */
export function processKeyRing(): KeyRing {
  if (processRing === undefined) {
    const secret = globalThis.crypto.getRandomValues(new Uint8Array(MIN_SECRET_BYTES));
    const id = `process-${[...globalThis.crypto.getRandomValues(new Uint8Array(4))]
      .map((byte) => byte.toString(16).padStart(2, '0'))
      .join('')}`;
    processRing = createKeyRing({ keys: [{ id, secret }] });
  }
  return processRing;
}
