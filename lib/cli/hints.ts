/**
 * "How to connect" text printed by `serve --http` and the demo: `switchboard call` lines, the MCP inspector
 * command and an `mcpServers` snippet whose commands work from any working directory.
 */
import { createRequire } from 'node:module';
import { isAbsolute, join, resolve } from 'node:path';

export interface StdioCommand {
  readonly command: string;
  readonly args: readonly string[];
}

/** Quotes `word` for a POSIX shell when it needs it. */
export function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

export function commandLine(words: readonly string[]): string {
  return words.map(shellQuote).join(' ');
}

/** A `switchboard call` line; `cli` is how to run switchboard (`npx switchboard`, ...). */
export function callLine(cli: string, url: string, method: string, params?: object): string {
  return `${cli} ${commandLine(['call', url, method, ...(params ? [JSON.stringify(params)] : [])])}`;
}

/** The official MCP inspector, listing the tools of a Streamable HTTP server. */
export function inspectorLine(url: string): string {
  return `npx @modelcontextprotocol/inspector --cli ${shellQuote(url)} --transport http --method tools/list`;
}

/** The `mcpServers` block of a Claude Desktop configuration (VS Code's mcp.json takes the same entries). */
export function mcpServersSnippet(servers: Readonly<Record<string, StdioCommand>>): string {
  return JSON.stringify({ mcpServers: servers }, null, 2);
}

const LOADER_FLAGS = new Set(['--import', '--require', '-r', '--loader', '--experimental-loader']);

/**
 * How to run `script` with this same Node and the same loaders (tsx, when we run under it), from any working
 * directory: a loader given by package name (`--import tsx`) is resolved to its file now, from here.
 */
export function nodeCommand(script: string, args: readonly string[]): StdioCommand {
  return { command: process.execPath, args: [...absoluteExecArgv(), resolve(script), ...args] };
}

function absoluteExecArgv(): string[] {
  const require = createRequire(join(process.cwd(), 'noop.js'));
  const absolute = (specifier: string): string => {
    if (specifier.startsWith('file:') || isAbsolute(specifier)) return specifier;
    if (specifier.startsWith('.')) return resolve(specifier);
    try {
      return require.resolve(specifier);
    } catch {
      return specifier;
    }
  };
  const result: string[] = [];
  const argv = process.execArgv;
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!;
    const equals = arg.indexOf('=');
    const flag = equals === -1 ? arg : arg.slice(0, equals);
    if (!LOADER_FLAGS.has(flag)) result.push(arg);
    else if (equals !== -1) result.push(`${flag}=${absolute(arg.slice(equals + 1))}`);
    else if (index + 1 < argv.length) result.push(arg, absolute(argv[++index]!));
    else result.push(arg);
  }
  return result;
}
