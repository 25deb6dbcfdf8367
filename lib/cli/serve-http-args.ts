/**
 * The `serve --http` options that say where the endpoint is: its path (`--path`) and HTTPS (`--tls-cert` with
 * `--tls-key`). Only checked here; the files are read when serving starts.
 */
import { DEFAULT_MCP_PATH } from '../../transports/http/endpoint';
import { DEFAULT_MESSAGE_PATH, DEFAULT_SSE_PATH } from '../../transports/http/legacy-sse-server';
import { UsageError } from './errors';

/** The certificate chain and private key files of `--tls-cert` and `--tls-key` (PEM). */
export interface TlsFiles {
  readonly certFile: string;
  readonly keyFile: string;
}

// An absolute path of RFC 3986 path characters: no query, no fragment, nothing a client would encode.
const PATH = /^\/(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/]|%[0-9A-Fa-f]{2})*$/;

/** `--path`: the Streamable HTTP endpoint's path (default `/mcp`), apart from the legacy HTTP+SSE ones. */
export function parseServePath(text: string | undefined): string {
  if (text === undefined) return DEFAULT_MCP_PATH;
  if (!PATH.test(text)) throw new UsageError(`--path needs a path such as ${DEFAULT_MCP_PATH}, got "${text}"`);
  if (text === DEFAULT_SSE_PATH || text === DEFAULT_MESSAGE_PATH) {
    throw new UsageError(
      `--path ${text} is taken by the legacy HTTP+SSE endpoints (${DEFAULT_SSE_PATH}, ${DEFAULT_MESSAGE_PATH}): choose another`,
    );
  }
  return text;
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
