/**
 * The web port (see fetch-port.test.ts): the SDK v2 client in the 2026-07-28 era, and OAuth end to end,
 * against our endpoint served as a fetch handler behind @hono/node-server.
 */
import { serveThroughFetch } from '../../helpers/http';

serveThroughFetch();
await import('../../interop/sdk-v2-modern.test');
await import('../../auth/end-to-end.test');
await import('../../interop/sdk-oauth.test');
await import('../../compose/hub-auth.test');
