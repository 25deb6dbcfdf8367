/**
 * The terminal form of `switchboard call` (lib/cli/form-prompt.ts) through its own streams: a user typing
 * line by line, each line written once the prompt asking for it has appeared.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { MAX_ATTEMPTS, promptForm } from '../../lib/cli/form-prompt';
import type { ElicitFormParams, ElicitResult } from '../../lib/protocol/client-features';

const FORM: ElicitFormParams = {
  message: 'Your details?',
  requestedSchema: {
    type: 'object',
    properties: {
      name: { type: 'string', title: 'Your name', minLength: 1 },
      age: { type: 'integer', minimum: 0, maximum: 150 },
      color: {
        type: 'string',
        oneOf: [
          { const: 'r', title: 'Red' },
          { const: 'g', title: 'Green' },
        ],
      },
      news: { type: 'boolean', default: false },
      tags: { type: 'array', items: { type: 'string', enum: ['a', 'b', 'c'] }, maxItems: 2 },
      email: { type: 'string', format: 'email' },
    },
    required: ['name', 'age'],
  },
};

/**
 * Runs the form with `lines` typed in order: each is written when the output shows the next prompt (a write
 * ending in "> " or ": ", as readline writes one). `undefined` ends the input (Ctrl-D).
 */
async function typed(params: ElicitFormParams, lines: readonly (string | undefined)[], signal?: AbortSignal) {
  const input = new PassThrough();
  const output = new PassThrough();
  let shown = '';
  let next = 0;
  output.setEncoding('utf8').on('data', (chunk: string) => {
    shown += chunk;
    if (!chunk.endsWith('> ') && !chunk.endsWith(': ')) return;
    if (next >= lines.length) return input.end(); // more prompts than lines: the user has gone
    const line = lines[next++];
    if (line === undefined) input.end();
    else input.write(`${line}\n`);
  });
  const result = promptForm(params, { input, output, terminal: false }, signal);
  const settled: { result?: ElicitResult; error?: Error } = await result.then(
    (value) => ({ result: value }),
    (error: Error) => ({ error }),
  );
  return { ...settled, shown };
}

describe('the terminal form', () => {
  it('asks each field, re-asks a value that does not fit, and sends what was typed', async () => {
    const { result, shown } = await typed(FORM, [
      '', // name is required
      'Ada',
      'old', // not a number
      '200', // above the maximum
      '36.5', // not an integer
      '36',
      '2', // the second choice, by number
      '', // news: its default
      'a, c',
      'not-an-email',
      'ada@example.com',
      '', // send
    ]);
    expect(result).toEqual({
      action: 'accept',
      content: { name: 'Ada', age: 36, color: 'g', news: false, tags: ['a', 'c'], email: 'ada@example.com' },
    });
    expect(shown).toContain('The server asks: Your details?');
    expect(shown).toContain('name (Your name): text (at least 1 character), required');
    expect(shown).toContain('age: an integer (0 to 150), required');
    expect(shown).toContain('1) Red  2) Green');
    expect(shown).toContain('news: yes or no, optional, default no');
    expect(shown).toContain('  name is required');
    expect(shown).toContain('  "old" is not a number: try again');
    expect(shown).toContain('  age must be at most 150, got 200: try again');
    expect(shown).toContain('  age must be an integer, got 36.5: try again');
    expect(shown).toMatch(/ {2}email must be an email address, got "not-an-email": try again/);
    expect(shown).toContain('  tags: a, c');
  });

  it('leaves out an optional field given nothing, and takes a choice by its value or title', async () => {
    const { result } = await typed(FORM, ['Ada', '36', 'Red', 'no', '', '', 'y']);
    expect(result).toEqual({ action: 'accept', content: { name: 'Ada', age: 36, color: 'r', news: false } });
  });

  it('refuses a choice not offered and too many of a multiple choice', async () => {
    const { result, shown } = await typed(FORM, ['Ada', '1', 'blue', '1', 'yes', 'a,b,c', 'a,d', 'b', '', '']);
    expect(result).toEqual({ action: 'accept', content: { name: 'Ada', age: 1, color: 'r', news: true, tags: ['b'] } });
    expect(shown).toContain('color must be one of "r", "g", got "blue": try again');
    expect(shown).toContain('tags must have at most 2 items, got 3: try again');
    expect(shown).toContain('tags contains "d", which is not one of "a", "b", "c": try again');
  });

  it('declines or cancels at the confirmation', async () => {
    expect((await typed(FORM, ['Ada', '36', '', '', '', '', 'd'])).result).toEqual({ action: 'decline' });
    expect((await typed(FORM, ['Ada', '36', '', '', '', '', 'cancel'])).result).toEqual({ action: 'cancel' });
  });

  it('cancels when the input ends (Ctrl-D), at a field or at the confirmation', async () => {
    expect((await typed(FORM, ['Ada', undefined])).result).toEqual({ action: 'cancel' });
    expect((await typed(FORM, ['Ada', '36', '', '', '', '', undefined])).result).toEqual({ action: 'cancel' });
  });

  it(`gives up after ${MAX_ATTEMPTS} answers that do not fit`, async () => {
    const { error } = await typed(FORM, ['Ada', ...Array(MAX_ATTEMPTS).fill('x')]);
    expect(error?.message).toBe(`Gave up asking for age after ${MAX_ATTEMPTS} answers that did not fit`);
  });

  it('stops when the call is cancelled while it waits for a line', async () => {
    const stop = new AbortController();
    const input = new PassThrough();
    const output = new PassThrough();
    output.once('data', () => stop.abort(new Error('interrupted')));
    await expect(promptForm(FORM, { input, output, terminal: false }, stop.signal)).rejects.toThrow('interrupted');
  });

  it("shows a hostile server's control characters escaped, never as terminal escapes", async () => {
    const hostile: ElicitFormParams = {
      message: 'Hi\u001b[2J\u001b]0;owned\u0007',
      requestedSchema: {
        type: 'object',
        properties: { 'x\u001b[31m': { type: 'string', enum: ['\u001b[1mA'], title: 't\u009b' } },
      },
    };
    const { result, shown } = await typed(hostile, ['1', '']);
    expect(result).toEqual({ action: 'accept', content: { 'x\u001b[31m': '\u001b[1mA' } });
    expect(shown).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(shown).toContain('The server asks: Hi\\u001b[2J\\u001b]0;owned\\u0007');
  });
});
