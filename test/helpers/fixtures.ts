import type { Logger } from '../../lib/core/logger';
import type { ServerContext } from '../../lib/server/context';
import { defineServer, type ServerDefinition, type ServerSpec } from '../../lib/server/definition';
import type { ToolDefinition, ToolHandler } from '../../lib/server/tools';

/** A tool with an open object schema; the handler defaults to answering its own name. */
export function tool(name: string, handler?: ToolHandler<any>, extra: Partial<ToolDefinition> = {}): ToolDefinition {
  return {
    name,
    inputSchema: { type: 'object' },
    handler: handler ?? (() => ({ content: [{ type: 'text', text: name }] })),
    ...extra,
  };
}

/**
 * Asks the client for a name (a form elicitation under the key `name`: one `input_required` round on a
 * 2026-07-28 request, an `elicitation/create` request on a session): the action and the name given.
 */
export async function askName(ctx: ServerContext): Promise<{ action: string; name: unknown }> {
  const answer = await ctx.elicit(
    { message: 'Name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } },
    { key: 'name' },
  );
  return { action: answer.action, name: (answer.content as { name?: unknown } | undefined)?.name };
}

/** A server named `s`, version `1`, with these tools (and any other spec fields). */
export function serverWith(tools: ToolDefinition<any>[], spec: Partial<ServerSpec> = {}): ServerDefinition {
  return defineServer({ name: 's', version: '1', tools, ...spec });
}

export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((settle) => (resolve = settle));
  return { promise, resolve };
}

/** A logger that keeps what it is told, each line as `level: message` (tests read warnings instead of printing them). */
export function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const keep = (level: string) => (message: string) => void lines.push(`${level}: ${message}`);
  return { lines, debug: keep('debug'), info: keep('info'), warn: keep('warn'), error: keep('error') };
}
