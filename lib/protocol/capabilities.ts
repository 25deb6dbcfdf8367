/**
 * Capabilities are open objects: a feature is declared when the object (or `true` flag) at its path is
 * present. `{}` declares a feature; `false`, `null` and absence do not.
 */
export type CapabilityPath = readonly string[];

export function hasCapability(capabilities: object | undefined, path: CapabilityPath): boolean {
  let node: unknown = capabilities;
  for (const key of path) {
    if (typeof node !== 'object' || node === null) return false;
    node = (node as Record<string, unknown>)[key];
  }
  return node !== undefined && node !== null && node !== false;
}

export function describeCapability(path: CapabilityPath): string {
  return path.join('.');
}
