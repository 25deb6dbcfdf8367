import { ErrorCode, invalidParams, McpError } from '../jsonrpc/errors';
import { isThenable } from '../core/thenable';
import { excerpt } from '../jsonrpc/excerpt';
import type { JsonObject } from '../jsonrpc/types';
import { shapeContentList } from '../protocol/shape';
import type { GetPromptResult, JsonSchema, Prompt, PromptArgument, PromptMessage } from '../protocol/types';
import { resolveSchema } from '../validation/schema-input';
import { runStandardSchema, type StandardSchemaV1, type StandardVerdict } from '../validation/standard-schema';
import { Listing, listResult } from './listing';
import { peerText } from './peer-text';
import type { Completer, ServerContext } from './context';
import { checkScopes } from '../auth/server/scopes';

/** What a prompt's `get` returns: its messages, or a whole result. */
export type PromptReturn = GetPromptResult | readonly PromptMessage[];

/** A prompt template: its description, its arguments and the function that renders its messages. */
export interface PromptDefinition<Args = Readonly<Record<string, string>>> extends Prompt {
  readonly get: (args: Args, context: ServerContext) => PromptReturn | Promise<PromptReturn>;
  /** Completion for the prompt's arguments (`completion/complete` with a `ref/prompt`). */
  readonly complete?: Readonly<Record<string, Completer>>;
  /** OAuth scopes a caller's token must grant to get it, on an HTTP endpoint with `auth`. Not listed. */
  readonly scopes?: readonly string[];
}

/** The arguments `get` receives for an argument list written `as const`: required names always present. */
export type ListedPromptArguments<L extends readonly PromptArgument[]> = string extends L[number]['name']
  ? Readonly<Record<string, string>>
  : { readonly [N in Extract<L[number], { readonly required: true }>['name']]: string } & {
      readonly [N in Exclude<L[number], { readonly required: true }>['name']]?: string;
    };

/** What `get` receives for arguments `A`: a Standard Schema's output, or the listed names as strings. */
export type PromptArgumentsOf<A> = A extends StandardSchemaV1
  ? StandardSchemaV1.InferOutput<A>
  : A extends readonly PromptArgument[]
    ? ListedPromptArguments<A>
    : Readonly<Record<string, string>>;

/**
 * A prompt as written: `arguments` as a list (written `as const` it types `get`'s arguments) or as a Standard
 * Schema of an object of strings (validated before `get`, which gets the schema's output; listed to clients
 * as the object's properties, with their descriptions).
 */
export interface PromptSpec<A = undefined> extends Omit<Prompt, 'arguments'> {
  /** The arguments: a list of named string arguments, or a Standard Schema of an object. */
  readonly arguments?: A extends StandardSchemaV1 | readonly PromptArgument[] ? A : readonly PromptArgument[];
  /** Renders the messages, given the arguments (a schema's output, when `arguments` is a schema). */
  get(args: NoInfer<PromptArgumentsOf<A>>, context: ServerContext): PromptReturn | Promise<PromptReturn>;
  /** Completion for the prompt's arguments (`completion/complete` with a `ref/prompt`). */
  readonly complete?: Readonly<Record<string, Completer>>;
  /** OAuth scopes a caller's token must grant to get it, on an HTTP endpoint with `auth`. Not listed. */
  readonly scopes?: readonly string[];
}

/** The Standard Schemas of defined prompts, which validate their arguments. */
const argumentSchemas = new WeakMap<object, StandardSchemaV1>();
const defined = new WeakSet<object>();

/**
 * Checks a prompt and returns its frozen definition (a Standard Schema's arguments listed from its JSON
 * Schema). Throws a TypeError naming the prompt for a missing `get` or arguments that are no list or schema.
 * Idempotent: a definition passes through unchanged.
 */
export function definePrompt<const A = undefined>(prompt: PromptSpec<A>): PromptDefinition<PromptArgumentsOf<A>>;
export function definePrompt(prompt: PromptSpec<any>): PromptDefinition<any> {
  if (defined.has(prompt)) return prompt as PromptDefinition<any>;
  const owner = `Prompt ${typeof prompt?.name === 'string' ? prompt.name : excerpt(prompt?.name)}`;
  if (typeof prompt?.name !== 'string' || prompt.name === '') throw new TypeError(`${owner}: name must be a string`);
  if (typeof prompt.get !== 'function') throw new TypeError(`${owner}: get must be a function`);
  checkScopes(owner, prompt.scopes);
  const args: unknown = prompt.arguments;
  let definition: PromptDefinition<any>;
  if (args === undefined || Array.isArray(args)) {
    if (args?.some((arg) => typeof arg?.name !== 'string'))
      throw new TypeError(`${owner}: every argument needs a string name`);
    definition = Object.freeze(prompt) as PromptDefinition<any>;
  } else {
    const { json, standard } = resolveSchema(owner, 'arguments', args, 'input');
    definition = Object.freeze({ ...prompt, arguments: listedArguments(json) }) as PromptDefinition<any>;
    if (standard) argumentSchemas.set(definition, standard);
  }
  defined.add(definition);
  return definition;
}

