// Loads the built package (ESM and CJS) the way a user would and runs one tool call through each.
// Run after `npm run build`: `npm run test:dist`.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const builds = {
  esm: {
    root: await import('../dist/index.js'),
    memory: await import('../dist/transports/memory.js'),
    protocol: await import('../dist/protocol.js'),
  },
  cjs: {
    root: require('../dist/index.cjs'),
    memory: require('../dist/transports/memory.cjs'),
    protocol: require('../dist/protocol.cjs'),
  },
};

for (const [format, { root, memory, protocol }] of Object.entries(builds)) {
  const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
  if (protocol.classifyMessage(protocol.decodeFrame(protocol.encodeFrame(ping))) !== 'request') {
    throw new Error(`${format} build: the protocol entry does not read back a request`);
  }
  const definition = root.defineServer({
    name: 'smoke',
    version: '1.0.0',
    tools: [
      {
        name: 'echo',
        inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
        handler: ({ text }) => ({ content: [{ type: 'text', text }] }),
      },
    ],
  });
  const [clientSide, serverSide] = memory.createMemoryPair();
  new root.Server(definition).connect(serverSide);
  const client = await new root.Client({ name: 'smoke', version: '1.0.0' }).connect(clientSide);
  const result = await client.callTool('echo', { text: format });
  const invalid = await client.callTool('echo', { text: 1 });
  await client.close();
  if (result.content[0].text !== format || invalid.isError !== true) {
    throw new Error(`${format} build misbehaves: ${JSON.stringify({ result, invalid })}`);
  }
  process.stdout.write(`${format} build ok\n`);
}
