/** Lifecycle states of nested machines read as dotted paths in trace events (issue 27, item 1). */
import { describe, expect, it } from 'vitest';
import { statePath } from '../../lib/trace/xstate-inspection';

describe('statePath', () => {
  it('keeps a flat state as it is', () => {
    expect(statePath('ready')).toBe('ready');
  });
  it('writes a nested state as a dotted path', () => {
    expect(statePath({ running: { stopping: 'endingStdin' } })).toBe('running.stopping.endingStdin');
    expect(statePath({ stopping: 'endingStdin' })).toBe('stopping.endingStdin');
  });
  it('joins the regions of a parallel state', () => {
    expect(statePath({ running: { reading: 'paused', writing: 'draining' } })).toBe(
      'running.reading.paused, running.writing.draining',
    );
  });
});
