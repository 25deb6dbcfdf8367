/**
 * A client and the tools server in one process, linked in memory, with every message traced to stderr:
 * `npx tsx examples/in-process.ts`. Shows the client API: typed calls, progress and cancellation.
 */
import { merge } from 'rxjs';
import { Client, createMemoryPair, formatTraceEvent, RequestCancelledError, Server } from '../lib/index';
import tools from './tools-server';

const [clientSide, serverSide] = createMemoryPair();
const serverConnection = new Server(tools).connect(serverSide);
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
setTimeout(() => controller.abort(), 500);
await client.callTool('countdown', { from: 10 }, { signal: controller.signal }).catch((error) => {
  if (error instanceof RequestCancelledError) say('second countdown cancelled by the client');
  else throw error;
});
say(`closed: ${JSON.stringify(await client.close())}`);
