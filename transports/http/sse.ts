/**
 * Server-Sent Events framing (the `text/event-stream` format) for the Streamable HTTP and legacy SSE
 * transports: encoding on the server, incremental parsing on the client.
 */

export interface SseEvent {
  readonly id?: string;
  readonly event?: string;
  /** The data lines joined with `\n`; an event with no data line has data `''`. */
  readonly data: string;
  /** A reconnection delay the server asks for, in ms. */
  readonly retry?: number;
}

/** One event as it goes on the wire. `data` may hold newlines: each line becomes its own `data:` field. */
export function encodeSseEvent(event: SseEvent): string {
  let text = '';
  if (event.id !== undefined) text += `id: ${singleLine(event.id, 'id')}\n`;
  if (event.event !== undefined) text += `event: ${singleLine(event.event, 'event')}\n`;
  if (event.retry !== undefined) text += `retry: ${Math.max(0, Math.floor(event.retry))}\n`;
  for (const line of event.data.split(/\r\n|\r|\n/)) text += `data: ${line}\n`;
  return text + '\n';
}

/** A comment line: ignored by clients, used to keep idle connections open. */
export function encodeSseComment(text = ''): string {
  return `: ${singleLine(text, 'comment')}\n\n`;
}

function singleLine(value: string, field: string): string {
  if (/[\r\n\0]/.test(value)) throw new TypeError(`An SSE ${field} must not contain line breaks or NUL`);
  return value;
}

/**
 * Parses a `text/event-stream` as it arrives, in chunks split anywhere (even inside a CRLF). Call `push`
 * with each decoded text chunk; complete events come back in order. Follows the WHATWG parsing rules:
 * comments and unknown fields are ignored, a single space after the colon is dropped, and an event is
 * dispatched at a blank line. Fields of an event that never ends (the stream stops mid-event) are lost.
 */
export class SseParser {
  private buffer = '';
  private pendingCarriageReturn = false;
  private data: string[] = [];
  private id: string | undefined;
  private event: string | undefined;
  private retry: number | undefined;
  private hasFields = false;

  constructor(private readonly maxLineLength = 16 * 1024 * 1024) {}

  push(chunk: string): SseEvent[] {
    const events: SseEvent[] = [];
    let text = chunk;
    // A CR at the end of the previous chunk already ended a line; a LF right after it belongs to it.
    if (this.pendingCarriageReturn && text.startsWith('\n')) text = text.slice(1);
    this.pendingCarriageReturn = false;
    let start = 0;
    for (let index = 0; index < text.length; index++) {
      const char = text.charCodeAt(index);
      if (char !== 10 && char !== 13) continue;
      const line = this.buffer + text.slice(start, index);
      this.buffer = '';
      this.line(line, events);
      if (char === 13) {
        if (index + 1 === text.length) this.pendingCarriageReturn = true;
        else if (text.charCodeAt(index + 1) === 10) index++;
      }
      start = index + 1;
    }
    this.buffer += text.slice(start);
    if (this.buffer.length > this.maxLineLength) {
      throw new RangeError(`An SSE line is longer than ${this.maxLineLength} characters`);
    }
    return events;
  }

  private line(line: string, events: SseEvent[]): void {
    if (line === '') {
      if (this.hasFields) events.push(this.dispatch());
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'data':
        this.data.push(value);
        break;
      case 'id':
        if (!value.includes('\0')) this.id = value;
        break;
      case 'event':
        this.event = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.retry = Number(value);
        break;
      default:
        return;
    }
    this.hasFields = true;
  }

  private dispatch(): SseEvent {
    const event: { -readonly [K in keyof SseEvent]: SseEvent[K] } = { data: this.data.join('\n') };
    if (this.id !== undefined) event.id = this.id;
    if (this.event !== undefined) event.event = this.event;
    if (this.retry !== undefined) event.retry = this.retry;
    this.data = [];
    this.id = undefined;
    this.event = undefined;
    this.retry = undefined;
    this.hasFields = false;
    return event;
  }
}
