/**
 * A complete server to copy: one typed tool, served over stdio (how an MCP host runs it) or, given a port,
 * over Streamable HTTP at http://127.0.0.1:<port>/mcp. `npx tsx examples/weather-server.ts [port]`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { defineServer, Server } from '../lib/index';
import { createMcpHttpHandler } from '../transports/http/index';
import { StdioServerTransport } from '../transports/stdio';

const server = new Server(
  defineServer({
    name: 'weather',
    version: '1.0.0',
    tools: [
      {
        name: 'forecast',
        description: "Tomorrow's forecast for a city.",
        inputSchema: z.object({ city: z.string().min(1), unit: z.enum(['celsius', 'fahrenheit']).default('celsius') }),
        outputSchema: z.object({ city: z.string(), temperature: z.number(), unit: z.string() }),
        annotations: { readOnlyHint: true },
        handler: async ({ city, unit }, ctx) => {
          await ctx.progress(1, 1, `looking up ${city}`);
          const celsius = 12 + (city.length % 10); // a stand-in for a weather service
          return { city, temperature: unit === 'celsius' ? celsius : (celsius * 9) / 5 + 32, unit };
        },
      },
    ],
  }),
);

const port = process.argv[2];
if (port === undefined) {
  server.connect(new StdioServerTransport({ redirectConsole: true })); // ends when the host closes stdin
} else {
  const listener = http.createServer(createMcpHttpHandler(server)); // port 0: any free one
  listener.listen(Number(port), '127.0.0.1', () => {
    const { port: listening } = listener.address() as AddressInfo;
    console.log(`weather: Streamable HTTP at http://127.0.0.1:${listening}/mcp`);
  });
}
