/**
 * The tools the auth tests serve behind a protected endpoint: `whoami` answers with `ctx.auth` as JSON (the
 * principal the handler saw), `write` needs the `mcp:write` scope (a call without it is a 403 step-up).
 */
import type { ServerContext } from '../../lib/server/context';
import { defineServer, type ServerDefinition } from '../../lib/server/definition';
import type { ToolDefinition } from '../../lib/server/tools';
import { text } from './content';

export const WHOAMI_TOOL: ToolDefinition = {
  name: 'whoami',
  inputSchema: { type: 'object' },
  handler: (_args, ctx: ServerContext) => text(JSON.stringify(ctx.auth ?? null)),
};

export const WRITE_TOOL: ToolDefinition = {
  name: 'write',
  inputSchema: { type: 'object' },
  scopes: ['mcp:write'],
  handler: () => text('written'),
};

/** A server of just those two tools. */
export function protectedToolsDefinition(): ServerDefinition {
  return defineServer({ name: 'protected', version: '1.0.0', tools: [WHOAMI_TOOL, WRITE_TOOL] });
}
