import { Duplex } from 'node:stream';

/**
 * One end of an in-process byte pipe that behaves like a connected socket: what one end writes the other
 * reads, a write waits while the reader's buffer is full, ending or destroying one end ends the other's
 * readable side, and writing to a destroyed peer fails with EPIPE.
 */
class PipeEnd extends Duplex {
  peer: PipeEnd | undefined;
  private blockedWrite: ((error?: Error | null) => void) | undefined;

  constructor() {
    super({ allowHalfOpen: false });
  }

  override _read(): void {
    const peer = this.peer;
    const resume = peer?.blockedWrite;
    if (peer && resume) {
      peer.blockedWrite = undefined;
      resume();
    }
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    const peer = this.peer;
    if (!peer || peer.destroyed) {
      callback(brokenPipe());
      return;
    }
    if (peer.push(chunk)) callback();
    else this.blockedWrite = callback;
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.peer?.push(null);
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    const peer = this.peer;
    this.peer = undefined;
    if (peer) {
      if (!peer.readableEnded && !peer.destroyed) peer.push(null);
      const blocked = peer.blockedWrite;
      peer.blockedWrite = undefined;
      blocked?.(brokenPipe());
    }
    const mine = this.blockedWrite;
    this.blockedWrite = undefined;
    mine?.(error ?? brokenPipe());
    callback(error);
  }
}

function brokenPipe(): Error {
  return Object.assign(new Error('write EPIPE: the other end of the pipe is closed'), { code: 'EPIPE' });
}

/** Two connected in-process duplex streams (Node 20 has no `stream.duplexPair`). */
export function createDuplexPair(): [Duplex, Duplex] {
  const a = new PipeEnd();
  const b = new PipeEnd();
  a.peer = b;
  b.peer = a;
  return [a, b];
}
