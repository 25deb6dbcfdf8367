/**
 * The `serve --http` options that say where the endpoint is and who may reach it: its path (`--path`), HTTPS
 * (`--tls-cert` with `--tls-key`), CORS (`--cors-origin`) and the health endpoint (`--health`,
 * `--health-path`). Only checked here; the files are read when serving starts.
 */
import { isSerializedOrigin } from '../../transports/http/cors';
import { DEFAULT_MCP_PATH } from '../../transports/http/endpoint';
import { DEFAULT_HEALTH_PATH } from '../../transports/http/health';
import { DEFAULT_MESSAGE_PATH, DEFAULT_SSE_PATH } from '../../transports/http/legacy-sse-server';
import type { HubHttpSettings } from '../compose/config-http';
import { UsageError } from './errors';

/** The certificate chain and private key files of `--tls-cert` and `--tls-key` (PEM). */
export interface TlsFiles {
  readonly certFile: string;
  readonly keyFile: string;
}

/** The `cors` option as the command line and a hub config give it: data, no predicate. */
export type ServeCors = NonNullable<HubHttpSettings['cors']>;

// An absolute path of RFC 3986 path characters: no query, no fragment, nothing a client would encode.
const PATH = /^\/(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/]|%[0-9A-Fa-f]{2})*$/;

/** `--path`: the Streamable HTTP endpoint's path (default `/mcp`), apart from the legacy HTTP+SSE ones. */
export function parseServePath(text: string | undefined): string {
  if (text === undefined) return DEFAULT_MCP_PATH;
  return checkedPath('--path', text, DEFAULT_MCP_PATH);
}

/** `--health` and `--health-path <path>` (which implies it): where the health endpoint answers, or undefined. */
export function parseHealth(health: boolean, text: string | undefined, mcpPath: string): string | undefined {
  if (text === undefined) return health ? DEFAULT_HEALTH_PATH : undefined;
  const path = checkedPath('--health-path', text, DEFAULT_HEALTH_PATH);
  if (path === mcpPath) throw new UsageError(`--health-path ${path} is the MCP endpoint's path: choose another`);
  return path;
}

function checkedPath(flag: string, text: string, example: string): string {
  if (!PATH.test(text)) throw new UsageError(`${flag} needs a path such as ${example}, got "${text}"`);
  if (text === DEFAULT_SSE_PATH || text === DEFAULT_MESSAGE_PATH) {
    throw new UsageError(
      `${flag} ${text} is taken by the legacy HTTP+SSE endpoints (${DEFAULT_SSE_PATH}, ${DEFAULT_MESSAGE_PATH}): choose another`,
    );
  }
  return text;
}

/** `--cors-origin` (repeatable): the origins whose pages may call the endpoint, or `'*'` alone for any. */
export function parseCorsOrigins(origins: readonly string[] | undefined): ServeCors | undefined {
  if (origins === undefined) return undefined;
  if (origins.includes('*')) {
    if (origins.length > 1) throw new UsageError(`--cors-origin '*' allows every origin: give it alone`);
    return { origins: '*' };
  }
  const bad = origins.find((origin) => !isSerializedOrigin(origin));
  if (bad !== undefined) {
    throw new UsageError(`--cors-origin needs an origin such as https://app.example.com:8443 (or '*'), got "${bad}"`);
  }
  return { origins };
}

/** `--tls-cert` and `--tls-key`: both or neither. */
export function parseTlsFiles(certFile: string | undefined, keyFile: string | undefined): TlsFiles | undefined {
  if (certFile === undefined && keyFile === undefined) return undefined;
  if (certFile === '') throw new UsageError('--tls-cert needs the file of the certificate chain (PEM)');
  if (keyFile === '') throw new UsageError('--tls-key needs the file of the private key (PEM)');
  if (certFile === undefined) throw new UsageError('--tls-key needs --tls-cert <file> too');
  if (keyFile === undefined) throw new UsageError('--tls-cert needs --tls-key <file> too');
  return { certFile, keyFile };
}
