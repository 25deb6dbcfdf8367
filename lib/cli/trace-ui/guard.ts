/**
 * Who may read the trace UI: on a loopback address, pages of this machine that name it in their Host header
 * (a DNS rebinding page names its own host, and is refused); elsewhere, whoever presents the token printed
 * with the URL (compared in constant time).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** Whether `host` is a loopback address (or `localhost`): the trace UI then needs no token. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127(?:\.\d{1,3}){3}$/.test(host);
}

/** A fresh token: 24 random bytes, URL-safe base64. */
export function newToken(): string {
  return randomBytes(24).toString('base64url');
}

export interface Guard {
  /** The listener's port: a loopback Host header must name it. */
  readonly port: number;
  /** Required (as `?token=`) when listening off loopback; absent on loopback. */
  readonly token?: string;
}

/** Why `request` is refused (its HTTP status and a line saying why), or undefined when it may proceed. */
export function refusal(
  request: IncomingMessage,
  url: URL,
  guard: Guard,
): { status: number; text: string } | undefined {
  if (guard.token !== undefined) {
    const given = url.searchParams.get('token');
    return given !== null && sameSecret(given, guard.token)
      ? undefined
      : { status: 401, text: 'This trace UI needs the token printed with its URL (?token=...)\n' };
  }
  const allowed = ['127.0.0.1', 'localhost', '[::1]'].map((name) => `${name}:${guard.port}`);
  if (!allowed.includes((request.headers.host ?? '').toLowerCase())) {
    return { status: 403, text: `This trace UI answers requests for ${allowed.join(', ')} only\n` };
  }
  return undefined;
}

/** Compares digests, so neither the length nor the content of the token leaks through timing. */
function sameSecret(given: string, secret: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(given), digest(secret));
}
