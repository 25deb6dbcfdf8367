/**
 * A stdio server written as its own program, the way an MCP host runs one as a child process:
 * `npx tsx examples/clock-server.ts`. It answers on stdout and logs on stderr (even its console.log calls),
 * and ends when its client closes stdin.
 */
import { defineServer, Server } from '../lib/index';
import { StdioServerTransport } from '../transports/stdio';

function timeIn(timeZone: string, now: Date) {
  const local = new Intl.DateTimeFormat('en-GB', { timeZone, dateStyle: 'full', timeStyle: 'long' }).format(now);
  return { timeZone, iso: now.toISOString(), local };
}

const definition = defineServer({
  name: 'demo-clock',
  version: '1.0.0',
  tools: [
    {
      name: 'now',
      title: 'Current time',
      description: 'The current time in an IANA time zone (default UTC).',
      inputSchema: { type: 'object', properties: { timeZone: { type: 'string', examples: ['Europe/Oslo'] } } },
      outputSchema: {
        type: 'object',
        properties: { timeZone: { type: 'string' }, iso: { type: 'string' }, local: { type: 'string' } },
        required: ['timeZone', 'iso', 'local'],
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
      handler: ({ timeZone = 'UTC' }) => {
        try {
          return timeIn(timeZone, new Date());
        } catch {
          return { content: [{ type: 'text', text: `Unknown time zone: ${timeZone}` }], isError: true };
        }
      },
    },
  ],
});

const connection = new Server(definition).connect(new StdioServerTransport({ redirectConsole: true }));
console.log('demo-clock is serving on stdio'); // goes to stderr: stdout carries only messages
await connection.closed;
