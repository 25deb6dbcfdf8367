/**
 * The health endpoint: `{"status":"ok"}` for load balancers, orchestrators and uptime checks. It says only
 * that the process answers HTTP, so it needs nothing: no token, no session, no Origin or Host check, and it
 * is no MCP request (no trace, no quota, no session count). Any page may read it, as the OAuth metadata
 * document. Pure: the answer as status, headers and body, for any HTTP layer to write.
 */
import { excerpt } from '../../lib/jsonrpc/excerpt';

/** Where `health: true` serves the health endpoint. */
export const DEFAULT_HEALTH_PATH = '/health';

/** The answer's body, always the same. */
export const HEALTH_BODY = '{"status":"ok"}';

const ALLOWED = 'GET, HEAD, OPTIONS';

/** One answer of the health endpoint: `headers` are names and values. */
export interface HealthAnswer {
  readonly status: 200 | 204 | 405;
  readonly headers: readonly string[];
  readonly body?: string;
}

const OK_HEADERS = [
  'content-type',
  'application/json',
  'content-length',
  String(HEALTH_BODY.length),
  'cache-control',
  'no-store',
  'access-control-allow-origin',
  '*',
];
const OK: HealthAnswer = { status: 200, headers: OK_HEADERS, body: HEALTH_BODY };
const OK_HEAD: HealthAnswer = { status: 200, headers: OK_HEADERS };
const PREFLIGHT: HealthAnswer = {
  status: 204,
  headers: ['access-control-allow-origin', '*', 'access-control-allow-methods', ALLOWED],
};
const NOT_ALLOWED: HealthAnswer = { status: 405, headers: ['allow', ALLOWED] };

/** The health endpoint's answer to a request of `method`. */
export function healthAnswer(method: string): HealthAnswer {
  switch (method) {
    case 'GET':
      return OK;
    case 'HEAD':
      return OK_HEAD;
    case 'OPTIONS':
      return PREFLIGHT;
    default:
      return NOT_ALLOWED;
  }
}

/**
 * The path the `health` option names: `true` for `/health`, a path of its own (starting with `/`), or
 * undefined when off (`false`, or not given). Throws a `RangeError` for anything else.
 */
export function healthPathOf(option: boolean | string | undefined): string | undefined {
  if (option === undefined || option === false) return undefined;
  if (option === true) return DEFAULT_HEALTH_PATH;
  if (typeof option !== 'string' || !/^\/[^?#\s]*$/.test(option)) {
    throw new RangeError(`health must be true, false or a path starting with '/': got ${excerpt(option)}`);
  }
  return option;
}
