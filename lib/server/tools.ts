import { ErrorCode, invalidParams, McpError, PeerError } from '../jsonrpc/errors';
import { clipText, excerpt } from '../jsonrpc/excerpt';
import type { JsonObject } from '../jsonrpc/types';
import { shapeCallToolResult } from '../protocol/shape';
import type { CallToolResult, Tool } from '../protocol/types';
import type { SchemaCheck, SchemaValidator } from '../validation/json-schema';
import { Listing, listResult } from './listing';
import { peerText } from './peer-text';
import type { ServerContext } from './context';
import { checkScopes } from '../auth/server/scopes';

export type ToolHandler<Args extends JsonObject = JsonObject> = (
  args: Args,
  context: ServerContext,
) => CallToolResult | Promise<CallToolResult>;

/** A tool: its wire description plus the function that runs it. */
export interface ToolDefinition<Args extends JsonObject = JsonObject> extends Tool {
  readonly handler: ToolHandler<Args>;
  /**
   * OAuth scopes a caller's token must grant to call the tool, on an HTTP endpoint with `auth` (403
   * `insufficient_scope` otherwise, which sends the client to step up). Not listed to clients.
   */
  readonly scopes?: readonly string[];
}

/** 2025-11-25 guidance: 1 to 128 characters from A-Z a-z 0-9 _ - . */
export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,128}$/;

/**
 * Checks a tool definition and freezes it (in place: definitions are shared, by reference, by every
 * connection). Throws a clear error for a bad name or schema.
 */
export function defineTool<Args extends JsonObject = JsonObject>(tool: ToolDefinition<Args>): ToolDefinition<Args> {
  if (!TOOL_NAME_PATTERN.test(tool.name)) {
    throw new TypeError(
      `Tool name ${JSON.stringify(tool.name)} is invalid: use 1 to 128 characters from A-Z, a-z, 0-9, _, - and .`,
    );
  }
  if (tool.inputSchema?.type !== 'object') {
    throw new TypeError(`Tool ${tool.name}: inputSchema must be a JSON Schema with "type": "object"`);
  }
  if (tool.outputSchema !== undefined && tool.outputSchema.type !== 'object') {
    throw new TypeError(`Tool ${tool.name}: outputSchema must be a JSON Schema with "type": "object"`);
  }
  if (typeof tool.handler !== 'function') throw new TypeError(`Tool ${tool.name}: handler must be a function`);
  checkScopes(`Tool ${tool.name}`, tool.scopes);
  return Object.freeze(tool);
}

/** A tool and its validators, compiled the first time the tool is called. */
class ToolEntry {
  private input: SchemaCheck | undefined;
  private output: SchemaCheck | null | undefined;

  constructor(
    readonly definition: ToolDefinition<any>,
    private readonly validator: SchemaValidator,
  ) {}

  get checkInput(): SchemaCheck {
    return (this.input ??= this.validator.compile(this.definition.inputSchema));
  }

  get checkOutput(): SchemaCheck | undefined {
    if (this.output === undefined) {
      const schema = this.definition.outputSchema;
      this.output = schema ? this.validator.compile(schema) : null;
    }
    return this.output ?? undefined;
  }
}

function wireForm(definition: ToolDefinition<any>): Tool {
  const { handler: _handler, scopes: _scopes, ...tool } = definition;
  return Object.freeze(tool);
}

/**
 * An immutable set of tools: lookup by name, validators compiled on first call, and `tools/list` pages
 * shaped per protocol revision. Everything derived is built on first use and then shared by every
 * connection, so a definition that is built and dropped (one per client, as SDK users do) stays cheap.
 */
export class ToolCatalog {
  private readonly entries = new Map<string, ToolEntry>();
  private readonly listing: Listing<Tool>;

  constructor(
    readonly definitions: readonly ToolDefinition<any>[],
    validator: SchemaValidator,
  ) {
    for (const definition of definitions) {
      if (this.entries.has(definition.name)) throw new TypeError(`Two tools are named ${definition.name}`);
      this.entries.set(definition.name, new ToolEntry(definition, validator));
    }
    this.listing = new Listing('tools', 'Tool', definitions, wireForm);
  }

