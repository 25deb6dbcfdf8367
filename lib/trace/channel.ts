/**
 * A hot stream of trace events whose `observed` flag is a plain field: publishers read it before building
 * an event, so a channel nobody listens to costs one property read per message.
 */
import { Observable, Subject } from 'rxjs';
import type { TraceEvent } from './types';

export class TraceChannel {
  /** Whether anyone is subscribed to `events$` now. */
  observed = false;
  readonly events$: Observable<TraceEvent>;
  private readonly subject = new Subject<TraceEvent>();

  /** `onDemand` hears every change of `observed` (the runtime attaches XState inspection on demand). */
  constructor(private readonly onDemand?: (observed: boolean) => void) {
    this.events$ = new Observable<TraceEvent>((subscriber) => {
      const subscription = this.subject.subscribe(subscriber);
      this.refresh();
      return () => {
        subscription.unsubscribe();
        this.refresh();
      };
    });
  }

  next(event: TraceEvent): void {
    this.subject.next(event);
  }

  /** Ends the stream: current subscribers complete, later ones complete at once. */
  complete(): void {
    this.subject.complete();
  }

  private refresh(): void {
    const observed = this.subject.observed;
    if (observed === this.observed) return;
    this.observed = observed;
    this.onDemand?.(observed);
  }
}
