/**
 * `serve`'s module: its default export must be a server definition (`defineServer(...)`) or a `Server`.
 * Both are recognised by shape rather than by `instanceof`: a module importing the package's built copy
 * while the CLI runs from source (or the reverse) holds classes of another copy of the same code.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ServerDefinition } from '../server/definition';
import { Server } from '../server/server';
import type { TaskServingOptions } from '../server/tasks/server-tasks';
import { CliFailure } from './errors';

const TYPESCRIPT_EXTENSIONS = new Set(['.ts', '.mts', '.cts', '.tsx']);
const JAVASCRIPT_EXTENSIONS = new Set(['.js', '.mjs', '.cjs']);

function isServer(value: unknown): value is Server {
  const candidate = value as Partial<Server> | null;
  return (
    typeof candidate?.connect === 'function' &&
    typeof candidate.update === 'function' &&
    isDefinition(candidate.definition)
  );
}

function isDefinition(value: unknown): value is ServerDefinition {
  const candidate = value as Partial<ServerDefinition> | null;
  return (
    typeof candidate?.info?.name === 'string' &&
    typeof candidate.capabilities === 'object' &&
    Array.isArray(candidate.protocolVersions) &&
    typeof candidate.withTools === 'function'
  );
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value !== 'object') return typeof value;
  const name = (value as object).constructor?.name;
  return name && name !== 'Object' ? `a ${name}` : 'a plain object';
}

/**
 * Imports `modulePath` (relative to the working directory) and returns the server to serve. `self` is how
 * the CLI was started, for the hint when a TypeScript module needs tsx. `tasks` (`serve --task-store`) are
 * given to the server made of a definition; a module that exports a `Server` made it with its own options.
 */
export async function loadServer(modulePath: string, self: string, tasks?: TaskServingOptions): Promise<Server> {
  const file = resolve(modulePath);
  if (!existsSync(file)) throw new CliFailure(`Cannot find the module "${modulePath}" (no file at ${file})`);
  let exports: { default?: unknown };
  try {
    exports = (await import(pathToFileURL(file).href)) as { default?: unknown };
  } catch (error) {
    throw loadFailure(modulePath, file, self, error);
  }
  const value = exports.default;
  if (isServer(value)) {
    if (tasks === undefined) return value;
    throw new CliFailure(
      `--task-store needs a module that exports a server definition: "${modulePath}" exports a Server, which keeps its tasks as it was made`,
      ['give it the store itself: new Server(definition, { tasks: { store: new LmdbTaskStore({ path }) } })'],
    );
  }
  if (isDefinition(value)) return new Server(value, tasks && { tasks });
  const hint = 'export a server definition (export default defineServer({ ... })) or a Server';
  if (value === undefined) throw new CliFailure(`"${modulePath}" has no default export: ${hint}`);
  throw new CliFailure(`The default export of "${modulePath}" is ${describeValue(value)}, not a server: ${hint}`);
}

function loadFailure(modulePath: string, file: string, self: string, error: unknown): CliFailure {
  const failure = error instanceof Error ? error : new Error(String(error));
  const code = (failure as NodeJS.ErrnoException).code;
  if (TYPESCRIPT_EXTENSIONS.has(extname(file)) && !runningUnderTsx()) {
    // Node before 22.18 refuses .ts outright; later ones strip types but cannot resolve `import './x'` without
    // an extension, nor compile enums and the like. Either way tsx is the answer.
    const reason =
      code === 'ERR_UNKNOWN_FILE_EXTENSION' ? 'this Node cannot import TypeScript without a loader' : failure.message;
    return new CliFailure(
      `Cannot load "${modulePath}": ${reason}`,
      [
        `TypeScript modules need tsx: node --import tsx ${self} serve ${modulePath}`,
        `(from a checkout: npx tsx lib/cli/main.ts serve ${modulePath}), or compile the module to JavaScript.`,
      ],
      { cause: error },
    );
  }
  return new CliFailure(`Cannot load "${modulePath}": ${failure.message}`, whereItFailed(failure, file), {
    cause: error,
  });
}

/** Whether tsx's loader is in this process (`tsx file`, `node --import tsx`, or through NODE_OPTIONS). */
function runningUnderTsx(): boolean {
  return [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((arg) => /\btsx\b/.test(arg));
}

/**
 * Where a load failure happened: the stack frames above Node's module loader. An ES module syntax error
 * carries no location, so `node --check` is asked for it (file, line and a caret under the token).
 */
function whereItFailed(failure: Error, file: string): string[] {
  const frames = (failure.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line));
  const firstInternal = frames.findIndex((line) => line.includes('node:internal'));
  const userFrames = (firstInternal === -1 ? frames : frames.slice(0, firstInternal)).map((line) => line.trim());
  if (userFrames.length > 0 || failure.name !== 'SyntaxError' || !JAVASCRIPT_EXTENSIONS.has(extname(file))) {
    return userFrames;
  }
  const check = spawnSync(process.execPath, ['--check', file], { encoding: 'utf8', timeout: 5000 });
  const lines = (check.stderr ?? '').split('\n');
  const end = lines.findIndex((line) => line.startsWith('SyntaxError'));
  return end > 0 ? lines.slice(0, end).filter((line) => line.trim()) : [];
}
