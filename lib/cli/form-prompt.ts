/**
 * Fills in an elicitation form on a terminal: the server's message, then one prompt per field (what it
 * takes, its choices numbered, its default), each answer checked at once against the field's schema and asked
 * again when it does not fit, then the whole answer shown to send, decline or cancel. Enter keeps a default or
 * skips an optional field; the end of input (Ctrl-D) cancels. Prompts go to `output` (stderr: stdout carries
 * the result).
 */
import { createInterface, type Interface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type { ElicitFormParams, ElicitResult, ElicitValue } from '../protocol/client-features';
import { CliFailure } from './errors';
import {
  choicesOf,
  describeField,
  fieldsOf,
  printable,
  readFieldValue,
  showValue,
  type FormField,
} from './form-fields';

export interface PromptStreams {
  readonly input: Readable;
  readonly output: Writable;
  /** `input` is a terminal: line editing, and Ctrl-C calls `onInterrupt`. */
  readonly terminal: boolean;
  /** Ctrl-C on a terminal (which readline reads as a key, not as a signal). */
  readonly onInterrupt?: () => void;
}

/** Answers that do not fit, per question, before the prompt gives up (the user is not getting anywhere). */
export const MAX_ATTEMPTS = 5;

const CANCEL: ElicitResult = { action: 'cancel' };

export async function promptForm(
  params: ElicitFormParams,
  streams: PromptStreams,
  signal?: AbortSignal,
): Promise<ElicitResult> {
  const reader = new LineReader(streams, signal);
  try {
    const say = (line: string) => reader.write(`${line}\n`);
    say(`The server asks: ${printable(params.message)}`);
    say('  (Enter keeps the default or skips an optional field; Ctrl-D cancels)');
    const content: Record<string, ElicitValue> = {};
    for (const field of fieldsOf(params)) {
      const value = await askField(field, reader, say);
      if (value === CANCELLED) return CANCEL;
      if (value !== undefined) content[field.name] = value;
    }
    return await confirm(content, reader, say);
  } finally {
    reader.close();
  }
}

const CANCELLED = Symbol('cancelled');

async function askField(
  field: FormField,
  reader: LineReader,
  say: (line: string) => void,
): Promise<ElicitValue | undefined | typeof CANCELLED> {
  say(describeField(field));
  const choices = choicesOf(field.schema);
  if (choices) say(`  ${choices.map((choice, index) => `${index + 1}) ${printable(choice.title)}`).join('  ')}`);
  if (field.schema.type === 'array') say('  (several: separate them with commas)');
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const line = await reader.ask(`${printable(field.name)}> `);
    if (line === undefined) return CANCELLED;
    const text = line.trim();
    if (text === '') {
      if (field.schema.default !== undefined) return field.schema.default as ElicitValue;
      if (!field.required) return undefined;
      say(`  ${printable(field.name)} is required`);
      continue;
    }
    const read = readFieldValue(field, text);
    if ('value' in read) return read.value;
    say(`  ${printable(read.problem)}: try again`);
  }
  throw tooManyAttempts(field.name);
}

async function confirm(
  content: Record<string, ElicitValue>,
  reader: LineReader,
  say: (line: string) => void,
): Promise<ElicitResult> {
  const entries = Object.entries(content);
  say(entries.length === 0 ? 'Nothing filled in.' : 'The answer:');
  for (const [name, value] of entries) say(`  ${printable(name)}: ${printable(showValue(value))}`);
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const line = await reader.ask('Send it? [Y]es, [d]ecline, [c]ancel: ');
    if (line === undefined) return CANCEL;
    const word = line.trim().toLowerCase();
    if (['', 'y', 'yes'].includes(word)) return { action: 'accept', content };
    if (['d', 'decline', 'n', 'no'].includes(word)) return { action: 'decline' };
    if (['c', 'cancel'].includes(word)) return CANCEL;
    say('  answer y, d or c');
  }
  throw tooManyAttempts('the confirmation');
}

function tooManyAttempts(what: string): CliFailure {
  return new CliFailure(`Gave up asking for ${what} after ${MAX_ATTEMPTS} answers that did not fit`);
}

/** Lines from `input`, one per `ask`; undefined once input has ended. Aborting `signal` rejects the question. */
class LineReader {
  private readonly readline: Interface;
  private readonly lines: AsyncIterator<string>;

  constructor(
    private readonly streams: PromptStreams,
    private readonly signal: AbortSignal | undefined,
  ) {
    this.readline = createInterface({ input: streams.input, output: streams.output, terminal: streams.terminal });
    // Without a listener, readline would pause the input on Ctrl-C and nothing would stop the call.
    this.readline.on('SIGINT', () => streams.onInterrupt?.());
    this.lines = this.readline[Symbol.asyncIterator]();
  }

  write(text: string): void {
    this.streams.output.write(text);
  }

  async ask(prompt: string): Promise<string | undefined> {
    this.signal?.throwIfAborted();
    this.readline.setPrompt(prompt);
    this.readline.prompt();
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(this.signal!.reason);
      this.signal?.addEventListener('abort', onAbort, { once: true });
    });
    try {
      const next = await Promise.race([this.lines.next(), aborted]);
      return next.done ? undefined : next.value;
    } finally {
      this.signal?.removeEventListener('abort', onAbort!);
    }
  }

  close(): void {
    this.readline.close();
  }
}
