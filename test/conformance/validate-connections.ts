/**
 * Schema-checks what every connection of a server emits, including the connections an HTTP handler
 * makes for its sessions (which a test never holds): each is registered with `validateEmitted`, whose
 * recorders are asserted after each test.
 */
import type { Server } from '../../lib/server/server';
import { validateEmitted } from '../helpers/pair';

export function validateEveryConnection(server: Server): Server {
  const connect = server.connect.bind(server);
  server.connect = (transport, options) => {
    const connection = connect(transport, options);
    validateEmitted(connection);
    return connection;
  };
  return server;
}
