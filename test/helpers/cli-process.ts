/**
 * Runs the `switchboard` CLI and the demo as a user would, as real processes: each in its own process
 * group, bounded in time, and killed (the whole group) after the test whatever happened.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { build } from 'tsup';
import { afterAll, afterEach, beforeEach } from 'vitest';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CLI_ENTRY = join(ROOT, 'lib/cli/main.ts');

/** A TypeScript entry point run the way `tsx <file>` runs it. */
export function tsxCommand(file: string, ...args: string[]): string[] {
  return [process.execPath, '--import', 'tsx', file, ...args];
}

/** The CLI from source: `npx tsx lib/cli/main.ts ...`. */
export function cliCommand(...args: string[]): string[] {
  return tsxCommand(CLI_ENTRY, ...args);
}

/**
 * Builds the CLI as `npm run build` ships it (tsup, ESM, the `#!` line kept), with the package root entry
 * next to it for fixtures to import, everything bundled so it runs from any directory. Starts several
 * times faster than the sources through tsx, which matters for tests that spawn dozens of processes.
 */
export async function buildCli(outDir: string): Promise<{ cli: string; index: string }> {
  await build({
    config: false,
    entry: { cli: join(ROOT, 'lib/cli/main.ts'), index: join(ROOT, 'lib/index.ts') },
    outDir,
    format: ['esm'],
    outExtension: () => ({ js: '.mjs' }),
    platform: 'node',
    target: 'node20',
    splitting: true,
    noExternal: [/./],
    silent: true,
  });
  return { cli: join(outDir, 'cli.mjs'), index: join(outDir, 'index.mjs') };
}

export interface Finished {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Processes run to their end, killed after each test; long-running ones (perhaps started in `beforeAll`) after the file. */
const perTest = new Set<ChildProcess>();
const perFile = new Set<ChildProcess>();

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // ESRCH: the group is gone
  }
}

function killAll(children: Set<ChildProcess>): void {
  for (const child of children) killGroup(child, 'SIGKILL');
  children.clear();
}

afterEach(() => killAll(perTest));
afterAll(() => killAll(perFile));

function start(
  [command, ...args]: readonly string[],
  owner: Set<ChildProcess>,
  cwd = ROOT,
  stdin: 'ignore' | 'pipe' = 'ignore',
): ChildProcess {
  const child = spawn(command!, args, { cwd, detached: true, stdio: [stdin, 'pipe', 'pipe'] });
  owner.add(child);
  child.once('exit', () => owner.delete(child));
  return child;
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

function streamClosed(stream: Readable): Promise<void> {
  return stream.closed ? Promise.resolve() : new Promise((resolve) => stream.once('close', () => resolve()));
}

/** How the process exited, once it has and its output has been read to the end. */
async function finished(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const [exit] = await Promise.all([exited(child), streamClosed(child.stdout!), streamClosed(child.stderr!)]);
  return exit;
}

export interface RunOptions {
  /** Default: the repository root. */
  readonly cwd?: string;
  /** After this long the process group is killed (the result then shows SIGKILL). Default 15 s. */
  readonly timeoutMs?: number;
}

/** Runs `commandLine` to its end. */
export async function runToEnd(
  commandLine: readonly string[],
  { cwd, timeoutMs = 15_000 }: RunOptions = {},
): Promise<Finished> {
  const child = start(commandLine, perTest, cwd);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const timer = setTimeout(() => killGroup(child, 'SIGKILL'), timeoutMs);
  const { code, signal } = await finished(child);
  clearTimeout(timer);
  return { code, signal, stdout, stderr };
}

/** A process that keeps running (a server): started, watched, and stopped by signal. */
export class LongRunning {
  stdout = '';
  stderr = '';
  private readonly child: ChildProcess;

  private constructor(commandLine: readonly string[], stdin: 'ignore' | 'pipe' = 'ignore') {
    this.child = start(commandLine, perFile, ROOT, stdin);
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (this.stdout += chunk));
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
  }

  /** Starts `commandLine`; it runs until stopped (or the test file ends). */
  static run(commandLine: readonly string[]): LongRunning {
    return new LongRunning(commandLine);
  }

  /** Starts `commandLine` with its stdin an open pipe (a stdio server's client that stays), ended by `endStdin`. */
  static withStdin(commandLine: readonly string[]): LongRunning {
    return new LongRunning(commandLine, 'pipe');
  }

  /** The process's pid (the leader of its own process group). */
  get pid(): number {
    return this.child.pid!;
  }

  /** Writes `text` to its stdin (started `withStdin`). */
  write(text: string): void {
    this.child.stdin!.write(text);
  }

  /** Ends its stdin: a stdio server sees its client go away. */
  endStdin(): void {
    this.child.stdin?.end();
  }

  /** Resolves when the process has exited and its output has been read to the end. */
  finished(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    return finished(this.child);
  }

  /** Starts `commandLine` and resolves with the first match of `ready` on its stdout. */
  static async start(
    commandLine: readonly string[],
    ready: RegExp,
  ): Promise<{ process: LongRunning; match: RegExpExecArray }> {
    const process = new LongRunning(commandLine);
    return { process, match: await process.waitFor('stdout', ready) };
  }

  /** Resolves with the first match of `pattern` in the stream; rejects if the stream ends or time runs out. */
  waitFor(stream: 'stdout' | 'stderr', pattern: RegExp, timeoutMs = 15_000): Promise<RegExpExecArray> {
    return new Promise((resolve, reject) => {
      const source = this.child[stream]!;
      const check = () => {
        const match = pattern.exec(this[stream]);
        if (!match) return false;
        finish();
        resolve(match);
        return true;
      };
      // The stream's end, not the exit: output may still be on its way when the process has exited.
      const onEnd = () => {
        if (check()) return;
        finish();
        reject(new Error(`The process exited before ${stream} showed ${pattern}:\n${this.stdout}\n${this.stderr}`));
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`${stream} did not show ${pattern} within ${timeoutMs} ms:\n${this.stdout}\n${this.stderr}`));
      }, timeoutMs);
      const finish = () => {
        clearTimeout(timer);
        source.off('data', check);
        source.off('close', onEnd);
      };
      if (check()) return;
      source.on('data', check);
      source.once('close', onEnd);
    });
  }

  /** Sends `signal` and waits for the exit; the group is killed if it takes longer than `timeoutMs`. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 5000) {
    killGroup(this.child, signal);
    const timer = setTimeout(() => killGroup(this.child, 'SIGKILL'), timeoutMs);
    const exit = await finished(this.child);
    clearTimeout(timer);
    return exit;
  }
}

/**
 * `call` remembers each server's era in its config dir: every test of the file gets a fresh one, made under
 * the folder `parent()` names (read at each test: files make theirs in `beforeAll`).
 */
export function freshConfigDirPerTest(parent: () => string): void {
  const shared = process.env['MCP_SWITCHBOARD_CONFIG_DIR'];
  beforeEach(() => {
    process.env['MCP_SWITCHBOARD_CONFIG_DIR'] = mkdtempSync(join(parent(), 'config-'));
  });
  afterEach(() => {
    process.env['MCP_SWITCHBOARD_CONFIG_DIR'] = shared;
  });
}

/**
 * A server module for `switchboard serve` with one tool, `add` (a + b), importing the package built by
 * `buildCli` into `./dist` beside it.
 */
export const ADDER_MODULE = `import { defineServer } from './dist/index.mjs';
export default defineServer({ name: 'adder', version: '1', tools: [{
  name: 'add', inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
  handler: ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }) }] });`;
