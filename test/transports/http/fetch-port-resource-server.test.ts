/** The web port (see fetch-port.test.ts): auth/resource-server.test.ts served as a fetch handler behind @hono/node-server. */
import { serveThroughFetch } from '../../helpers/http';

serveThroughFetch();
await import('../../auth/resource-server.test');
