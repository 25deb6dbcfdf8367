/**
 * `switchboard call` answering a tool's questions (form elicitation), in both eras: `--answer` for scripts
 * (checked against the form before anything is sent), `--decline` and `--cancel`, a prompt on a terminal (a
 * real pseudo-terminal from util-linux's `script`), and a clear refusal when stdin is not a terminal.
 * Every run is a real `switchboard call` against a real `switchboard serve` child.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { commandLine } from '../../lib/cli/hints';
import { runCli } from '../../lib/cli/run';
import { buildCli, freshConfigDirPerTest, runToEnd } from '../helpers/cli-process';

let dir: string;
let built: { cli: string; index: string };
const switchboard = (...args: string[]) => [process.execPath, built.cli, ...args];
const runSwitchboard = (...args: string[]) => runToEnd(switchboard(...args), { timeoutMs: 30_000 });
let server: string[];

const ASKER = `import { defineServer } from './dist/index.mjs';
const DETAILS = {
  type: 'object',
  properties: {
    name: { type: 'string', title: 'Your name', minLength: 1 },
    age: { type: 'integer', minimum: 0, maximum: 150 },
    color: { type: 'string', enum: ['red', 'green', 'blue'] },
    news: { type: 'boolean', default: false },
  },
  required: ['name', 'age'],
};
const CONFIRM = { type: 'object', properties: { sure: { type: 'boolean' } }, required: ['sure'] };
const text = (value) => ({ content: [{ type: 'text', text: JSON.stringify(value) }] });
export default defineServer({ name: 'asker', version: '1', tools: [
  { name: 'register', inputSchema: { type: 'object' },
    handler: async (_args, ctx) => text(await ctx.elicit({ message: 'Your details?', requestedSchema: DETAILS })) },
  { name: 'twice', inputSchema: { type: 'object' },
    handler: async (_args, ctx) => {
      const details = await ctx.elicit({ message: 'Your details?', requestedSchema: DETAILS });
      const confirm = await ctx.elicit({ message: 'Sure?', requestedSchema: CONFIRM });
      return text([details, confirm]);
    } },
] });`;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'switchboard-elicit-'));
  built = await buildCli(join(dir, 'dist'));
  writeFileSync(join(dir, 'asker.mjs'), ASKER);
  server = switchboard('serve', join(dir, 'asker.mjs'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
freshConfigDirPerTest(() => dir);

const ERAS = [
  ['the stateless era (input_required rounds)', []],
  ['the handshake era (elicitation/create)', ['--era', 'handshake']],
] as const;

/** The answers the `register` or `twice` tool got, as it printed them. */
const answersIn = (stdout: string) => JSON.parse(JSON.parse(stdout).content[0].text);
const call = (era: readonly string[], tool: string, ...flags: string[]) =>
  runSwitchboard('call', ...era, ...flags, 'tools/call', JSON.stringify({ name: tool }), '--', ...server);
/** The client's outbound messages in a `--trace` on stderr: `request tools/call`, `result elicitation/create`... */
const sent = (stderr: string) =>
  [...stderr.matchAll(/^\S+ c\d+ +-> (request|result|error|notification) (\S+)/gm)].map((m) => `${m[1]} ${m[2]}`);

describe.each(ERAS)('call answers a form in %s', (_name, era) => {
  it('with --answer, the defaults filled in', async () => {
    const run = await call(era, 'register', '--answer', '{"name":"Ada","age":36}');
    expect(run.code, run.stderr).toBe(0);
    expect(answersIn(run.stdout)).toEqual({ action: 'accept', content: { name: 'Ada', age: 36, news: false } });
  });

  it('with one --answer per question, in order', async () => {
    const run = await call(
      era,
      'twice',
      '--answer',
      '{"name":"Ada","age":36,"color":"red"}',
      '--answer',
      '{"sure":true}',
    );
    expect(run.code, run.stderr).toBe(0);
    expect(answersIn(run.stdout)).toEqual([
      { action: 'accept', content: { name: 'Ada', age: 36, color: 'red', news: false } },
      { action: 'accept', content: { sure: true } },
    ]);
  });

  it('with --decline or --cancel, for every question', async () => {
    for (const action of ['decline', 'cancel']) {
      const run = await call(era, 'twice', `--${action}`);
      expect(run.code, run.stderr).toBe(0);
      expect(answersIn(run.stdout)).toEqual([{ action }, { action }]);
    }
  });

  it('refuses an --answer that does not fit the form, and answers nothing', async () => {
    for (const [answer, problem] of [
      ['{"name":"Ada","age":200}', 'age must be at most 150, got 200'],
      ['{"name":"Ada"}', 'age is required'],
      ['{"name":"Ada","age":36,"colour":"red"}', 'colour is not a property of the requested schema'],
      ['{"name":"Ada","age":36,"color":"pink"}', 'color must be one of "red", "green", "blue", got "pink"'],
      ['{"name":"","age":"36"}', 'name must be at least 1 characters long'],
    ]) {
      const run = await call(era, 'register', '--trace', '--answer', answer!);
      expect(run.code, run.stderr).toBe(1);
      expect(run.stdout).toBe('');
      const lines = run.stderr.split('\n');
      expect(lines).toContain(`switchboard: --answer does not fit the form the server asks for: ${problem}`);
      expect(lines).toContain('  the server asks: "Your details?"');
      expect(lines).toContain('    age: an integer (0 to 150), required');
      // No answer left: one tools/call (no retry carrying answers), no result for elicitation/create; the
      // request in flight is cancelled.
      const out = sent(run.stderr);
      expect(out.filter((hop) => hop === 'request tools/call')).toHaveLength(1);
      expect(out.filter((hop) => hop.startsWith('result '))).toEqual([]);
    }
  });

  it('refuses clearly when stdin is not a terminal and no answer was given', async () => {
    const run = await call(era, 'register');
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr.split('\n')).toEqual(
      expect.arrayContaining([
        "switchboard: The server asks for input, and stdin is not a terminal to ask on: give it with --answer '<json>' (or --decline, --cancel)",
        '  the server asks: "Your details?"',
        '    name (Your name): text (at least 1 character), required',
        '    color: one of red, green, blue, optional',
        '    news: yes or no, optional, default no',
      ]),
    );
  });

  it('refuses the question after the last --answer when stdin is not a terminal', async () => {
    const run = await call(era, 'twice', '--answer', '{"name":"Ada","age":36}');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      'switchboard: The server asks for input after the 1 --answer given, and stdin is not a terminal to ask on',
    );
    expect(run.stderr).toContain('  the server asks: "Sure?"');
  });
});

