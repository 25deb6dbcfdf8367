/**
 * Which URLs name this machine: the only places plain `http:` is allowed on the auth path (a server on the
 * developer's machine, the tests). Both the OAuth client and the resource server's outbound fetches use it.
 */

/** `localhost`, `*.localhost`, 127.0.0.0/8 or `[::1]`. */
export function isLoopback(url: string | URL): boolean {
  let host: string;
  try {
    host = (typeof url === 'string' ? new URL(url) : url).hostname.toLowerCase();
  } catch {
    return false;
  }
  return host === 'localhost' || host.endsWith('.localhost') || /^127(\.\d{1,3}){3}$/.test(host) || host === '[::1]';
}

/** `https:`, or `http:` on a loopback host: a URL the auth path may send a request to (or a user to). */
export function isSecureOrLoopback(url: URL): boolean {
  return url.protocol === 'https:' || (url.protocol === 'http:' && isLoopback(url));
}
