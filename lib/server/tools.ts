import { ErrorCode, invalidParams, McpError, PeerError } from '../jsonrpc/errors';
import { isThenable } from '../core/thenable';
import { clipText, excerpt } from '../jsonrpc/excerpt';
import type { JsonObject } from '../jsonrpc/types';
import { shapeCallToolResult } from '../protocol/shape';
import type { CallToolResult, ContentBlock, JsonSchema, Meta, Tool } from '../protocol/types';
import type { SchemaCheck, SchemaValidator } from '../validation/json-schema';
import {
  resolveSchema,
  type IsUntypedSchema,
  type SchemaInputValue,
  type SchemaOutput,
  type SchemaSlot,
} from '../validation/schema-input';
import { runStandardSchema, type StandardSchemaV1, type StandardVerdict } from '../validation/standard-schema';
import { Listing, listResult } from './listing';
import { peerText } from './peer-text';
import type { ServerContext } from './context';
import { checkScopes } from '../auth/server/scopes';
import { TaskContinuation, taskStarterOf, type TaskCreated } from './tasks/continuation';

/** A tool's result as a handler may write it: `content` optional beside `structuredContent`. */
export interface ToolResult<Structured = JsonObject> {
  readonly content?: readonly ContentBlock[];
  readonly structuredContent?: Structured;
  readonly isError?: boolean;
  readonly _meta?: Meta;
}

/**
 * What a handler may return: a `CallToolResult` (`content` optional), a string (one text block), or, for a
 * tool with an `outputSchema`, the structured value itself (it becomes `structuredContent` and its JSON
 * text). An object with a `content` array, `structuredContent` or `isError` is taken as a result.
 */
export type ToolReturn<Structured = JsonObject> = string | ToolResult<Structured> | CallToolResult | Structured;

/** What a tool with output schema `O` returns (the schema's input side, which validation turns into its output). */
export type ToolReturnFor<O> =
  IsUntypedSchema<O> extends true ? ToolReturn : SchemaInputValue<O> | ToolResult<SchemaInputValue<O>>;

export type ToolHandler<Args = JsonObject, Result = ToolReturn> = (
  args: Args,
  context: ServerContext,
) => Result | Promise<Result>;

/**
 * A tool as written: its wire fields, its schemas as a Standard Schema (zod 4, valibot, arktype) or a JSON
 * Schema literal (`as const`), and a handler whose arguments and result are typed from them. `inputSchema`
 * may be left out for a tool without parameters (published as `{ "type": "object" }`).
 */
export interface ToolSpec<I = undefined, O = undefined> extends Omit<Tool, 'inputSchema' | 'outputSchema'> {
  /** A schema; any schema when `I` is an arguments type given to `defineTool<Args>` rather than a schema. */
  readonly inputSchema?: SchemaSlot<I>;
  readonly outputSchema?: SchemaSlot<O>;
  /** Gets the arguments as validation made them (a Standard Schema's output: defaults filled, transforms run). */
  handler(
    args: NoInfer<SchemaOutput<I>>,
    context: ServerContext,
  ): NoInfer<ToolReturnFor<O>> | Promise<NoInfer<ToolReturnFor<O>>>;
  /**
   * OAuth scopes a caller's token must grant to call the tool, on an HTTP endpoint with `auth` (403
   * `insufficient_scope` otherwise, which sends the client to step up). Not listed to clients.
   */
  readonly scopes?: readonly string[];
  /**
   * For a tool with `execution.taskSupport`: when a call that can be a task becomes one. `call` (default):
   * before the handler runs. `handler`: the handler starts in the request and makes the rest a task by
   * returning `continueAsTask(work)` (lib/server/tasks/continuation.ts). Not listed to clients.
   */
  readonly taskStart?: 'call' | 'handler';
}

declare const toolTypes: unique symbol;

/**
 * A defined tool: its wire description (JSON Schemas), the function that runs it, and (for types only) what a
 * caller sends and what its `structuredContent` is, which `ToolArgumentsOf` and `ToolResultOf` read.
 */
export interface ToolDefinition<Args = JsonObject, Structured = JsonObject, CallerArgs = Args> extends Tool {
  readonly handler: ToolHandler<Args, ToolReturn<Structured>>;
  readonly scopes?: readonly string[];
  readonly taskStart?: 'call' | 'handler';
  readonly [toolTypes]?: { readonly arguments: CallerArgs; readonly structured: Structured };
}

