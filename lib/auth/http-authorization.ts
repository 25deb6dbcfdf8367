/**
 * What an HTTP client transport asks of whatever authorizes its requests (the OAuth client of
 * lib/auth/client, or anything a user writes): the header to send, and what to do when the server refuses.
 * The transports depend on this port only.
 */

/** A refusal the transport got: 401, or 403 with a `WWW-Authenticate` challenge. */
export interface AuthorizationRefusal {
  readonly status: number;
  /** The response's `WWW-Authenticate` header, joined when repeated. */
  readonly wwwAuthenticate: string | undefined;
  /** The endpoint that refused. */
  readonly url: URL;
  /** The `Authorization` value the refused request carried (undefined: it carried none). */
  readonly sentAuthorization: string | undefined;
  /** The response's `DPoP-Nonce` header (RFC 9449 §9), when it had one. */
  readonly dpopNonce?: string;
}

export interface HttpAuthorization {
  /** Called once before the first request: reads what was stored (tokens of an earlier run). */
  prepare?(): Promise<void>;
  /**
   * The `Authorization` header for the next request, or undefined while there is no token. Read for every
   * request: it must be cheap (no I/O).
   */
  authorization(): string | undefined;
  /**
   * Headers a request needs besides `Authorization`, made for that request (a DPoP proof: signed, so
   * asynchronous); undefined when none is needed, which keeps the request path synchronous.
   */
  requestHeaders?(method: string, url: URL): Promise<Readonly<Record<string, string>>> | undefined;
  /**
   * The server refused a request. Resolves true when the request should be sent again (a token was
   * obtained, refreshed or stepped up), false when it should fail with the refusal; rejects with why
   * authorization failed.
   */
  refused(refusal: AuthorizationRefusal): Promise<boolean>;
}
