/**
 * The web port: the suites of the HTTP server transports run again, every handler served as a fetch handler
 * (`Request` in, `Response` out) behind @hono/node-server, so both eras, both transports, CORS and health are
 * held to the same assertions (the official SDK clients' included) on the web path as on `node:http`. Suites
 * with hooks at their top level get a file of their own (fetch-port-*.test.ts): their hooks would run for
 * every suite of the file.
 */
import { serveThroughFetch } from '../../helpers/http';

serveThroughFetch();
await import('./streamable-server.test');
await import('./legacy-sse-server.test');
await import('./cors-http.test');
await import('./cors-handlers.test');
await import('./health.test');
await import('./sessionless.test');
