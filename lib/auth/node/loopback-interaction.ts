/**
 * The authorization step of a command-line OAuth flow: the user is shown the authorization URL (printed,
 * opened in a browser: the caller's `show`), and the loopback redirect receives where the browser came
 * back to. One trip: the listener answers one redirect, so a second authorization in the same flow fails.
 * Only an `https:` URL (or `http:` on this machine) is ever shown.
 */
import type { AuthorizationInteraction } from '../client/authorization-code';
import { requireEndpointUrl } from '../client/http';
import type { LoopbackRedirect } from './loopback-redirect';

export function loopbackInteraction(redirect: LoopbackRedirect, show: (url: URL) => void): AuthorizationInteraction {
  let asked = false;
  return {
    redirectUri: redirect.redirectUri,
    async authorize(url) {
      requireEndpointUrl(url.href, 'authorization_endpoint', 'the authorization URL the login would show');
      if (asked) throw new Error('The server asked for a second authorization during the login');
      asked = true;
      show(url);
      return redirect.result;
    },
  };
}
