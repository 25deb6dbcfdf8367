/**
 * The authorization settings of a hub config: per HTTP (or SSE) server, how the hub authorizes itself to it
 * (`auth`: `oauth`, `bearer`, `client_credentials`), and, at the top level, what the hub's own HTTP endpoint
 * requires of its clients (`auth`: the resource server options of `createMcpHttpHandler`).
 *
 * ```json
 * {
 *   "mcpServers": {
 *     "notes": { "url": "https://notes.example.com/mcp", "auth": { "type": "oauth", "scope": "notes:read" } },
 *     "search": { "url": "https://search.example.com/mcp", "auth": { "type": "bearer", "tokenEnv": "SEARCH_TOKEN" } },
 *     "jobs": {
 *       "url": "https://jobs.example.com/mcp",
 *       "auth": { "type": "client_credentials", "clientId": "hub", "clientSecret": "${JOBS_SECRET}" }
 *     }
 *   },
 *   "auth": {
 *     "resource": "https://hub.example.com/mcp",
 *     "authorizationServers": ["https://login.example.com"],
 *     "jwks": "https://login.example.com/jwks",
 *     "requiredScopes": ["hub:use"],
 *     "dpop": { "required": true }
 *   }
 * }
 * ```
 */
import { isPlainObject } from '../jsonrpc/classify';
import { ASYMMETRIC_ALGORITHMS } from '../auth/server/algorithms';
import { describe, isUrl, type Reader } from './config-reader';
import { hasAuthorizationHeader, type UpstreamAuth } from './upstream-auth';

/**
 * What the hub's HTTP endpoint requires of its clients: a plain-data form of the `auth` option of
 * `createMcpHttpHandler` (`ResourceServerOptions`), so that reading a config needs no OAuth library.
 */
export interface HubEndpointAuth {
  /** The hub endpoint's canonical URL: the audience its clients' tokens must name. */
  readonly resource: string;
  /** The issuers clients may get tokens from. */
  readonly authorizationServers: readonly string[];
  /** JWT access tokens, checked with this key set. */
  readonly jwks?: string;
  /** Opaque tokens, checked by RFC 7662 introspection. */
  readonly introspection?: {
    readonly endpoint: string;
    readonly clientId: string;
    readonly clientSecret?: string;
    readonly issuer?: string;
    readonly authMethod?: 'client_secret_basic' | 'client_secret_post' | 'none';
  };
  readonly scopesSupported?: readonly string[];
  readonly requiredScopes?: readonly string[];
  /** DPoP-bound tokens (accepted by default): `false` refuses the scheme, `required` refuses Bearer tokens. */
  readonly dpop?:
    false | { readonly required?: boolean; readonly nonce?: boolean; readonly algorithms?: readonly string[] };
}

const AUTH_TYPES = ['oauth', 'bearer', 'client_credentials'] as const;
type AuthType = (typeof AUTH_TYPES)[number];
const UPSTREAM_AUTH_KEYS: Readonly<Record<AuthType, readonly string[]>> = {
  oauth: ['type', 'scope', 'clientName', 'clientId', 'clientSecret'],
  bearer: ['type', 'tokenEnv'],
  client_credentials: ['type', 'clientId', 'clientSecret', 'scope', 'clientName'],
};
const ALL_UPSTREAM_AUTH_KEYS = new Set(Object.values(UPSTREAM_AUTH_KEYS).flat());
const ENDPOINT_AUTH_KEYS = new Set([
  'resource',
  'authorizationServers',
  'jwks',
  'introspection',
  'scopesSupported',
  'requiredScopes',
  'dpop',
]);
const DPOP_KEYS = new Set(['required', 'nonce', 'algorithms']);
const INTROSPECTION_KEYS = new Set(['endpoint', 'clientId', 'clientSecret', 'issuer', 'authMethod']);
const INTROSPECTION_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none'] as const;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * A server entry's `auth` (undefined when absent or wrong: the reader has the problem). `headers` are the
 * entry's: an `Authorization` among them and an `auth` are one too many.
 */