  get size(): number {
    return this.definitions.length;
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  /** The definition of the tool named `name`, if any. */
  definitionOf(name: string): ToolDefinition<any> | undefined {
    return this.entries.get(name)?.definition;
  }

  /**
   * A `tools/list` result (with `granted`, of the tools whose scopes it holds). Throws -32602 for a cursor we
   * did not issue.
   */
  list(
    cursor: unknown,
    version: string,
    pageSize: number,
    granted?: readonly string[],
  ): { tools: readonly Tool[]; nextCursor?: string } {
    return listResult('tools', this.listing.page(cursor, version, pageSize, granted));
  }

  /** Runs `tools/call`. Protocol errors throw `McpError`; tool failures come back as `isError` results. */
  call(params: JsonObject | undefined, context: ServerContext): CallToolResult | Promise<CallToolResult> {
    const name = params?.name;
    if (typeof name !== 'string') throw invalidParams('tools/call needs a string "name"');
    const args = params!.arguments ?? {};
    if (typeof args !== 'object' || args === null || Array.isArray(args)) {
      throw invalidParams('"arguments" must be an object');
    }
    const entry = this.entries.get(name);
    if (!entry) throw unknownTool(name);
    const problems = entry.checkInput(args);
    // A problem may quote the peer's argument names (a JSON pointer, an unexpected property).
    if (problems)
      return toolError(
        `Invalid arguments for tool ${name}: ${problems.map((problem) => clipText(problem)).join('; ')}`,
      );
    const version = context.protocolVersion!;
    let result: CallToolResult | Promise<CallToolResult>;
    try {
      result = entry.definition.handler(args as JsonObject, context);
    } catch (error) {
      return failure(error);
    }
    if (typeof (result as Promise<CallToolResult>).then === 'function') {
      return (result as Promise<CallToolResult>).then((value) => finish(entry, value, version), failure);
    }
    return finish(entry, result as CallToolResult, version);
  }
}

/** -32602 for a `tools/call` naming no tool we have (quoting a bounded excerpt of the name). */
export function unknownTool(name: unknown): McpError {
  return new McpError(ErrorCode.InvalidParams, `Unknown tool: ${peerText(name)}`);
}

function toolError(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

/**
 * A tool's failure is a result the model can read, whatever was thrown, except a JSON-RPC error the
 * handler means to send: an `McpError` it throws (its code, message and data reach the client), a
 * `RelayedError` (a hub passing on its upstream's error response), and -32042 ("URL elicitation
 * required"). An error response the handler received and let escape (a `PeerError`: a failed sampling or
 * elicitation request) is a failure like any other.
 */
function failure(error: unknown): CallToolResult {
  if (error instanceof McpError && (!(error instanceof PeerError) || error.code === ErrorCode.UrlElicitationRequired))
    throw error;
  if (error instanceof Error) return toolError(error.message);
  // Anything else thrown: a string as it is, a value as a bounded excerpt (`String` of a deep array overflows).
  return toolError(typeof error === 'string' ? error : excerpt(error));
}

function finish(entry: ToolEntry, result: CallToolResult, version: string): CallToolResult {
  const name = entry.definition.name;
  if (typeof result !== 'object' || result === null) {
    return toolError(`Tool ${name} returned ${result === null ? 'null' : typeof result} instead of a result object`);
  }
  if (result.isError) return result.content ? result : { ...result, content: [] };
  const structured = result.structuredContent;
  if (entry.checkOutput) {
    if (structured === undefined)
      return toolError(`Tool ${name} declares an outputSchema but returned no structuredContent`);
    const problems = entry.checkOutput(structured);
    if (problems)
      return toolError(
        `Tool ${name} returned structuredContent that does not match its outputSchema: ${problems.join('; ')}`,
      );
  }
  const hasContent = Array.isArray(result.content) && result.content.length > 0;
  if (!hasContent && structured !== undefined) {
    // Clients before 2025-06-18 (and models) read structured output from a text block holding its JSON.
    const json = jsonText(structured);
    if ('refusal' in json)
      return toolError(`Tool ${name} returned structuredContent that cannot be written as JSON: ${json.refusal}`);
    result = { ...result, content: [{ type: 'text', text: json.text }] };
  } else if (!Array.isArray(result.content)) {
    return toolError(`Tool ${name} returned a result without a content array`);
  }
  return shapeCallToolResult(result, version);
}

/**
 * `value` as JSON text, or why it cannot be written: too deep for the stack (a RangeError, whose message must
 * not reach the peer as if it were the tool's), circular, or holding a BigInt.
 */
function jsonText(value: unknown): { text: string } | { refusal: string } {
  try {
    return { text: JSON.stringify(value) };
  } catch (error) {
    if (error instanceof RangeError) return { refusal: 'it nests too deep' };
    return { refusal: clipText(error instanceof Error ? error.message : String(error)) };
  }
}
