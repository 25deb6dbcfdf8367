/**
 * The header lists of a Streamable HTTP client session's requests: the user's extra headers, the current
 * token, the session, the negotiated revision, then each request's own. A POST's list is made again only
 * when one of those changed (most POSTs reuse the last one).
 */
import type { HttpAuthorization } from '../../lib/auth/http-authorization';
import { headerList, type HeaderList, type HttpTarget } from './client-request';

const POST_HEADERS = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };

export class SessionHeaders {
  /** The revision the handshake settled on (sent from then on). */
  protocolVersion: string | undefined;
  private lastPost: { session?: string; version?: string; authorization?: string; list: HeaderList } | undefined;

  constructor(
    private readonly target: HttpTarget,
    private readonly extra: Readonly<Record<string, string>> | undefined,
    private readonly authorization: HttpAuthorization | undefined,
  ) {}

  /** The headers of a request on `session` (the revision header left out when `own` sets it undefined). */
  of(session: string | undefined, own: Record<string, string | undefined>): HeaderList {
    // Only with an authorization configured: otherwise an `Authorization` among the extra headers stands.
    const token = this.authorization && { authorization: this.authorization.authorization() };
    return headerList(this.target, this.extra, {
      ...token,
      'mcp-session-id': session,
      'mcp-protocol-version': this.protocolVersion,
      ...own,
    });
  }

  /** The opening `initialize`: no session, and its revision is in its body only. */
  opening(): HeaderList {
    return this.of(undefined, { ...POST_HEADERS, 'mcp-protocol-version': undefined });
  }

  post(session: string | undefined): HeaderList {
    const made = this.lastPost;
    const version = this.protocolVersion;
    const authorization = this.authorization?.authorization();
    if (made && made.session === session && made.version === version && made.authorization === authorization) {
      return made.list;
    }
    const list = this.of(session, POST_HEADERS);
    this.lastPost = { session, version, authorization, list };
    return list;
  }
}