/** The definition `defineTool` makes of a `ToolSpec<I, O>`. */
export type DefinedTool<I, O> = ToolDefinition<
  SchemaOutput<I>,
  IsUntypedSchema<O> extends true ? JsonObject : SchemaOutput<O>,
  SchemaInputValue<I>
>;

/** The arguments a caller sends to tool `T` (a `ToolDefinition`), e.g. for a typed `callTool`. */
export type ToolArgumentsOf<T> = T extends { readonly [toolTypes]?: { readonly arguments: infer A } } ? A : JsonObject;

/** A `CallToolResult` whose `structuredContent` is typed. */
export interface TypedCallToolResult<Structured = JsonObject> {
  readonly content: readonly ContentBlock[];
  readonly structuredContent?: Structured;
  readonly isError?: boolean;
  readonly _meta?: Meta;
  readonly [key: string]: unknown;
}

/** The result a caller gets from tool `T` (a `ToolDefinition`): its `structuredContent` typed by its output schema. */
export type ToolResultOf<T> = TypedCallToolResult<
  T extends { readonly [toolTypes]?: { readonly structured: infer S } } ? S : JsonObject
>;

/** 2025-11-25 guidance: 1 to 128 characters from A-Z a-z 0-9 _ - . */
export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,128}$/;

/** The Standard Schemas of defined tools, which validate in place of their published JSON Schemas. */
const standardSchemas = new WeakMap<object, { input?: StandardSchemaV1; output?: StandardSchemaV1 }>();
const defined = new WeakSet<object>();
const NO_PARAMETERS: JsonSchema = Object.freeze({ type: 'object' });

/**
 * Checks a tool and returns its frozen definition, shared by reference by every connection: its schemas as
 * JSON Schema (a Standard Schema converted by its library, input side for `inputSchema`), the Standard
 * Schemas kept to validate. Throws a TypeError naming the tool for a bad name, a value that is no schema, or
 * a JSON Schema that is itself invalid. Idempotent: a definition passes through unchanged.
 */
export function defineTool<const I = undefined, const O = undefined>(tool: ToolSpec<I, O>): DefinedTool<I, O>;
export function defineTool(tool: ToolSpec<any, any>): ToolDefinition<any, any> {
  if (defined.has(tool)) return tool as ToolDefinition<any, any>;
  if (typeof tool !== 'object' || tool === null) throw new TypeError('A tool must be an object');
  if (typeof tool.name !== 'string' || !TOOL_NAME_PATTERN.test(tool.name)) {
    throw new TypeError(
      `Tool name ${excerpt(tool.name)} is invalid: use 1 to 128 characters from A-Z, a-z, 0-9, _, - and .`,
    );
  }
  const owner = `Tool ${tool.name}`;
  if (typeof tool.handler !== 'function') throw new TypeError(`${owner}: handler must be a function`);
  checkScopes(owner, tool.scopes);
  checkTaskSupport(owner, tool);
  const input =
    tool.inputSchema === undefined ? undefined : resolveSchema(owner, 'inputSchema', tool.inputSchema, 'input');
  const output =
    tool.outputSchema === undefined ? undefined : resolveSchema(owner, 'outputSchema', tool.outputSchema, 'output');
  let definition: ToolDefinition<any, any>;
  if (input?.standard || output?.standard || !input) {
    definition = Object.freeze({
      ...tool,
      inputSchema: input?.json ?? NO_PARAMETERS,
      ...(output && { outputSchema: output.json }),
    }) as ToolDefinition<any, any>;
    if (input?.standard || output?.standard)
      standardSchemas.set(definition, { input: input?.standard, output: output?.standard });
  } else {
    definition = Object.freeze(tool) as ToolDefinition<any, any>;
  }
  defined.add(definition);
  return definition;
}

const TASK_SUPPORT: readonly unknown[] = ['forbidden', 'optional', 'required'];

