/**
 * A tools server: arithmetic with a typed result, and a slow job that reports progress, logs each step and
 * stops when the client cancels. Serve it with `switchboard serve examples/tools-server.ts [--http <port>]`.
 */
import { defineServer } from '../lib/index';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export default defineServer({
  name: 'demo-tools',
  version: '1.0.0',
  instructions: 'Arithmetic, and a countdown that reports progress and can be cancelled.',
  tools: [
    {
      name: 'add',
      title: 'Add two numbers',
      inputSchema: {
        type: 'object',
        properties: { a: { type: 'number' }, b: { type: 'number' } },
        required: ['a', 'b'],
      },
      outputSchema: { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] },
      annotations: { readOnlyHint: true },
      handler: ({ a, b }) => ({ sum: a + b }),
    },
    {
      name: 'countdown',
      title: 'Count down',
      description: 'Counts down one step every 200 ms, reporting progress; stops when cancelled.',
      inputSchema: {
        type: 'object',
        properties: { from: { type: 'integer', minimum: 1, maximum: 50 } },
        required: ['from'],
      },
      handler: async ({ from: steps }, ctx) => {
        for (let done = 1; done <= steps; done++) {
          await sleep(200);
          if (ctx.signal.aborted) return { content: [{ type: 'text', text: `stopped at ${steps - done + 1}` }] };
          await ctx.log('info', `${steps - done} to go`, 'countdown');
          await ctx.progress(done, steps, `${steps - done} to go`);
        }
        return { content: [{ type: 'text', text: 'liftoff' }] };
      },
    },
  ],
});
