/** A `TokenStore` in this process's memory: nothing survives the process (tests, short-lived agents). */
import type { AuthKey, AuthRecord, TokenStore } from './token-store';

export class MemoryTokenStore implements TokenStore {
  private readonly records = new Map<string, AuthRecord>();
  /** The last change queued per key: the next one waits for it. */
  private readonly queues = new Map<string, Promise<unknown>>();

  async load(key: AuthKey): Promise<AuthRecord | undefined> {
    return this.records.get(keyText(key));
  }

  update(
    key: AuthKey,
    change: (current: AuthRecord | undefined) => Promise<AuthRecord | undefined> | AuthRecord | undefined,
  ): Promise<AuthRecord | undefined> {
    const text = keyText(key);
    const previous = this.queues.get(text) ?? Promise.resolve();
    const next = previous.then(async () => {
      const changed = await change(this.records.get(text));
      if (changed === undefined) this.records.delete(text);
      else this.records.set(text, changed);
      return changed;
    });
    const settled = next.then(
      () => undefined,
      () => undefined,
    );
    this.queues.set(text, settled);
    void settled.then(() => {
      if (this.queues.get(text) === settled) this.queues.delete(text);
    });
    return next;
  }

  async delete(key: AuthKey): Promise<void> {
    await this.update(key, () => undefined);
  }
}

function keyText(key: AuthKey): string {
  return `${key.server}\n${key.client}`;
}