export function readUpstreamAuth(
  value: unknown,
  where: string,
  reader: Reader,
  headers: Readonly<Record<string, string>> | undefined,
): UpstreamAuth | undefined {
  if (value === undefined) return undefined;
  if (!isPlainObject(value)) return reader.fail(where, `must be an object with a "type", got ${describe(value)}`);
  if (hasAuthorizationHeader(headers)) {
    reader.fail(where, 'and an Authorization header are both given: keep one (the header is sent as it is)');
  }
  const type = value.type;
  if (!AUTH_TYPES.includes(type as AuthType)) {
    return reader.fail(
      `${where}.type`,
      `must be one of ${AUTH_TYPES.map((name) => `"${name}"`).join(', ')}, got ${describe(type)}`,
    );
  }
  const kind = type as AuthType;
  reader.unknownKeys(value, new Set(UPSTREAM_AUTH_KEYS[kind]), where, {
    suggestions: ALL_UPSTREAM_AUTH_KEYS,
    misplaced: (key) => (ALL_UPSTREAM_AUTH_KEYS.has(key) ? `it is not a setting of "type": "${kind}"` : undefined),
  });
  const scope = reader.string(value.scope, `${where}.scope`);
  const clientName = reader.string(value.clientName, `${where}.clientName`);
  const named = { ...(scope !== undefined && { scope }), ...(clientName !== undefined && { clientName }) };
  switch (kind) {
    case 'bearer': {
      const token = bearerToken(value.tokenEnv, `${where}.tokenEnv`, reader);
      return token === undefined ? undefined : { type: 'bearer', token };
    }
    case 'client_credentials': {
      const clientId = reader.requiredString(value.clientId, `${where}.clientId`, { expand: true });
      const clientSecret = reader.requiredString(value.clientSecret, `${where}.clientSecret`, { expand: true });
      if (clientId === undefined || clientSecret === undefined) return undefined;
      return { type: 'client_credentials', clientId, clientSecret, ...named };
    }
    case 'oauth': {
      const clientId = reader.string(value.clientId, `${where}.clientId`, { expand: true });
      const clientSecret = reader.string(value.clientSecret, `${where}.clientSecret`, { expand: true });
      if (clientSecret !== undefined && clientId === undefined) {
        return reader.fail(where, 'has a "clientSecret" without the "clientId" it belongs to');
      }
      return {
        type: 'oauth',
        ...named,
        ...(clientId !== undefined && { clientId }),
        ...(clientSecret !== undefined && { clientSecret }),
      };
    }
  }
}

/** The token in the environment variable `tokenEnv` names: missing or empty is a mistake naming it. */
function bearerToken(value: unknown, where: string, reader: Reader): string | undefined {
  const name = reader.requiredString(value, where);
  if (name === undefined) return undefined;
  if (!ENV_NAME.test(name)) return reader.fail(where, `must name an environment variable, got ${describe(name)}`);
  const token = reader.variable(name);
  if (token === undefined || token === '') {
    return reader.fail(
      where,
      `names ${name}, which is ${token === undefined ? 'not set' : 'empty'} in the environment`,
    );
  }
  return token;
}

