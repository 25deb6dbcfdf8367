/**
 * The server every server-side fuzz suite talks to, in process or as a child: `echo` answers its arguments
 * as JSON text (so a valid call's answer shows whether it got its own arguments), and `stats` reports the
 * connection's records (so a suite can check nothing leaked; `stats` itself is the one running handler).
 */
import { defineServer, type ServerDefinition } from '../../lib/server/definition';
import { text } from '../helpers/content';

/** A frame limit small enough that the suites can cross it cheaply. */
export const FUZZ_MAX_MESSAGE_BYTES = 256 * 1024;

export const fuzzDefinition: ServerDefinition = defineServer({
  name: 'fuzz',
  version: '1.0.0',
  tools: [
    { name: 'echo', inputSchema: { type: 'object' }, handler: (args) => text(JSON.stringify(args)) },
    {
      name: 'stats',
      inputSchema: { type: 'object' },
      handler: (_args, ctx) => {
        const session = ctx.connection.era === 'handshake' ? ctx.connection : undefined;
        return text(
          JSON.stringify({
            pendingRequests: session?.pendingRequestCount ?? 0,
            activeHandlers: session?.activeHandlerCount ?? 1,
          }),
        );
      },
    },
  ],
});
