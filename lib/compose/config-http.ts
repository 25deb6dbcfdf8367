/**
 * A hub config's `switchboard.http`: what `switchboard serve --http` serves the hub with, by the names of the
 * HTTP handler's options: every `HttpLimits` key, `allowedHosts`, `allowedOrigins`, `cors` and `health`.
 *
 * ```json
 * { "http": { "maxSessionsPerClient": 4, "cors": { "origins": ["https://app.example"] }, "health": "/healthz" } }
 * ```
 *
 * Shapes are checked here; what only the handler knows (whether each origin and header name is well formed)
 * is checked when it is made.
 */
import { isPlainObject } from '../jsonrpc/classify';
import { HTTP_LIMIT_NAMES, type HttpLimits } from '../../transports/http/limits';
import type { HubEndpointAuth } from './config-auth';
import { describe, type Json, type Reader } from './config-reader';

/** What a config's `switchboard.http` asks of the HTTP server that serves the hub (`switchboard serve --http`). */
export interface HubHttpSettings {
  readonly limits: Partial<HttpLimits>;
  readonly allowedHosts: readonly string[];
  readonly allowedOrigins: readonly string[];
  /** Browser pages that may call the hub: the handler's `cors` option as data (no predicate; `'*'` needs `auth`). */
  readonly cors?: {
    readonly origins: readonly string[] | '*';
    readonly allowHeaders?: readonly string[];
    readonly exposeHeaders?: readonly string[];
    readonly maxAgeSeconds?: number;
  };
  /** The health endpoint (the handler's `health`): `true` for `/health`, or a path. */
  readonly health?: boolean | string;
  /** The top-level `auth`: what the hub's endpoint requires of its clients (the handler's `auth` option). */
  readonly auth?: HubEndpointAuth;
}

const HTTP_KEYS = new Set<string>([...HTTP_LIMIT_NAMES, 'allowedHosts', 'allowedOrigins', 'cors', 'health']);
const CORS_KEYS = new Set(['origins', 'allowHeaders', 'exposeHeaders', 'maxAgeSeconds']);
const WHERE = 'switchboard.http';

/** `switchboard.http`; `authenticated`: whether the config has a top-level `auth` (`"origins": "*"` needs it). */
export function readHttpSettings(value: unknown, reader: Reader, authenticated: boolean): HubHttpSettings {
  const settings = { limits: {}, allowedHosts: [], allowedOrigins: [] };
  if (value === undefined) return settings;
  if (!isPlainObject<Json>(value)) {
    reader.fail(WHERE, `must be an object, got ${describe(value)}`);
    return settings;
  }
  reader.unknownKeys(value, HTTP_KEYS, WHERE);
  const limits: Partial<Record<keyof HttpLimits, number>> = {};
  for (const name of HTTP_LIMIT_NAMES) {
    const limit = reader.integer(value[name], `${WHERE}.${name}`, 1);
    if (limit !== undefined) limits[name] = limit;
  }
  const cors = readCors(value.cors, reader, authenticated);
  const health = readHealth(value.health, reader);
  return {
    limits,
    allowedHosts: reader.strings(value.allowedHosts, `${WHERE}.allowedHosts`, { expand: true }) ?? [],
    allowedOrigins: reader.strings(value.allowedOrigins, `${WHERE}.allowedOrigins`, { expand: true }) ?? [],
    ...(cors && { cors }),
    ...(health !== undefined && { health }),
  };
}

type HubCorsSettings = NonNullable<HubHttpSettings['cors']>;

function readCors(value: unknown, reader: Reader, authenticated: boolean): HubCorsSettings | undefined {
  const where = `${WHERE}.cors`;
  if (value === undefined) return undefined;
  if (!isPlainObject<Json>(value)) {
    return reader.fail(
      where,
      `must be an object such as { "origins": ["https://app.example"] }, got ${describe(value)}`,
    );
  }
  reader.unknownKeys(value, CORS_KEYS, where);
  let origins: readonly string[] | '*' | undefined;
  if (value.origins === '*') {
    origins = authenticated
      ? '*'
      : reader.fail(
          `${where}.origins`,
          `"*" needs the top-level "auth": without a token to require, any page the user visits could call the hub's tools. List the origins`,
        );
  } else if (value.origins === undefined) {
    reader.fail(`${where}.origins`, 'is required: a list of origins, or "*" with "auth"');
  } else {
    origins = reader.strings(value.origins, `${where}.origins`, { expand: true });
  }
  const allowHeaders = reader.strings(value.allowHeaders, `${where}.allowHeaders`);
  const exposeHeaders = reader.strings(value.exposeHeaders, `${where}.exposeHeaders`);
  const maxAgeSeconds = reader.integer(value.maxAgeSeconds, `${where}.maxAgeSeconds`);
  if (origins === undefined) return undefined;
  return {
    origins,
    ...(allowHeaders && { allowHeaders }),
    ...(exposeHeaders && { exposeHeaders }),
    ...(maxAgeSeconds !== undefined && { maxAgeSeconds }),
  };
}

function readHealth(value: unknown, reader: Reader): boolean | string | undefined {
  if (value === undefined || typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^\/[^?#\s]*$/.test(value)) return value;
  return reader.fail(`${WHERE}.health`, `must be true, false or a path starting with "/", got ${describe(value)}`);
}
