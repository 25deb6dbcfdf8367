/**
 * Newline-delimited input: `LineSplitter` cuts a byte stream into lines under a size limit, `LineReader`
 * turns each line into a JSON-RPC frame.
 */
import { decodeFrame, DEFAULT_MAX_DEPTH, DEFAULT_MAX_MESSAGE_BYTES } from '../lib/jsonrpc/codec';
import { ErrorCode } from '../lib/jsonrpc/errors';
import { UnreadableFrame, type InboundFrame } from '../lib/jsonrpc/types';

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;

export interface LineSplitterHandlers {
  /** A complete line: `bytes[start, end)`, without its `\n` (or `\r\n`). Valid only during the call. */
  line(bytes: Buffer, start: number, end: number): void;
  /** A line grew past the limit: it is dropped up to its newline and reported here once. */
  oversized(): void;
}

/**
 * Splits a byte stream into lines in linear time. A line that lies whole in one chunk is handed over as a
 * range of that chunk (no copy); the pieces of a line cut across chunks are kept in a list and
 * concatenated once, when a newline completes it (never re-copied per chunk, the quadratic trap of a
 * growing buffer). Lines are cut on bytes, so a multi-byte character split across chunks is decoded whole.
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
    const bytes = asBuffer(chunk);
    let newline = bytes.indexOf(NEWLINE);
    if (newline === -1) {
      this.append(bytes);
      return;
    }
    let start = 0;
    if (this.pendingBytes > 0 || this.skipping) {
      this.append(bytes.subarray(0, newline));
      this.completePending();
      start = newline + 1;
      newline = bytes.indexOf(NEWLINE, start);
    }
    while (newline !== -1) {
      this.emit(bytes, start, newline);
      start = newline + 1;
      newline = bytes.indexOf(NEWLINE, start);
    }
    if (start < bytes.length) this.append(bytes.subarray(start));
  }

  /** The input ended: a last line without a newline still counts. */
  end(): void {
    if (this.pendingBytes > 0 || this.skipping) this.completePending();
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

  private completePending(): void {
    if (this.skipping) {
      this.skipping = false;
      return;
    }
    const pending = this.pending;
    const line = pending.length === 1 ? pending[0]! : Buffer.concat(pending, this.pendingBytes);
    this.pending = [];
    this.pendingBytes = 0;
    this.emit(line, 0, line.length);
  }

  private emit(bytes: Buffer, start: number, end: number): void {
    if (end > start && bytes[end - 1] === CARRIAGE_RETURN) end--;
    if (end - start > this.maxLineBytes) this.handlers.oversized();
    else this.handlers.line(bytes, start, end);
  }
}

function asBuffer(chunk: Uint8Array | string): Buffer {
  if (typeof chunk === 'string') return Buffer.from(chunk, 'utf8');
  return Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

/** The `UnreadableFrame` for a line over the limit, worded like `decodeFrame`'s. */
export function tooLarge(maxBytes: number): UnreadableFrame {
  return new UnreadableFrame(ErrorCode.InvalidRequest, `Message too large: the limit is ${maxBytes} bytes`);
}

/**
 * Turns a newline-delimited JSON byte stream into frames: one message (or batch) per line, a `UnreadableFrame`
 * for a line that is not JSON, is over `maxMessageBytes` or nests deeper than `maxDepth`. Blank lines are
 * ignored.
 */
export class LineReader {
  private readonly splitter: LineSplitter;

  constructor(
    private readonly emit: (frame: InboundFrame) => void,
    readonly maxMessageBytes = DEFAULT_MAX_MESSAGE_BYTES,
    readonly maxDepth = DEFAULT_MAX_DEPTH,
  ) {
    this.splitter = new LineSplitter(maxMessageBytes, {
      line: (bytes, start, end) => this.decode(bytes, start, end),
      oversized: () => this.emit(tooLarge(maxMessageBytes)),
    });
  }

  push(chunk: Uint8Array | string): void {
    this.splitter.push(chunk);
  }

  end(): void {
    this.splitter.end();
  }

  private decode(bytes: Buffer, start: number, end: number): void {
    const text = bytes.toString('utf8', start, end);
    const first = text.charCodeAt(0);
    if (first !== OPEN_BRACE && first !== OPEN_BRACKET && text.trim() === '') return; // a blank line
    this.emit(decodeFrame(text, this.maxMessageBytes, this.maxDepth));
  }
}
