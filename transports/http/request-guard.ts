import type { IncomingMessage } from 'node:http';

export interface OriginPolicy {
  /** Origins (`scheme://host[:port]`) accepted besides localhost ones. */
  readonly allowedOrigins?: readonly string[];
  /** Host header values (`host[:port]`) accepted besides localhost ones. */
  readonly allowedHosts?: readonly string[];
  /** The server listens on a loopback address: other origins and hosts are refused (default true). */
  readonly localhostOnly?: boolean;
}

const LOCAL_HOSTNAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

function hostnameOf(url: string): string | undefined {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

/**
 * The DNS-rebinding defence: why the request must be refused with 403, or undefined when it may pass.
 * An explicit allow list is authoritative; otherwise a localhost-only server accepts only localhost.
 */
export function refuseOrigin(request: IncomingMessage, policy: OriginPolicy): string | undefined {
  const localhostOnly = policy.localhostOnly ?? true;
  const origin = request.headers.origin;
  if (origin !== undefined) {
    const allowed = policy.allowedOrigins?.includes(origin) ?? false;
    const local = LOCAL_HOSTNAMES.has(hostnameOf(origin) ?? '');
    if (!allowed && (policy.allowedOrigins !== undefined || localhostOnly) && !(localhostOnly && local)) {
      return `Origin ${origin} is not allowed`;
    }
  }
  const host = request.headers.host ?? '';
  const hostAllowed = policy.allowedHosts?.includes(host) ?? false;
  const hostLocal = LOCAL_HOSTNAMES.has(hostnameOf(`http://${host}`) ?? '');
  if (!hostAllowed && (policy.allowedHosts !== undefined || localhostOnly) && !(localhostOnly && hostLocal)) {
    return `Host ${host || '(none)'} is not allowed`;
  }
  return undefined;
}

/** The media types an `Accept` (or `Content-Type`) header lists, lower-cased, without parameters. */
export function mediaTypes(header: string | undefined): string[] {
  if (!header) return [];
  return header.split(',').map((part) => part.split(';')[0]!.trim().toLowerCase());
}

export function singleHeader(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
