/**
 * A complete client to copy: it starts the server as a stdio child, lists its tools, calls one with
 * progress, and closes (which ends the child). `npx tsx examples/weather-client.ts [command args...]`, by
 * default `node weather-server.js`.
 */
import { Client } from '../lib/index';
import { StdioClientTransport } from '../transports/stdio';

const [command = 'node', ...args] = process.argv.length > 2 ? process.argv.slice(2) : ['node', 'weather-server.js'];
const client = new Client({ name: 'weather-client', version: '1.0.0' });
await client.connect(new StdioClientTransport({ command, args }));
console.log(`connected to ${client.serverInfo?.name} (${client.connectedEra} era)`);

const tools = await client.listTools();
console.log('tools:', tools.map((tool) => tool.name).join(', '));

const result = await client.callTool(
  'forecast',
  { city: 'Oslo' },
  { onProgress: ({ message }) => console.log('progress:', message) },
);
console.log('forecast:', JSON.stringify(result.structuredContent));
await client.close();