function checkTaskSupport(owner: string, tool: ToolSpec<any, any>): void {
  const support = tool.execution?.taskSupport;
  if (support !== undefined && !TASK_SUPPORT.includes(support)) {
    throw new TypeError(`${owner}: execution.taskSupport must be one of ${TASK_SUPPORT.join(', ')}`);
  }
  if (tool.taskStart === undefined) return;
  if (tool.taskStart !== 'call' && tool.taskStart !== 'handler') {
    throw new TypeError(`${owner}: taskStart must be 'call' or 'handler'`);
  }
  if ((support ?? 'forbidden') === 'forbidden') {
    throw new TypeError(`${owner}: taskStart needs execution.taskSupport 'optional' or 'required'`);
  }
}

/**
 * Why the schemas of `tool`, a tool from elsewhere (a hub's upstream), would be refused by `defineTool` (for
 * example `inputSchema is not a valid JSON Schema: /required must be array`), or undefined: lets a caller
 * leave such a tool out instead of failing the whole definition.
 */
export function toolSchemaProblem(tool: Pick<Tool, 'inputSchema' | 'outputSchema'>): string | undefined {
  try {
    if (tool.inputSchema !== undefined) resolveSchema('', 'inputSchema', tool.inputSchema, 'input');
    if (tool.outputSchema !== undefined) resolveSchema('', 'outputSchema', tool.outputSchema, 'output');
    return undefined;
  } catch (error) {
    return (error as Error).message.replace(/^: /, '');
  }
}

/** A tool and its validators, compiled the first time the tool is called. */
class ToolEntry {
  private input: SchemaCheck | undefined;
  private output: SchemaCheck | null | undefined;

  /** The Standard Schemas that validate in place of the JSON Schemas, when the tool was defined with them. */
  readonly standardInput: StandardSchemaV1 | undefined;
  readonly standardOutput: StandardSchemaV1 | undefined;

  constructor(
    readonly definition: ToolDefinition<any, any>,
    private readonly validator: SchemaValidator,
  ) {
    const standard = standardSchemas.get(definition);
    this.standardInput = standard?.input;
    this.standardOutput = standard?.output;
  }

  get hasOutputSchema(): boolean {
    return this.definition.outputSchema !== undefined;
  }

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
  const { handler: _handler, scopes: _scopes, taskStart: _taskStart, ...tool } = definition;
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

  /**
   * Runs `tools/call`. Protocol errors throw `McpError`; tool failures come back as `isError` results; a
   * handler that continued as a task (`continueAsTask`) where the request can hold one gives `TaskCreated`.
   */
  call(params: JsonObject | undefined, context: ServerContext): CallOutcome {
    const name = params?.name;
    if (typeof name !== 'string') throw invalidParams('tools/call needs a string "name"');
    const args = params!.arguments ?? {};
    if (typeof args !== 'object' || args === null || Array.isArray(args)) {
      throw invalidParams('"arguments" must be an object');
    }
    const entry = this.entries.get(name);
    if (!entry) throw unknownTool(name);
    const call: Call = { entry, context, version: context.protocolVersion! };
    if (entry.standardInput) {
      const verdict = validateStandard(entry.standardInput, args);
      if (verdict instanceof Error) return failure(verdict);
      return isThenable(verdict) ? verdict.then((settled) => runWith(call, settled), failure) : runWith(call, verdict);
    }
    const problems = entry.checkInput(args);
    // A problem may quote the peer's argument names (a JSON pointer, an unexpected property).
    return problems ? invalidArguments(name, problems) : run(call, args);
  }
}

/** What a call comes to: its result, or the task it became. */
export type CallOutcome = CallToolResult | TaskCreated | Promise<CallToolResult | TaskCreated>;

/** One call in flight: its tool, its context and the revision its result is shaped for. */
interface Call {
  readonly entry: ToolEntry;
  readonly context: ServerContext;
  readonly version: string;
}

/** A Standard Schema's verdict, or what its library threw (a refinement that throws is the tool's failure). */
function validateStandard(
  schema: StandardSchemaV1,
  value: unknown,
): StandardVerdict | Promise<StandardVerdict> | Error {
  try {
    return runStandardSchema(schema, value);
  } catch (error) {
    return error instanceof Error ? error : new Error(excerpt(error));
  }
}

function invalidArguments(name: string, problems: readonly string[]): CallToolResult {
  return toolError(`Invalid arguments for tool ${name}: ${problems.map((problem) => clipText(problem)).join('; ')}`);
}

