/**
 * A fake MCP server that answers our `Client` with scripted lines: what the client-side fuzz suites put in
 * front of it, in process or as a stdio child (test/fixtures/fuzz-peer.ts). It answers `initialize` and,
 * by default, every request with a plain valid result; a `tools/call` of `__script` sets the replies (one
 * list of raw lines per coming request, in arrival order), in which each `null` part stands for the id of
 * the request being answered.
 */

/** One raw line: text parts, with `null` where the request's id goes. Parts are base64 on the wire. */
export type ScriptedLine = readonly (string | null)[];
export type ScriptedReply = readonly ScriptedLine[];

export const SCRIPT_TOOL = '__script';

export function encodeLine(parts: readonly (Buffer | null)[]): ScriptedLine {
  return parts.map((part) => (part === null ? null : part.toString('base64')));
}

function render(line: ScriptedLine, id: unknown): Buffer {
  return Buffer.concat(
    line.map((part) => (part === null ? Buffer.from(JSON.stringify(id)) : Buffer.from(part, 'base64'))),
  );
}

function defaultResult(method: string): unknown {
  switch (method) {
    case 'initialize':
      return {
        protocolVersion: '2025-11-25',
        capabilities: { tools: {} },
        serverInfo: { name: 'scripted', version: '0' },
      };
    case 'tools/list':
      return { tools: [] };
    case 'tools/call':
      return { content: [{ type: 'text', text: 'default' }] };
    default:
      return {};
  }
}

/** The peer's reaction to each message it receives; `write` sends one raw line (without its newline). */
export function scriptedPeer(write: (line: Buffer) => void): (message: any) => void {
  const queue: ScriptedReply[] = [];
  return (message) => {
    if (typeof message?.method !== 'string' || message.id === undefined) return; // notifications, responses
    const { id, method, params } = message;
    if (method === 'tools/call' && params?.name === SCRIPT_TOOL) {
      // A new case replaces what an earlier one left unused (a case that failed midway, while shrinking).
      queue.length = 0;
      queue.push(...(params.arguments.replies as ScriptedReply[]));
      write(
        Buffer.from(JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'queued' }] } })),
      );
      return;
    }
    const scripted = method === 'initialize' ? undefined : queue.shift();
    if (scripted) {
      for (const line of scripted) write(render(line, id));
      return;
    }
    write(Buffer.from(JSON.stringify({ jsonrpc: '2.0', id, result: defaultResult(method) })));
  };
}
