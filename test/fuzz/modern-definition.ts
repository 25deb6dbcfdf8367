/**
 * The server the duplex 2026-07-28 fuzz talks to: `echo` answers its arguments as JSON text, `wait` reports
 * progress and then waits until it is cancelled, `ask` elicits a name (an `input_required` round on a modern
 * request), and one static resource. `handlerRuns` counts the runs of the long-lived handlers so a case can
 * check every run ended.
 */
import { defineServer, type ServerDefinition } from '../../lib/server/definition';
import type { ServerContext } from '../../lib/server/context';
import { STATIC_URI } from './modern-arbitraries';
import { askName } from '../helpers/fixtures';
import { text } from '../helpers/content';

/** Runs of `wait` and `ask` started and ended (however they ended). */
export const handlerRuns = { started: 0, ended: 0 };

export const modernFuzzDefinition: ServerDefinition = defineServer({
  name: 'fuzz-modern',
  version: '1.0.0',
  tools: [
    { name: 'echo', inputSchema: { type: 'object' }, handler: (args) => text(JSON.stringify(args)) },
    {
      name: 'wait',
      inputSchema: { type: 'object' },
      handler: async (_args, ctx: ServerContext) => {
        handlerRuns.started++;
        try {
          await ctx.progress(1, 2);
          return await new Promise((resolve) => ctx.onCancel(() => resolve(text('cancelled'))));
        } finally {
          handlerRuns.ended++;
        }
      },
    },
    {
      name: 'ask',
      inputSchema: { type: 'object' },
      handler: async (_args, ctx: ServerContext) => {
        handlerRuns.started++;
        try {
          const { action, name } = await askName(ctx);
          return text(action === 'accept' ? `Hi, ${String(name)}` : action);
        } finally {
          handlerRuns.ended++;
        }
      },
    },
  ],
  resources: [{ uri: STATIC_URI, name: 'static', read: () => 'static' }],
});
