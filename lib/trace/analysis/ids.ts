/**
 * Stable trace and span ids for requests whose events carry none: hashes of what identifies the request
 * (FNV-1a, 64-bit), so exporting the same trace twice gives the same ids. Not for security.
 */
const PRIME = 0x100000001b3n;
const MASK = 0xffffffffffffffffn;

function fnv1a64(text: string, seed: bigint): bigint {
  let hash = seed;
  for (let i = 0; i < text.length; i++) {
    hash ^= BigInt(text.charCodeAt(i));
    hash = (hash * PRIME) & MASK;
  }
  return hash;
}

const hex16 = (value: bigint) => value.toString(16).padStart(16, '0');

/** 16 hex digits, never all zero (an invalid span id). */
export function derivedSpanId(identity: string): string {
  const id = hex16(fnv1a64(identity, 0xcbf29ce484222325n));
  return id === '0000000000000000' ? '0000000000000001' : id;
}

/** 32 hex digits, never all zero (an invalid trace id). */
export function derivedTraceId(identity: string): string {
  return `${hex16(fnv1a64(identity, 0x84222325cbf29ce4n))}${derivedSpanId(identity)}`;
}
