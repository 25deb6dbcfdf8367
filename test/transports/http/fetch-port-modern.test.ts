/** The web port (see fetch-port.test.ts): server/modern.test.ts served as a fetch handler behind @hono/node-server. */
import { serveThroughFetch } from '../../helpers/http';

serveThroughFetch();
await import('../../server/modern.test');
