/**
 * The tests' OAuth 2.1 authorization server (issue 15 §5): `startAuthorizationServer(options)`.
 * The implementation lives in `./oauth/`; see `./oauth/types.ts` for every option.
 */
export { startAuthorizationServer, type AuthorizationServer } from './oauth/server';
export * from './oauth/types';
export type { RegisteredClient } from './oauth/clients';
