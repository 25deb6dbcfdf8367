/**
 * The task-call bench (bench/task-call.ts, `npm run bench -- --only taskCall`) measures what it says: every
 * entrant's call is followed to its end (each task entrant checks that its call made a task and that the task
 * ended with the tool's answer), with our server on the memory and the LMDB store, in both eras, and SDK v1
 * alongside. A tiny window: this checks the paths, not the figures (no timing is asserted).
 */
import { describe, expect, it } from 'vitest';
import { TASK_CALL_SCENARIOS } from '../../bench/task-call';
import type { BenchSettings } from '../../bench/config';

const TINY = { ioWindow: { durationMs: 20, warmupMs: 5 }, concurrency: 4 } as BenchSettings;

const timed = TASK_CALL_SCENARIOS.filter((scenario) => scenario.id !== 'taskCallHeap');

describe('the task-call bench', () => {
  it('has the rows of both eras and the SDK', () => {
    expect(Object.fromEntries(timed.map(({ id, entrants }) => [id, entrants.map((entrant) => entrant.name)]))).toEqual({
      taskCall: ['plain', 'task-memory', 'task-lmdb', 'handle-memory', 'sdk-plain', 'sdk-task'],
      taskCallModern: ['plain', 'task-memory', 'task-lmdb'],
    });
  });

  for (const { id, entrants } of timed) {
    for (const entrant of entrants) {
      it(`${id} ${entrant.name}: follows its calls to their end and reports every figure`, async () => {
        const figures = await entrant.measure(TINY);
        for (const name of ['perSecond', 'cpuUsPerCall', 'concurrentPerSecond', 'concurrentCpuUsPerCall']) {
          expect(figures[name], name).toBeGreaterThan(0);
          expect(Number.isFinite(figures[name]), name).toBe(true);
        }
        // Each 2026-07-28 task is read once it is over: at least one tasks/get per task, never the bound.
        if (id === 'taskCallModern' && entrant.name !== 'plain') {
          expect(figures.pollsPerTask).toBeGreaterThanOrEqual(1);
          expect(figures.pollsPerTask).toBeLessThan(1_000);
        } else expect(figures.pollsPerTask).toBeUndefined();
      });
    }
  }
});
