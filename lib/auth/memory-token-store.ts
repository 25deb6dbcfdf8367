/** A `TokenStore` in this process's memory: nothing survives the process (tests, short-lived agents). */
import { KeyedQueue } from './keyed-queue';
import type { AuthKey, AuthRecord, TokenStore } from './token-store';

export class MemoryTokenStore implements TokenStore {
  private readonly records = new Map<string, AuthRecord>();
  private readonly queue = new KeyedQueue();

  async load(key: AuthKey): Promise<AuthRecord | undefined> {
    return this.records.get(keyText(key));
  }

  update(
    key: AuthKey,
    change: (current: AuthRecord | undefined) => Promise<AuthRecord | undefined> | AuthRecord | undefined,
  ): Promise<AuthRecord | undefined> {
    const text = keyText(key);
    return this.queue.run(text, async () => {
      const changed = await change(this.records.get(text));
      if (changed === undefined) this.records.delete(text);
      else this.records.set(text, changed);
      return changed;
    });
  }

  async delete(key: AuthKey): Promise<void> {
    await this.update(key, () => undefined);
  }
}

function keyText(key: AuthKey): string {
  return `${key.server}\n${key.client}`;
}
