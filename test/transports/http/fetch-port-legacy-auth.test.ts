/** The web port (see fetch-port.test.ts): auth/legacy-sse-client.test.ts served as a fetch handler behind @hono/node-server. */
import { serveThroughFetch } from '../../helpers/http';

serveThroughFetch();
await import('../../auth/legacy-sse-client.test');