/** The top-level `auth`: what the hub's own HTTP endpoint requires. */
export function readEndpointAuth(value: unknown, reader: Reader): HubEndpointAuth | undefined {
  const where = 'auth';
  if (value === undefined) return undefined;
  if (!isPlainObject(value)) return reader.fail(where, `must be an object, got ${describe(value)}`);
  reader.unknownKeys(value, ENDPOINT_AUTH_KEYS, where);
  const resource = url(
    reader.requiredString(value.resource, `${where}.resource`, { expand: true }),
    `${where}.resource`,
    reader,
  );
  const servers = reader.strings(value.authorizationServers, `${where}.authorizationServers`, { expand: true });
  if (value.authorizationServers === undefined) reader.fail(`${where}.authorizationServers`, 'is required');
  else if (servers?.length === 0) reader.fail(`${where}.authorizationServers`, 'must name at least one issuer');
  servers?.forEach((server, index) => url(server, `${where}.authorizationServers[${index}]`, reader));
  const jwks = url(reader.string(value.jwks, `${where}.jwks`, { expand: true }), `${where}.jwks`, reader);
  const introspection = readIntrospection(value.introspection, `${where}.introspection`, reader);
  if ((value.jwks === undefined) === (value.introspection === undefined)) {
    reader.fail(where, 'needs one way to check tokens: "jwks" (JWT access tokens) or "introspection" (opaque tokens)');
  }
  const scopesSupported = reader.strings(value.scopesSupported, `${where}.scopesSupported`);
  const requiredScopes = reader.strings(value.requiredScopes, `${where}.requiredScopes`);
  const dpop = readDpop(value.dpop, `${where}.dpop`, reader);
  if (resource === undefined || !servers || servers.length === 0 || (jwks ?? introspection) === undefined)
    return undefined;
  return {
    resource,
    authorizationServers: servers,
    ...(jwks !== undefined && { jwks }),
    ...(introspection && { introspection }),
    ...(scopesSupported && { scopesSupported }),
    ...(requiredScopes && { requiredScopes }),
    ...(dpop !== undefined && { dpop }),
  };
}

function readDpop(value: unknown, where: string, reader: Reader): HubEndpointAuth['dpop'] {
  if (value === undefined || value === false) return value;
  if (!isPlainObject(value)) return reader.fail(where, `must be false or an object, got ${describe(value)}`);
  reader.unknownKeys(value, DPOP_KEYS, where);
  const required = reader.boolean(value.required, `${where}.required`);
  const nonce = reader.boolean(value.nonce, `${where}.nonce`);
  const algorithms = reader.strings(value.algorithms, `${where}.algorithms`);
  algorithms?.forEach((algorithm, index) => {
    if (!ASYMMETRIC_ALGORITHMS.includes(algorithm)) {
      reader.fail(
        `${where}.algorithms[${index}]`,
        `must be one of ${ASYMMETRIC_ALGORITHMS.join(', ')}, got ${describe(algorithm)}`,
      );
    }
  });
  return {
    ...(required !== undefined && { required }),
    ...(nonce !== undefined && { nonce }),
    ...(algorithms && { algorithms }),
  };
}

function readIntrospection(value: unknown, where: string, reader: Reader): HubEndpointAuth['introspection'] {
  if (value === undefined) return undefined;
  if (!isPlainObject(value)) return reader.fail(where, `must be an object, got ${describe(value)}`);
  reader.unknownKeys(value, INTROSPECTION_KEYS, where);
  const endpoint = url(
    reader.requiredString(value.endpoint, `${where}.endpoint`, { expand: true }),
    `${where}.endpoint`,
    reader,
  );
  const clientId = reader.requiredString(value.clientId, `${where}.clientId`, { expand: true });
  const clientSecret = reader.string(value.clientSecret, `${where}.clientSecret`, { expand: true });
  const issuer = reader.string(value.issuer, `${where}.issuer`, { expand: true });
  const authMethod = reader.oneOf(value.authMethod, `${where}.authMethod`, INTROSPECTION_AUTH_METHODS);
  if (endpoint === undefined || clientId === undefined) return undefined;
  return {
    endpoint,
    clientId,
    ...(clientSecret !== undefined && { clientSecret }),
    ...(issuer !== undefined && { issuer }),
    ...(authMethod !== undefined && { authMethod }),
  };
}

/** `text` when it is an absolute URL; else a problem. */
function url(text: string | undefined, where: string, reader: Reader): string | undefined {
  if (text === undefined || isUrl(text)) return text;
  return reader.fail(where, `is not a URL: ${describe(text)}`);
}
