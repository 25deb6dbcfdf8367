import { decodeFrame, DEFAULT_MAX_MESSAGE_BYTES } from '../lib/jsonrpc/codec';
import { ErrorCode } from '../lib/jsonrpc/errors';
import { FrameError, type InboundFrame } from '../lib/jsonrpc/types';

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

export interface LineSplitterHandlers {
  /** A complete line, without its `\n` (or `\r\n`). */
  line(bytes: Buffer): void;
  /** A line grew past the limit: it is dropped up to its newline and reported here once. */
  oversized(): void;
}

/**
 * Splits a byte stream into lines in linear time: chunks are kept in a list and concatenated once, when a
 * newline completes their line (never re-copied per chunk, the quadratic trap of a growing buffer).
 * Lines are cut on bytes, so a multi-byte character split across chunks is decoded whole later on.
 */
export class LineSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Inside an oversized line: drop bytes until its newline. */
  private skipping = false;

  constructor(
    private readonly maxLineBytes: number,
    private readonly handlers: LineSplitterHandlers,
  ) {}

  push(chunk: Uint8Array | string): void {
    const bytes =
      typeof chunk === 'string'
        ? Buffer.from(chunk, 'utf8')
        : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let start = 0;
    while (start < bytes.length) {
      const newline = bytes.indexOf(NEWLINE, start);
      const end = newline === -1 ? bytes.length : newline;
      this.append(bytes.subarray(start, end));
      if (newline === -1) return;
      this.completeLine();
      start = newline + 1;
    }
  }

  /** The input ended: a last line without a newline still counts. */
  end(): void {
    if (this.pendingBytes > 0 || this.skipping) this.completeLine();
  }

  private append(piece: Buffer): void {
    if (this.skipping || piece.length === 0) return;
    this.pendingBytes += piece.length;
    // One byte of slack for the `\r` of a CRLF line, which is not part of the message.
    if (this.pendingBytes > this.maxLineBytes + 1) {
      this.pending = [];
      this.pendingBytes = 0;
      this.skipping = true;
      this.handlers.oversized();
      return;
    }
    this.pending.push(piece);
  }

  private completeLine(): void {
    if (this.skipping) {
      this.skipping = false;
      return;
    }
    const pending = this.pending;
    let line = pending.length === 1 ? pending[0]! : Buffer.concat(pending, this.pendingBytes);
    this.pending = [];
    this.pendingBytes = 0;
    if (line.length > 0 && line[line.length - 1] === CARRIAGE_RETURN) line = line.subarray(0, line.length - 1);
    if (line.length > this.maxLineBytes) this.handlers.oversized();
    else this.handlers.line(line);
  }
}

/** The `FrameError` for a line over the limit, worded like `decodeFrame`'s. */
export function tooLarge(maxBytes: number): FrameError {
  return new FrameError(ErrorCode.InvalidRequest, `Message too large: the limit is ${maxBytes} bytes`);
}

/**
 * Turns a newline-delimited JSON byte stream into frames: one message (or batch) per line, a `FrameError`
 * for a line that is not JSON or is over `maxMessageBytes`. Blank lines are ignored.
 */
export class LineReader {
  private readonly splitter: LineSplitter;

  constructor(
    private readonly emit: (frame: InboundFrame) => void,
    readonly maxMessageBytes = DEFAULT_MAX_MESSAGE_BYTES,
  ) {
    this.splitter = new LineSplitter(maxMessageBytes, {
      line: (bytes) => this.decode(bytes),
      oversized: () => this.emit(tooLarge(maxMessageBytes)),
    });
  }

  push(chunk: Uint8Array | string): void {
    this.splitter.push(chunk);
  }

  end(): void {
    this.splitter.end();
  }

  private decode(bytes: Buffer): void {
    const text = bytes.toString('utf8');
    if (text.trim() === '') return;
    this.emit(decodeFrame(text, this.maxMessageBytes));
  }
}
