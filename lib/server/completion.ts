import { ErrorCode, invalidParams, McpError } from '../jsonrpc/errors';
import { excerpt } from '../jsonrpc/excerpt';
import type { JsonObject } from '../jsonrpc/types';
import type { CompleteResult, Completion } from '../protocol/types';
import { peerText } from './peer-text';
import { unknownPrompt, type PromptCatalog } from './prompts';
import type { ResourceCatalog } from './resources';
import type { Completer, ServerContext } from './context';

/** At most this many values go back in one completion (the spec's limit). */
export const MAX_COMPLETION_VALUES = 100;

const NO_COMPLETION: CompleteResult = Object.freeze({ completion: Object.freeze({ values: [] }) });

/**
 * Runs `completion/complete`: finds the completer of the referenced prompt argument or template variable.
 * An unknown prompt, template or argument is -32602; a known one without a completer completes to nothing.
 */
export function complete(
  params: JsonObject | undefined,
  context: ServerContext,
  prompts: PromptCatalog | undefined,
  resources: ResourceCatalog | undefined,
): CompleteResult | Promise<CompleteResult> {
  const ref = params?.ref as { type?: unknown; name?: unknown; uri?: unknown } | undefined;
  const argument = params?.argument as { name?: unknown; value?: unknown } | undefined;
  if (typeof argument?.name !== 'string' || typeof argument.value !== 'string') {
    throw invalidParams('completion/complete needs "argument" with a string "name" and "value"');
  }
  const completer = findCompleter(ref, argument.name, prompts, resources);
  if (!completer) return NO_COMPLETION;
  const chosen = (params?.context as { arguments?: Record<string, string> } | undefined)?.arguments ?? {};
  const output = completer(argument.value, { arguments: chosen, request: context });
  return typeof (output as Promise<unknown>).then === 'function'
    ? (output as Promise<readonly string[] | Completion>).then(toResult)
    : toResult(output as readonly string[] | Completion);
}

function findCompleter(
  ref: { type?: unknown; name?: unknown; uri?: unknown } | undefined,
  name: string,
  prompts: PromptCatalog | undefined,
  resources: ResourceCatalog | undefined,
): Completer | undefined {
  if (ref?.type === 'ref/prompt' && typeof ref.name === 'string') {
    const prompt = prompts?.get(ref.name);
    if (!prompt) throw unknownPrompt(ref.name);
    if (!prompt.arguments?.some((declared) => declared.name === name)) {
      throw invalidParams(`Prompt ${ref.name} has no argument ${excerpt(name)}`);
    }
    return prompt.complete?.[name];
  }
  if (ref?.type === 'ref/resource' && typeof ref.uri === 'string') {
    const compiled = resources?.template(ref.uri);
    if (!compiled) throw invalidParams(`Unknown resource template: ${peerText(ref.uri)}`);
    if (!compiled.template.variableNames.includes(name)) {
      throw invalidParams(`Resource template ${ref.uri} has no variable ${excerpt(name)}`);
    }
    return compiled.definition.complete?.[name];
  }
  throw invalidParams('completion/complete needs "ref" of type ref/prompt (with a name) or ref/resource (with a uri)');
}

function toResult(output: readonly string[] | Completion): CompleteResult {
  const completion: Completion = Array.isArray(output) ? { values: output } : (output as Completion);
  const values = completion.values;
  if (!Array.isArray(values) || values.some((value) => typeof value !== 'string')) {
    throw new McpError(ErrorCode.InternalError, 'A completer returned something other than a list of strings');
  }
  if (values.length <= MAX_COMPLETION_VALUES) return { completion };
  return {
    completion: {
      values: values.slice(0, MAX_COMPLETION_VALUES),
      total: completion.total ?? values.length,
      hasMore: true,
    },
  };
}
