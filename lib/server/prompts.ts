import { ErrorCode, invalidParams, McpError } from '../jsonrpc/errors';
import { excerpt } from '../jsonrpc/excerpt';
import type { JsonObject } from '../jsonrpc/types';
import { shapeContentList } from '../protocol/shape';
import type { GetPromptResult, Prompt, PromptMessage } from '../protocol/types';
import { Listing, listResult } from './listing';
import { peerText } from './peer-text';
import type { Completer, ServerContext } from './context';
import { checkScopes } from '../auth/server/scopes';

/** A prompt template: its description, its arguments and the function that renders its messages. */
export interface PromptDefinition extends Prompt {
  readonly get: (
    args: Readonly<Record<string, string>>,
    context: ServerContext,
  ) => GetPromptResult | readonly PromptMessage[] | Promise<GetPromptResult | readonly PromptMessage[]>;
  /** Completion for the prompt's arguments (`completion/complete` with a `ref/prompt`). */
  readonly complete?: Readonly<Record<string, Completer>>;
  /** OAuth scopes a caller's token must grant to get it, on an HTTP endpoint with `auth`. Not listed. */
  readonly scopes?: readonly string[];
}

function promptWire({ get: _get, complete: _complete, scopes: _scopes, ...prompt }: PromptDefinition): Prompt {
  return prompt;
}

/** An immutable set of prompts: the paged listing and `prompts/get`. */
export class PromptCatalog {
  private readonly byName = new Map<string, PromptDefinition>();
  private readonly listing: Listing<Prompt>;

  constructor(readonly definitions: readonly PromptDefinition[]) {
    for (const prompt of definitions) {
      if (typeof prompt.get !== 'function') throw new TypeError(`Prompt ${prompt.name}: get must be a function`);
      if (this.byName.has(prompt.name)) throw new TypeError(`Two prompts are named ${prompt.name}`);
      checkScopes(`Prompt ${prompt.name}`, prompt.scopes);
      this.byName.set(prompt.name, Object.freeze(prompt));
    }
    this.listing = new Listing('prompts', 'Prompt', definitions, promptWire);
  }

  get(name: string): PromptDefinition | undefined {
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
    const output = prompt.get(args as Record<string, string>, context);
    const finish = (value: GetPromptResult | readonly PromptMessage[]) => shapePromptResult(name, value, version);
    return typeof (output as Promise<unknown>).then === 'function'
      ? (output as Promise<GetPromptResult | readonly PromptMessage[]>).then(finish)
      : finish(output as GetPromptResult | readonly PromptMessage[]);
  }
}

/** The handler's messages as a result for `version`; content it cannot carry is an internal error. */
function shapePromptResult(
  name: string,
  value: GetPromptResult | readonly PromptMessage[],
  version: string,
): GetPromptResult {
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
