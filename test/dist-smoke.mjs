// Loads the built package the way a user does, by name: every entry package.json exports, through `import`
// (ES modules) and `require` (CommonJS), then runs one tool call through each format's Client and Server.
// After `npm run build`, `npm run test:dist` runs it here (the package resolves its own name through its
// `exports`); test/package/published-types.test.ts runs it in consumer projects, on the oldest Node too.
import { createRequire } from 'node:module';

const NAME = 'mcp-switchboard';
const require = createRequire(import.meta.url);
const { exports } = require(`${NAME}/package.json`);
const specifiers = Object.keys(exports)
  .filter((subpath) => subpath !== './package.json')
  .map((subpath) => (subpath === '.' ? NAME : `${NAME}${subpath.slice(1)}`));

const loaders = { esm: (specifier) => import(specifier), cjs: async (specifier) => require(specifier) };

for (const [format, load] of Object.entries(loaders)) {
  const entries = {};
  for (const specifier of specifiers) {
    entries[specifier] = await load(specifier);
    if (Object.keys(entries[specifier]).length === 0) throw new Error(`${format}: ${specifier} exports nothing`);
  }
  const root = entries[NAME];
  const memory = entries[`${NAME}/transports/memory`];
  const protocol = entries[`${NAME}/protocol`];

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
  // The web-standard handler: a stateless tools/call as a fetch Request, answered with a Response.
  const handler = entries[`${NAME}/transports/fetch`].createMcpFetchHandler(new root.Server(definition), {
    responseMode: 'json',
  });
  const answer = await handler(
    new Request('http://localhost/mcp', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'echo',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'echo',
          arguments: { text: `${format} over fetch` },
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientInfo': { name: 'smoke', version: '1.0.0' },
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
    }),
  );
  const body = await answer.json();
  await handler.close();
  if (answer.status !== 200 || body.result?.content?.[0]?.text !== `${format} over fetch`) {
    throw new Error(`${format} build: the fetch handler answered ${answer.status} ${JSON.stringify(body)}`);
  }
  process.stdout.write(`${format} build ok: ${specifiers.length} entries on Node ${process.versions.node}\n`);
}
