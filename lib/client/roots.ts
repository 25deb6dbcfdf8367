/**
 * Pure validation for the roots the application gives the client (answered to `roots/list`).
 */
import { isPlainObject } from '../jsonrpc/classify';
import { deepFreeze } from '../core/freeze';
import type { Root } from '../protocol/client-features';
import type { Meta } from '../protocol/types';

// RFC 3986 characters only: the official schema checks `uri` with `format: "uri"`.
const URI_CHARACTERS = /^(?:[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*$/;

const checked = new WeakSet<object>();

function uriProblem(uri: string): string | undefined {
  if (!/^file:\/\//i.test(uri)) return 'must be a file:// URI';
  if (!URI_CHARACTERS.test(uri))
    return 'is not a valid URI: percent-encode spaces and other characters (url.pathToFileURL(path).href does)';
  try {
    return new URL(uri).protocol === 'file:' ? undefined : 'must be a file:// URI';
  } catch {
    return 'is not a valid URI';
  }
}

function copyRoot(entry: unknown, index: number): Root {
  const where = `roots[${index}]`;
  if (!isPlainObject(entry)) throw new TypeError(`${where} must be an object with a uri, got ${JSON.stringify(entry)}`);
  const { uri, name, _meta } = entry;
  if (typeof uri !== 'string') throw new TypeError(`${where}.uri must be a string, got ${JSON.stringify(uri)}`);
  const problem = uriProblem(uri);
  if (problem) throw new TypeError(`${where}.uri ${JSON.stringify(uri)} ${problem}`);
  if (name !== undefined && typeof name !== 'string')
    throw new TypeError(`${where}.name must be a string, got ${JSON.stringify(name)}`);
  if (_meta !== undefined && !isPlainObject(_meta)) throw new TypeError(`${where}._meta must be an object`);
  const root: { uri: string; name?: string; _meta?: Meta } = { uri };
  if (name !== undefined) root.name = name;
  if (_meta !== undefined) {
    try {
      root._meta = deepFreeze(structuredClone(_meta));
    } catch (error) {
      throw new TypeError(`${where}._meta must be JSON data`, { cause: error });
    }
  }
  return Object.freeze(root);
}

/**
 * Validates the roots an application gives the client and returns a deep-frozen copy that can be shared by
 * reference (passing that copy back returns it unchanged). Every `uri` must be a `file://` URI that `new URL`
 * parses and that uses RFC 3986 characters only; `name` must be a string and `_meta` an object. Keys other than
 * `uri`, `name` and `_meta` are dropped. Throws `TypeError` naming the offending entry.
 */
export function checkRoots(roots: unknown): readonly Root[] {
  if (typeof roots === 'object' && roots !== null && checked.has(roots)) return roots as readonly Root[];
  if (!Array.isArray(roots))
    throw new TypeError(`roots must be an array, got ${JSON.stringify(roots) ?? typeof roots}`);
  const copy = Object.freeze(roots.map(copyRoot));
  checked.add(copy);
  return copy;
}
