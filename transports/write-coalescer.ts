import type { Writable } from 'node:stream';
import { afterThisTurn } from '../lib/core/microtask';

/**
 * Frames coalesced into one write. Measured at 256 calls in flight over a pipe: one write per frame cost a
 * system call each; holding a whole turn's frames made each process wait for the other's entire batch
 * (~90k calls/s); batches of 16 to 64 kept both processes busy (~150k calls/s), 16 being at the top.
 */
const FRAMES_PER_WRITE = 16;

/**
 * Batches the frames a turn writes to one stream. The first frame of a turn is written at once: a lone
 * request or reply never waits. The frames that follow it in the same turn are held (corked) and written
 * together, `FRAMES_PER_WRITE` (or a high-water mark's worth) per system call, the rest when the turn's
 * microtasks have run. Call `wrote()` right after each `output.write(frame)`.
 */
export class WriteCoalescer {
  /** Frames held (corked) since the last write; -1 when writes go straight out. */
  private heldFrames = -1;

  constructor(private readonly output: Writable) {}

  wrote(): void {
    const output = this.output;
    if (this.heldFrames < 0) {
      this.heldFrames = 0;
      output.cork();
      afterThisTurn(this.writeHeldFrames);
    } else if (++this.heldFrames >= FRAMES_PER_WRITE || output.writableLength >= output.writableHighWaterMark) {
      output.uncork();
      output.cork();
      this.heldFrames = 0;
    }
  }

  private readonly writeHeldFrames = (): void => {
    this.heldFrames = -1;
    this.output.uncork();
  };
}
