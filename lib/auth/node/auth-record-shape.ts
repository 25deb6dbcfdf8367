/**
 * Checks that a value read from disk has the shape of an `AuthRecord`, and copies out only the fields the
 * port defines: a file a user edited, a truncated write or another program's JSON must never reach the flows
 * as if it were a record.
 */
import { isPlainObject } from '../../jsonrpc/classify';
import type { AuthRecord, StoredClient, StoredTokens } from '../token-store';

type Fields = Record<string, unknown>;

const isString = (value: unknown): value is string => typeof value === 'string';
const isFiniteNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);
const isStringList = (value: unknown): value is string[] => Array.isArray(value) && value.every(isString);

/** Copies `name` from `source` into `target` when present; false when present with the wrong type. */
function copyOptional(source: Fields, target: Fields, name: string, check: (value: unknown) => boolean): boolean {
  const value = source[name];
  if (value === undefined) return true;
  if (!check(value)) return false;
  target[name] = Array.isArray(value) ? [...value] : value;
  return true;
}

function parseClient(value: unknown): StoredClient | undefined {
  if (!isPlainObject<Fields>(value) || !isString(value['issuer']) || !isString(value['clientId'])) return undefined;
  const client: Fields = { issuer: value['issuer'], clientId: value['clientId'] };
  const ok =
    copyOptional(value, client, 'clientSecret', isString) &&
    copyOptional(value, client, 'clientSecretExpiresAt', isFiniteNumber) &&
    copyOptional(value, client, 'tokenEndpointAuthMethod', isString) &&
    copyOptional(value, client, 'redirectUris', isStringList);
  return ok ? (client as unknown as StoredClient) : undefined;
}

function parseTokens(value: unknown): StoredTokens | undefined {
  if (!isPlainObject<Fields>(value) || !isString(value['accessToken']) || !isString(value['tokenType']))
    return undefined;
  const tokens: Fields = { accessToken: value['accessToken'], tokenType: value['tokenType'] };
  const ok =
    copyOptional(value, tokens, 'expiresAt', isFiniteNumber) &&
    copyOptional(value, tokens, 'refreshToken', isString) &&
    copyOptional(value, tokens, 'scope', isString) &&
    copyOptional(value, tokens, 'issuer', isString);
  return ok ? (tokens as unknown as StoredTokens) : undefined;
}

/** The record `value` holds, or undefined when it is not one (any field of the wrong type). */
export function parseAuthRecord(value: unknown): AuthRecord | undefined {
  if (!isPlainObject<Fields>(value)) return undefined;
  const record: { client?: StoredClient; tokens?: StoredTokens } = {};
  if (value['client'] !== undefined) {
    const client = parseClient(value['client']);
    if (!client) return undefined;
    record.client = client;
  }
  if (value['tokens'] !== undefined) {
    const tokens = parseTokens(value['tokens']);
    if (!tokens) return undefined;
    record.tokens = tokens;
  }
  return record;
}
