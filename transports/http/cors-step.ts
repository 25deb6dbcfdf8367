/**
 * CORS on a request of the server port: the decisions of `cors.ts` written to the response. Both server transports
 * run this step first when they have a `cors` option, so each used on its own answers browsers as the combined
 * endpoint does.
 */
import type { ServerRequest, ServerReply } from './server-port';
import { corsPolicy, decideCors, VARY_ORIGIN, type CorsOptions, type CorsPolicy } from './cors';
import { isListedOrigin, refuseOrigin, refuseWithHeaders, singleHeader, type OriginPolicy } from './request-guard';

/** A transport's CORS step, made once from its options. */
export interface CorsStep {
  /** The transport's origin policy, whose Origin check also accepts the origins CORS allows (Host check unchanged). */
  readonly guard: OriginPolicy;
  /**
   * Answers a preflight (or refuses it), or sets the CORS headers of the answer the transport will write;
   * true when it answered. The origin guard has the last word: a request it refuses gets its 403 here, with
   * no CORS headers.
   */
  answered(request: ServerRequest, response: ServerReply): boolean;
}

/**
 * The CORS step of a transport given `cors` and its origin policy `guard`, or undefined without `cors`;
 * `authenticated`: whether the transport requires a token (`'*'` is refused without one: a RangeError).
 */
export function corsStep(
  cors: CorsOptions | undefined,
  authenticated: boolean,
  guard: OriginPolicy,
): CorsStep | undefined {
  if (!cors) return undefined;
  const policy = corsPolicy(cors, authenticated);
  const listed = guard.allowedOrigins;
  const widened: OriginPolicy = {
    ...guard,
    allowedOrigins: (origin: string) => policy.allows(origin) || isListedOrigin(listed, origin),
  };
  return { guard: widened, answered: (request, response) => answeredByCors(request, response, policy, widened) };
}

function answeredByCors(request: ServerRequest, response: ServerReply, cors: CorsPolicy, guard: OriginPolicy): boolean {
  if (request.headers.origin !== undefined) {
    const forbidden = refuseOrigin(request, guard);
    if (forbidden) {
      refuseWithHeaders(response, 403, `Forbidden: ${forbidden}`, VARY_ORIGIN, false);
      return true;
    }
  }
  const verdict = decideCors(cors, request.method ?? 'GET', (name) => singleHeader(request, name));
  switch (verdict.kind) {
    case 'serve':
      for (let index = 0; index < verdict.headers.length; index += 2) {
        response.setHeader(verdict.headers[index]!, verdict.headers[index + 1]!);
      }
      return false;
    case 'preflight':
      response.writeHead(verdict.status, verdict.headers as string[]).end();
      return true;
    case 'refuse':
      refuseWithHeaders(response, verdict.status, verdict.message, verdict.headers, false);
      return true;
  }
}
