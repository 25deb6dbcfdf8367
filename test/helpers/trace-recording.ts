/** A test file's trace recording: runtimes whose every trace event lands in one list, emptied after each test. */
import { afterEach } from 'vitest';
import { Runtime } from '../../lib/core/runtime';
import type { TraceEvent } from '../../lib/trace/types';
import { cleanups } from './http';

export function traceRecording(): { readonly events: TraceEvent[]; recording(): Runtime } {
  const events: TraceEvent[] = [];
  afterEach(() => {
    events.length = 0;
  });
  return {
    events,
    /** A fresh runtime whose trace is recorded (until the test's cleanups run). */
    recording(): Runtime {
      const runtime = new Runtime();
      const subscription = runtime.trace$.subscribe((event) => events.push(event));
      cleanups.push(() => subscription.unsubscribe());
      return runtime;
    },
  };
}
