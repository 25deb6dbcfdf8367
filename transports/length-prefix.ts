import { TransportError } from '../lib/jsonrpc/errors';

/** Every frame starts with its payload length as a 4-byte unsigned big-endian integer. */
export const HEADER_BYTES = 4;
const MAX_PAYLOAD_BYTES = 0xffff_ffff;

/** Header and payload in one buffer, so one `write()` puts the whole frame on the stream. */
export function encodeLengthPrefixed(payload: Uint8Array): Buffer {
  if (payload.length > MAX_PAYLOAD_BYTES) {
    throw new TransportError(`A frame of ${payload.length} bytes does not fit a 4-byte length header`);
  }
  const frame = Buffer.allocUnsafe(HEADER_BYTES + payload.length);
  frame.writeUInt32BE(payload.length, 0);
  frame.set(payload, HEADER_BYTES);
  return frame;
}

/**
 * Cuts a byte stream into length-prefixed payloads. Chunks are kept as they arrive and each payload is
 * copied at most once (not at all when it lies inside one chunk), so a frame split over many tiny chunks
 * costs linear time. A bad header or a stream ending mid-frame throws a `TransportError`: binary framing
 * cannot resynchronise, so the caller must drop the connection.
 */
export class LengthPrefixReader {
  private chunks: (Buffer | undefined)[] = []; // consumed slots are cleared so chunks can be collected
  private head = 0; // index of the first unconsumed chunk
  private offset = 0; // bytes already consumed from chunks[head]
  private buffered = 0;
  private expected = -1; // payload length of the frame being read; -1 while waiting for a header

  constructor(private readonly maxPayloadBytes: number) {}

  /** Buffers `chunk` and calls `onFrame` for every payload it completes, in order. */
  push(chunk: Buffer, onFrame: (payload: Buffer) => void): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    for (;;) {
      if (this.expected < 0) {
        if (this.buffered < HEADER_BYTES) return;
        const length = this.take(HEADER_BYTES).readUInt32BE(0);
        if (length > this.maxPayloadBytes) {
          throw new TransportError(`Bad frame: length ${length} exceeds the limit of ${this.maxPayloadBytes} bytes`);
        }
        this.expected = length;
      }
      if (this.buffered < this.expected) return;
      const payload = this.take(this.expected);
      this.expected = -1;
      onFrame(payload);
    }
  }

  /** Called when the stream ends: throws if it ended inside a frame. */
  end(): void {
    if (this.expected >= 0) {
      throw new TransportError(`Bad frame: the stream ended after ${this.buffered} of ${this.expected} payload bytes`);
    }
    if (this.buffered > 0) {
      throw new TransportError(`Bad frame: the stream ended inside a length header (${this.buffered} bytes)`);
    }
  }

  /** Removes the next `count` bytes (the caller checked they are buffered). */
  private take(count: number): Buffer {
    const first = this.chunks[this.head]!;
    if (first.length - this.offset >= count) {
      const bytes = first.subarray(this.offset, this.offset + count);
      this.consume(count);
      return bytes;
    }
    const bytes = Buffer.allocUnsafe(count);
    let filled = 0;
    while (filled < count) {
      const chunk = this.chunks[this.head]!;
      const n = Math.min(count - filled, chunk.length - this.offset);
      chunk.copy(bytes, filled, this.offset, this.offset + n);
      filled += n;
      this.consume(n);
    }
    return bytes;
  }

  private consume(count: number): void {
    this.buffered -= count;
    this.offset += count;
    if (this.offset < this.chunks[this.head]!.length) return;
    this.chunks[this.head] = undefined;
    this.head++;
    this.offset = 0;
    if (this.head === this.chunks.length) {
      this.chunks = [];
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.chunks.length) {
      this.chunks = this.chunks.slice(this.head);
      this.head = 0;
    }
  }
}