describe('call --answer, --decline and --cancel on the command line', () => {
  it('are described by help call', async () => {
    const out: string[] = [];
    expect(await runCli(['help', 'call'], { out: (line) => out.push(line), err: () => undefined })).toBe(0);
    const help = out.join('\n');
    expect(help).toContain(`  --answer '<json>'            the fields of the form the server asks for`);
    expect(help).toContain('  --decline                    decline every question the server asks');
    expect(help).toContain('  --cancel                     cancel every question the server asks');
    expect(help).toContain('When stdin is not a terminal and no answer is');
  });

  it.each([
    [['--answer', '{"name":'], '--answer is not valid JSON'],
    [['--answer', '[1]'], "--answer needs a JSON object of the form's fields"],
    [['--answer', '{}', '--decline'], '--answer and --decline cannot be given together'],
    [['--decline', '--cancel'], '--decline and --cancel cannot be given together'],
  ])('%j is a usage error (exit 2), before anything runs', async (flags, message) => {
    const run = await runSwitchboard('call', ...flags, 'tools/call', '{"name":"register"}', '--', ...server);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`switchboard: ${message}`);
  });
});

/** A command run in a pseudo-terminal (util-linux `script`): what it shows, and keys typed into it. */
class Terminal {
  shown = '';
  private readonly child: ChildProcess;
  readonly exited: Promise<number | null>;

  constructor(command: readonly string[]) {
    // -q: no banner; -f: flush at once; -e: exit with the command's code; the log goes nowhere.
    this.child = spawn('script', ['-qfec', commandLine(command), '/dev/null'], {
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    terminals.add(this.child);
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (this.shown += chunk));
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
  }

  /** Waits (bounded) until the screen shows `text` after what was already seen, then types `line` and Enter. */
  async answer(text: string, line: string): Promise<void> {
    await this.waitFor(text);
    this.child.stdin!.write(`${line}\r`);
  }

  /** Types `keys` as they are (no Enter). */
  type(keys: string): void {
    this.child.stdin!.write(keys);
  }

  private from = 0;

  async waitFor(text: string, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const at = this.shown.indexOf(text, this.from);
      if (at !== -1) {
        this.from = at + text.length;
        return;
      }
      if (Date.now() > deadline) throw new Error(`The terminal did not show ${JSON.stringify(text)}:\n${this.shown}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

const terminals = new Set<ChildProcess>();
afterEach(() => {
  for (const child of terminals) {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // gone already
    }
  }
  terminals.clear();
});

describe.each(ERAS)('call prompts on a terminal in %s', (_name, era) => {
  it('asks each field, asks again for what does not fit, and sends the answer', async () => {
    const terminal = new Terminal(switchboard('call', ...era, 'tools/call', '{"name":"register"}', '--', ...server));
    await terminal.waitFor('The server asks: Your details?');
    await terminal.answer('name> ', '');
    await terminal.answer('name is required', 'Ada');
    await terminal.answer('age> ', 'old');
    await terminal.answer('"old" is not a number: try again', '200');
    await terminal.answer('age must be at most 150, got 200: try again', '36');
    await terminal.answer('1) red  2) green  3) blue', '3');
    await terminal.answer('news> ', 'yes');
    await terminal.answer('Send it? [Y]es, [d]ecline, [c]ancel: ', '');
    expect(await terminal.exited, terminal.shown).toBe(0);
    const result = terminal.shown.slice(terminal.shown.indexOf('{\r\n'));
    expect(answersIn(result.replaceAll('\r\n', '\n'))).toEqual({
      action: 'accept',
      content: { name: 'Ada', age: 36, color: 'blue', news: true },
    });
  });

  it('stops on Ctrl-C while it asks: the request is cancelled, exit 130', async () => {
    const terminal = new Terminal(
      switchboard('call', ...era, '--trace', 'tools/call', '{"name":"register"}', '--', ...server),
    );
    await terminal.waitFor('name> ');
    terminal.type('\x03');
    expect(await terminal.exited, terminal.shown).toBe(130);
    expect(terminal.shown).toContain('switchboard: Interrupted: tools/call was cancelled');
  });

  it('declines at the confirmation', async () => {
    const terminal = new Terminal(switchboard('call', ...era, 'tools/call', '{"name":"register"}', '--', ...server));
    await terminal.answer('name> ', 'Ada');
    await terminal.answer('age> ', '36');
    await terminal.answer('color> ', '');
    await terminal.answer('news> ', '');
    await terminal.answer('Send it?', 'd');
    expect(await terminal.exited, terminal.shown).toBe(0);
    expect(terminal.shown).toContain('\\"action\\":\\"decline\\"');
  });
});
