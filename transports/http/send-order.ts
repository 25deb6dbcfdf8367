/**
 * Keeps the POSTs of a transport in the order their messages were sent: a message starts only once the one
 * before it was handed over (see `streamable-client.ts` for when that is). The sender holding the turn
 * calls `leave()` exactly once.
 */
export class SendOrder {
  private busy = false;
  private readonly waiting: (() => void)[] = [];

  /** True when the caller may go at once (it then holds the turn); false: it waits for `turn()`. */
  tryEnter(): boolean {
    if (this.busy) return false;
    this.busy = true;
    return true;
  }

  /** Resolves once the caller holds the turn. */
  turn(): Promise<void> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** The holder of the turn was handed over: the next one waiting may go. */
  leave(): void {
    const next = this.waiting.shift();
    if (next) queueMicrotask(next);
    else this.busy = false;
  }
}
