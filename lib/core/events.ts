import { EventEmitter } from 'eventemitter3';

/** What each event of an `EventFacade`'s map is: a listener's signature. */
export type Listener = (...args: any[]) => void;

/**
 * Typed events for users who do not use RxJS. Unlike a bare eventemitter3, a listener that throws does not
 * stop the listeners after it: each one runs inside its own guard, and the error goes to `onListenerError`.
 */
export class EventFacade<Events extends { [E in keyof Events]: Listener }> {
  private readonly emitter = new EventEmitter();
  private readonly guards = new Map<PropertyKey, Map<Listener, Listener>>();

  constructor(private readonly onListenerError: (error: unknown, event: keyof Events) => void) {}

  on<E extends keyof Events & (string | symbol)>(event: E, listener: Events[E]): this {
    this.emitter.on(event, this.guard(event, listener, false));
    return this;
  }

  once<E extends keyof Events & (string | symbol)>(event: E, listener: Events[E]): this {
    this.emitter.once(event, this.guard(event, listener, true));
    return this;
  }

  off<E extends keyof Events & (string | symbol)>(event: E, listener: Events[E]): this {
    const guarded = this.guards.get(event)?.get(listener);
    if (guarded) {
      this.emitter.off(event, guarded);
      this.forget(event, listener);
    }
    return this;
  }

  emit<E extends keyof Events & (string | symbol)>(event: E, ...args: Parameters<Events[E]>): boolean {
    return this.emitter.emit(event, ...args);
  }

  listenerCount(event: keyof Events & (string | symbol)): number {
    return this.emitter.listenerCount(event);
  }

  removeAllListeners(): this {
    this.emitter.removeAllListeners();
    this.guards.clear();
    return this;
  }

  private guard(event: keyof Events & (string | symbol), listener: Listener, once: boolean): Listener {
    const existing = this.guards.get(event)?.get(listener);
    if (existing) return existing;
    const guarded: Listener = (...args) => {
      if (once) this.forget(event, listener);
      try {
        listener(...args);
      } catch (error) {
        this.onListenerError(error, event);
      }
    };
    let byListener = this.guards.get(event);
    if (!byListener) this.guards.set(event, (byListener = new Map()));
    byListener.set(listener, guarded);
    return guarded;
  }

  private forget(event: PropertyKey, listener: Listener): void {
    const byListener = this.guards.get(event);
    byListener?.delete(listener);
    if (byListener?.size === 0) this.guards.delete(event);
  }
}