/** An object schema's properties as a prompt's argument list. */
function listedArguments(schema: JsonSchema): PromptArgument[] {
  const properties = (schema.properties ?? {}) as Record<string, { title?: unknown; description?: unknown }>;
  const required = Array.isArray(schema.required) ? (schema.required as unknown[]) : [];
  return Object.entries(properties).map(([name, property]) => ({
    name,
    ...(typeof property?.title === 'string' && { title: property.title }),
    ...(typeof property?.description === 'string' && { description: property.description }),
    ...(required.includes(name) && { required: true }),
  }));
}

function promptWire({ get: _get, complete: _complete, scopes: _scopes, ...prompt }: PromptDefinition<any>): Prompt {
  return prompt;
}

/** An immutable set of prompts: the paged listing and `prompts/get`. */
export class PromptCatalog {
  private readonly byName = new Map<string, PromptDefinition<any>>();
  private readonly listing: Listing<Prompt>;

  readonly definitions: readonly PromptDefinition<any>[];

  constructor(prompts: readonly PromptSpec<any>[]) {
    this.definitions = prompts.map((prompt) => definePrompt(prompt));
    for (const prompt of this.definitions) {
      if (this.byName.has(prompt.name)) throw new TypeError(`Two prompts are named ${prompt.name}`);
      this.byName.set(prompt.name, prompt);
    }
    this.listing = new Listing('prompts', 'Prompt', this.definitions, promptWire);
  }

  get(name: string): PromptDefinition<any> | undefined {
    return this.byName.get(name);
  }

  /** A `prompts/list` result (with `granted`, of the prompts whose scopes it holds). */
  list(cursor: unknown, version: string, pageSize: number, granted?: readonly string[]) {
    return listResult('prompts', this.listing.page(cursor, version, pageSize, granted));
  }

  /** Runs `prompts/get`. Unknown prompt, missing required argument or non-string arguments: -32602. */
  render(params: JsonObject | undefined, context: ServerContext): GetPromptResult | Promise<GetPromptResult> {
    const name = params?.name;
    if (typeof name !== 'string') throw invalidParams('prompts/get needs a string "name"');
    const prompt = this.byName.get(name);
    if (!prompt) throw unknownPrompt(name);
    const args = (params!.arguments ?? {}) as Record<string, unknown>;
    if (typeof args !== 'object' || args === null || Array.isArray(args))
      throw invalidParams('"arguments" must be an object');
    for (const [key, value] of Object.entries(args)) {
      if (typeof value !== 'string') throw invalidParams(`argument ${excerpt(key)} must be a string`);
    }
    const missing =
      prompt.arguments?.filter((argument) => argument.required && args[argument.name] === undefined) ?? [];
    if (missing.length > 0) {
      throw invalidParams(
        `prompt ${name} needs the argument${missing.length > 1 ? 's' : ''} ${missing.map((a) => JSON.stringify(a.name)).join(', ')}`,
      );
    }
    const version = context.protocolVersion!;
    const finish = (value: PromptReturn) => shapePromptResult(name, value, version);
    const run = (values: unknown) => {
      const output = prompt.get(values, context);
      return isThenable(output) ? output.then(finish) : finish(output);
    };
    const schema = argumentSchemas.get(prompt);
    if (!schema) return run(args);
    const verdict = runStandardSchema(schema, args);
    const settle = (settled: StandardVerdict) => {
      if (settled.problems) throw invalidParams(`Invalid arguments for prompt ${name}: ${settled.problems.join('; ')}`);
      return run(settled.value);
    };
    return isThenable(verdict) ? verdict.then(settle) : settle(verdict);
  }
}

/** The handler's messages as a result for `version`; content it cannot carry is an internal error. */
function shapePromptResult(name: string, value: PromptReturn, version: string): GetPromptResult {
  const result: GetPromptResult = Array.isArray(value) ? { messages: value } : (value as GetPromptResult);
  if (!Array.isArray(result.messages)) throw broken(name, 'no "messages" array');
  let changed = false;
  const messages = result.messages.map((message, index) => {
    if ((message?.role !== 'user' && message?.role !== 'assistant') || typeof message.content !== 'object') {
      throw broken(name, `message ${index} needs a role (user or assistant) and one content block`);
    }
    const shaped = shapeContentList([message.content], version);
    if ('refusal' in shaped) throw broken(name, `message ${index} has ${shaped.refusal}`);
    if (shaped.content[0] === message.content) return message;
    changed = true;
    return { ...message, content: shaped.content[0]! };
  });
  return changed ? { ...result, messages } : result;
}

/** -32602 for a `prompts/get` naming no prompt we have (quoting a bounded excerpt of the name). */
export function unknownPrompt(name: unknown): McpError {
  return invalidParams(`Unknown prompt: ${peerText(name)}`);
}

function broken(name: string, why: string): McpError {
  return new McpError(ErrorCode.InternalError, `Prompt ${name} returned ${why}`);
}
