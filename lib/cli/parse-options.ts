/**
 * What every command's parser shares: `parseArgs` with our own messages, and the checks of a target URL.
 * Nothing here touches the network or the file system.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { closest } from '../compose/suggest';
import { UsageError } from './errors';

export type Options = NonNullable<ParseArgsConfig['options']>;

export const HELP_OPTION: Options = { help: { type: 'boolean', short: 'h' } };

export interface Parsed {
  readonly values: Record<string, string | boolean | string[] | undefined>;
  readonly positionals: string[];
}

/** `parseArgs`, with our own messages: its defaults talk about `--`, which means something else to `call`. */
export function parseOptions(command: string, args: readonly string[], options: Options): Parsed {
  const { values, positionals, tokens } = parseArgs({
    args: [...args],
    options,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  for (const token of tokens) {
    if (token.kind !== 'option') continue;
    const option = options[token.name];
    if (!option) {
      throw new UsageError(`Unknown option "${token.rawName}" for switchboard ${command}${didYouMean(token, options)}`);
    }
    if (option.type === 'string' && token.value === undefined) {
      throw new UsageError(`Option "${token.rawName}" needs a value`);
    }
    if (option.type === 'boolean' && token.value !== undefined) {
      throw new UsageError(`Option "${token.rawName}" takes no value`);
    }
  }
  return { values: values as Parsed['values'], positionals };
}

/** `: did you mean --trace?` for a long option one slip away from a known one (`--trce`), else nothing. */
function didYouMean(token: { readonly name: string; readonly rawName: string }, options: Options): string {
  return token.rawName.startsWith('--') ? didYouMeanWord(token.name, Object.keys(options), '--') : '';
}

/** `: did you mean call?` for a word one slip away from one of `known` (shown after `prefix`), else nothing. */
export function didYouMeanWord(word: string, known: readonly string[], prefix = ''): string {
  const match = closest(word, known);
  return match === undefined ? '' : `: did you mean ${prefix}${match}?`;
}

export function looksLikeUrl(text: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(text);
}

/** An http(s) URL, or a `UsageError` that says what `text` is not. */
export function parseHttpUrl(text: string, role = 'the target is an http(s):// URL, or a command after "--"'): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`"${text}" is not a URL: ${role}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`Unsupported URL scheme "${url.protocol}" in "${text}": use http:// or https://`);
  }
  return url;
}

/** A whole number of milliseconds (0 allowed when `zero` says what it means). */
export function parseMilliseconds(flag: string, text: string, zero?: string): number {
  if (!/^\d+$/.test(text) || (zero === undefined && Number(text) === 0)) {
    const range = zero === undefined ? 'greater than 0' : `(0 ${zero})`;
    throw new UsageError(`--${flag} needs milliseconds ${range}, got "${text}"`);
  }
  return Number(text);
}

/** `--trace-file`'s path: any but the empty one. */
export function parseTraceFile(text: string | undefined): string | undefined {
  if (text === '') throw new UsageError('--trace-file needs the path of the file to write');
  return text;
}
