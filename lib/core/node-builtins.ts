/**
 * `node:crypto` where the runtime has it (Node, Bun, Deno's Node layer), found through
 * `process.getBuiltinModule` so that nothing imports it and the modules that use it stay runtime-neutral;
 * undefined elsewhere (callers fall back to WebCrypto, which is asynchronous and slower).
 */
export interface NodeCrypto {
  createSecretKey(key: Uint8Array): unknown;
  createHmac(algorithm: string, key: unknown): { update(text: string): { digest(): Uint8Array } };
  createHash(algorithm: string): { update(text: string): { digest(encoding: 'base64url'): string } };
  timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean;
  /** One-shot hashing (Node 20.12+). */
  hash?(algorithm: string, data: Uint8Array, encoding: 'buffer'): Uint8Array;
}

export function nodeCrypto(): NodeCrypto | undefined {
  const process = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  return process?.getBuiltinModule?.('node:crypto') as NodeCrypto | undefined;
}
