import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Runs a full collection after letting pending jobs finish (WeakRefs hold their targets until then). */
export async function collectGarbage(): Promise<void> {
  for (let round = 0; round < 3; round++) {
    await new Promise((resolve) => setImmediate(resolve));
    gc();
  }
}

export function heapUsed(): number {
  return process.memoryUsage().heapUsed;
}
