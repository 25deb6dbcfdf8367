/**
 * "Did you mean" for `switchboard call tools/call` naming a tool the server does not have: after the server
 * refused the call as invalid params (-32602, which unknown tools get), its tool list is read and compared.
 * The closest name by spelling (a hub's prefixed names included: `fs__raed`, did you mean `fs__read`), else
 * the names that end with the one given after a separator (`read`, on a hub: `fs__read`).
 */
import type { Client } from '../client/client';
import { closest } from '../compose/suggest';
import { ErrorCode, McpError } from '../jsonrpc/errors';
import { quote, quoteList } from '../client/checks';

/** Suffix matches named at most: more would be a list, not a suggestion. */
const MAX_SUFFIX_MATCHES = 3;

/** The line to add under the failure of `tools/call` for `name`, or undefined (a known tool, no tool list). */
export async function unknownToolHint(client: Client, name: unknown, error: unknown): Promise<string | undefined> {
  if (typeof name !== 'string' || !(error instanceof McpError) || error.code !== ErrorCode.InvalidParams) {
    return undefined;
  }
  let names: string[];
  try {
    names = (await client.listTools()).map((tool) => tool.name);
  } catch {
    return undefined; // no list, no hint: the server's own error still says what went wrong
  }
  if (names.includes(name)) return undefined;
  const near = closest(name, names);
  // Sorted: a hub lists its upstreams' tools in the order they answered.
  const suffixed = names.filter((known) => endsAfterSeparator(known, name)).sort();
  const guesses = near !== undefined ? [near] : suffixed.length <= MAX_SUFFIX_MATCHES ? suffixed : [];
  const known = `the server lists ${names.length} tool${names.length === 1 ? '' : 's'}`;
  if (guesses.length === 0) return `no tool is named ${quote(name)} (${known}: see tools/list)`;
  const which = guesses.length === 1 ? quote(guesses[0]!) : `one of ${quoteList(guesses)}`;
  return `no tool is named ${quote(name)}: did you mean ${which}?`;
}

/** `fs__read` ends with `read` after a separator (a character that is not a letter or digit). */
function endsAfterSeparator(known: string, name: string): boolean {
  if (name === '' || known.length <= name.length || !known.endsWith(name)) return false;
  return /[^\p{L}\p{N}]/u.test(known[known.length - name.length - 1]!);
}
