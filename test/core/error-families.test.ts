/**
 * Every error the runtime throws belongs to one of its two families: `McpError` (on the wire) or
 * `SwitchboardError` (local), the latter with a stable string `code` to switch on, one per class.
 */
import { describe, expect, it } from 'vitest';
import { AuthorizationError, LoginRequiredError } from '../../lib/auth/client/http';
import { LockTimeoutError } from '../../lib/auth/node/file-lock';
import { DpopProofError } from '../../lib/auth/server/dpop-proof';
import { InvalidTokenError } from '../../lib/auth/server/principal';
import { TokenCheckUnavailableError } from '../../lib/auth/server/token-verifier';
import { InputRequestError } from '../../lib/client/input-required';
import { ConfigError } from '../../lib/compose/config';
import { CatalogConflictError } from '../../lib/compose/hub';
import { MethodRemovedError, SwitchboardError } from '../../lib/jsonrpc/errors';

const LOCAL_ERRORS: readonly [string, SwitchboardError][] = [
  ['AuthorizationError', new AuthorizationError('x')],
  ['LoginRequiredError', new LoginRequiredError('x')],
  ['InvalidTokenError', new InvalidTokenError('x')],
  ['TokenCheckUnavailableError', new TokenCheckUnavailableError('x')],
  ['DpopProofError', new DpopProofError('x')],
  ['LockTimeoutError', new LockTimeoutError('/tmp/lock', 10, undefined)],
  ['CatalogConflictError', new CatalogConflictError([])],
  ['ConfigError', new ConfigError(['x'])],
  ['InputRequestError', new InputRequestError('k', 'elicitation/create', new Error('x'))],
  ['MethodRemovedError', new MethodRemovedError('ping', '2026-07-28', 'x')],
];

describe('the local error family', () => {
  it.each(LOCAL_ERRORS)('%s is a SwitchboardError with its name and a code', (name, error) => {
    expect(error).toBeInstanceOf(SwitchboardError);
    expect(error.name).toBe(name);
    expect(error.code).toMatch(/^[A-Z_]+$/);
  });

  it('gives each class its own code', () => {
    const codes = LOCAL_ERRORS.map(([, error]) => error.code);
    expect(new Set(codes).size).toBe(codes.length);
  });
});