function runWith(call: Call, verdict: StandardVerdict): CallOutcome {
  return verdict.problems ? invalidArguments(call.entry.definition.name, verdict.problems) : run(call, verdict.value);
}

function run(call: Call, args: unknown): CallOutcome {
  return settle(call, () => call.entry.definition.handler(args, call.context));
}

/** Runs `invoke` (the handler, or the work it continued as a task) and makes its value the call's outcome. */
function settle(call: Call, invoke: () => unknown): CallOutcome {
  let result: unknown;
  try {
    result = invoke();
  } catch (error) {
    return failure(error);
  }
  return isThenable(result)
    ? Promise.resolve(result).then((value) => outcomeOf(call, value), failure)
    : outcomeOf(call, result);
}

function outcomeOf(call: Call, value: unknown): CallOutcome {
  if (!(value instanceof TaskContinuation)) return finish(call, value as ToolReturn<unknown>);
  // The rest runs as a task when the request can hold one, else here (in a task already, it has no starter).
  const runIn = (context: ServerContext) =>
    settle({ ...call, context }, () => value.work(context)) as CallToolResult | Promise<CallToolResult>;
  const start = taskStarterOf(call.context);
  return start ? start(runIn) : runIn(call.context);
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

/**
 * A handler's return as a result: a string is one text block; for a tool with an output schema, an object
 * that is no result (no `content` array, `structuredContent` or `isError`) is the structured content.
 */
function asResult(call: Call, value: ToolReturn<unknown>): CallToolResult | string {
  if (typeof value === 'string') return { content: [{ type: 'text', text: value }] };
  const name = call.entry.definition.name;
  if (typeof value !== 'object' || value === null) {
    return `Tool ${name} returned ${value === null ? 'null' : typeof value} instead of a result object`;
  }
  const result = value as ToolResult<unknown>;
  const isResult = Array.isArray(result.content) || 'structuredContent' in result || 'isError' in result;
  if (!isResult && call.entry.hasOutputSchema) return { content: [], structuredContent: result as JsonObject };
  return result as CallToolResult;
}

function finish(call: Call, value: ToolReturn<unknown>): CallToolResult | Promise<CallToolResult> {
  const result = asResult(call, value);
  if (typeof result === 'string') return toolError(result);
  if (result.isError) return result.content ? result : { ...result, content: [] };
  const { entry } = call;
  const name = entry.definition.name;
  const structured = result.structuredContent;
  if (!entry.hasOutputSchema) return complete(call, result, structured);
  if (structured === undefined)
    return toolError(`Tool ${name} declares an outputSchema but returned no structuredContent`);
  const outputProblem = (problems: readonly string[]) =>
    toolError(`Tool ${name} returned structuredContent that does not match its outputSchema: ${problems.join('; ')}`);
  if (entry.standardOutput) {
    // The schema's output (defaults filled, transforms run) is what the client gets.
    const verdict = validateStandard(entry.standardOutput, structured);
    if (verdict instanceof Error) return failure(verdict);
    const settle = (settled: StandardVerdict) =>
      settled.problems ? outputProblem(settled.problems) : complete(call, result, settled.value as JsonObject);
    return isThenable(verdict) ? verdict.then(settle, failure) : settle(verdict);
  }
  const problems = entry.checkOutput!(structured);
  return problems ? outputProblem(problems) : complete(call, result, structured);
}

/** The result with its structured content, a text block holding that content's JSON when it has none, shaped. */
function complete(call: Call, result: CallToolResult, structured: JsonObject | undefined): CallToolResult {
  const name = call.entry.definition.name;
  const hasContent = Array.isArray(result.content) && result.content.length > 0;
  if (!hasContent && structured !== undefined) {
    // Clients before 2025-06-18 (and models) read structured output from a text block holding its JSON.
    const json = jsonText(structured);
    if ('refusal' in json)
      return toolError(`Tool ${name} returned structuredContent that cannot be written as JSON: ${json.refusal}`);
    result = { ...result, structuredContent: structured, content: [{ type: 'text', text: json.text }] };
  } else if (!Array.isArray(result.content)) {
    return toolError(`Tool ${name} returned a result without a content array`);
  } else if (structured !== result.structuredContent) {
    result = { ...result, structuredContent: structured };
  }
  return shapeCallToolResult(result, call.version);
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
