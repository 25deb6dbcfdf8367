import { StdioClientTransport } from '../../transports/stdio';
import { fixturePath } from './paths';

/** How long a child (node loading TypeScript through tsx, on a busy machine) has to answer its first request. */
export const SLOW_START_MS = 20_000;

/** A stdio transport to test/fixtures/reconnect-server.ts, run as a child that stops quickly when closed. */
export function reconnectServerTransport(): StdioClientTransport {
  return new StdioClientTransport({
    command: process.execPath,
    args: ['--import', 'tsx', fixturePath('reconnect-server.ts')],
    shutdown: { stdinGraceMs: 300, terminateGraceMs: 300 },
  });
}
