/**
 * The in-process demo: a tools server and a client linked in memory, with every message traced to
 * stderr. Run it with `npm start`.
 */
import { merge } from 'rxjs';
import { Client, createMemoryPair, defineServer, formatTraceEvent, RequestCancelledError, Server } from '../lib/index';

const definition = defineServer({
  name: 'demo-tools',
  version: '1.0.0',
  instructions: 'Arithmetic and a slow job that reports progress.',
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
      handler: ({ a, b }) => ({ content: [], structuredContent: { sum: (a as number) + (b as number) } }),
    },
    {
      name: 'countdown',
      description: 'Counts down, reporting progress; stops when cancelled.',
      inputSchema: {
        type: 'object',
        properties: { from: { type: 'integer', minimum: 1, maximum: 10 } },
        required: ['from'],
      },
      handler: async ({ from }, ctx) => {
        const steps = from as number;
        for (let done = 1; done <= steps; done++) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          if (ctx.signal.aborted) return { content: [{ type: 'text', text: 'stopped' }], isError: true };
          await ctx.progress(done, steps, `${steps - done} to go`);
        }
        return { content: [{ type: 'text', text: 'liftoff' }] };
      },
    },
  ],
});

const server = new Server(definition);
const [clientSide, serverSide] = createMemoryPair();
const serverConnection = server.connect(serverSide);
const client = new Client({ name: 'demo-client', version: '1.0.0' });

merge(client.trace$, serverConnection.trace$).subscribe((event) =>
  process.stderr.write(formatTraceEvent(event) + '\n'),
);

await client.connect(clientSide);
const say = (line: string) => process.stdout.write(line + '\n');
say(`connected to ${client.serverInfo?.name} (protocol ${client.protocolVersion})`);
say(`tools: ${(await client.listTools()).map((tool) => tool.name).join(', ')}`);
say(`add(2, 3) = ${JSON.stringify((await client.callTool('add', { a: 2, b: 3 })).structuredContent)}`);
say(`bad arguments: ${JSON.stringify((await client.callTool('add', { a: 'two' })).content)}`);
const countdown = await client.callTool(
  'countdown',
  { from: 3 },
  { onProgress: (p) => say(`  progress ${p.progress}/${p.total}: ${p.message}`) },
);
say(`countdown: ${JSON.stringify(countdown.content)}`);
const controller = new AbortController();
setTimeout(() => controller.abort(), 120);
await client.callTool('countdown', { from: 10 }, { signal: controller.signal }).catch((error) => {
  if (error instanceof RequestCancelledError) say('second countdown cancelled by the client');
  else throw error;
});
say(`closed: ${JSON.stringify(await client.close())}`);
