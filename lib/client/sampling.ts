/**
 * Pure validation for `sampling/createMessage` (client side): the server's request and the application's answer.
 * A request that breaks the protocol throws `McpError(-32602)`; a bad answer from the application throws `TypeError`.
 */
import { isPlainObject } from '../jsonrpc/classify';
import { describeValue, faultsOf, quote, type Fail } from './checks';
import type {
  CreateMessageParams,
  CreateMessageResult,
  SamplingContent,
  ToolResultContent,
  ToolUseContent,
} from '../protocol/client-features';

/** What the client declared under `capabilities.sampling`. */
export interface SamplingDeclared {
  readonly tools: boolean;
  readonly context: boolean;
}

const { serverFault, appFault } = faultsOf('sampling/createMessage');

const ROLES: readonly unknown[] = ['user', 'assistant'];
const INCLUDE_CONTEXT: readonly unknown[] = ['none', 'thisServer', 'allServers'];
const TOOL_CHOICE_MODES: readonly unknown[] = ['auto', 'required', 'none'];

function requireString(value: unknown, where: string, fail: Fail): void {
  if (typeof value !== 'string') fail(`${where} must be a string, got ${describeValue(value)}`);
}

function optional(value: unknown, where: string, fail: Fail, kind: 'string' | 'boolean' | 'number' | 'object'): void {
  if (value === undefined) return;
  const ok =
    kind === 'object' ? isPlainObject(value) : kind === 'number' ? Number.isFinite(value) : typeof value === kind;
  if (!ok) fail(`${where} must be ${kind === 'object' ? 'an object' : `a ${kind}`}, got ${describeValue(value)}`);
}

function checkPlainBlock(block: Record<string, unknown>, where: string, fail: Fail): boolean {
  switch (block.type) {
    case 'text':
      requireString(block.text, `${where}.text`, fail);
      return true;
    case 'image':
    case 'audio':
      requireString(block.data, `${where}.data`, fail);
      requireString(block.mimeType, `${where}.mimeType`, fail);
      return true;
    default:
      return false;
  }
}

/** A ContentBlock inside a tool_result: what a tools/call result may hold. */
function checkToolResultBlock(block: unknown, where: string, fail: Fail): void {
  if (!isPlainObject(block)) return fail(`${where} must be a content block, got ${describeValue(block)}`);
  if (checkPlainBlock(block, where, fail)) return;
  if (block.type === 'resource_link') {
    requireString(block.uri, `${where}.uri`, fail);
    requireString(block.name, `${where}.name`, fail);
  } else if (block.type === 'resource') {
    const resource = block.resource;
    if (!isPlainObject(resource)) return fail(`${where}.resource must be an object, got ${describeValue(resource)}`);
    requireString(resource.uri, `${where}.resource.uri`, fail);
    if (typeof resource.text !== 'string' && typeof resource.blob !== 'string')
      fail(`${where}.resource needs a string text or blob`);
  } else {
    fail(`${where} has unknown content type ${describeValue(block.type)}`);
  }
}

function checkBlock(block: unknown, where: string, fail: Fail): SamplingContent {
  if (!isPlainObject(block)) return fail(`${where} must be a content block, got ${describeValue(block)}`);
  if (!checkPlainBlock(block, where, fail)) {
    if (block.type === 'tool_use') {
      requireString(block.id, `${where}.id`, fail);
      requireString(block.name, `${where}.name`, fail);
      if (!isPlainObject(block.input)) fail(`${where}.input must be an object, got ${describeValue(block.input)}`);
    } else if (block.type === 'tool_result') {
      requireString(block.toolUseId, `${where}.toolUseId`, fail);
      if (!Array.isArray(block.content)) fail(`${where}.content must be an array, got ${describeValue(block.content)}`);
      (block.content as unknown[]).forEach((inner, i) => checkToolResultBlock(inner, `${where}.content[${i}]`, fail));
      optional(block.structuredContent, `${where}.structuredContent`, fail, 'object');
      optional(block.isError, `${where}.isError`, fail, 'boolean');
    } else {
      fail(`${where} has unknown content type ${describeValue(block.type)}`);
    }
  }
  optional(block.annotations, `${where}.annotations`, fail, 'object');
  optional(block._meta, `${where}._meta`, fail, 'object');
  return block as unknown as SamplingContent;
}

interface Located {
  readonly block: SamplingContent;
  readonly where: string;
}

/** The blocks of a message or result, each with its path for error messages. */
function blocksOf(content: unknown, where: string, fail: Fail): Located[] {
  if (!Array.isArray(content)) return [{ block: checkBlock(content, where, fail), where }];
  return content.map((block, i) => ({ block: checkBlock(block, `${where}[${i}]`, fail), where: `${where}[${i}]` }));
}

function checkTool(tool: unknown, where: string): void {
  if (!isPlainObject(tool)) return serverFault(`${where} must be a tool object, got ${describeValue(tool)}`);
  requireString(tool.name, `${where}.name`, serverFault);
  if (!isPlainObject(tool.inputSchema) || tool.inputSchema.type !== 'object')
    serverFault(`${where}.inputSchema must be an object schema with type "object"`);
  optional(tool.description, `${where}.description`, serverFault, 'string');
}

function checkModelPreferences(preferences: unknown): void {
  if (preferences === undefined) return;
  if (!isPlainObject(preferences))
    return serverFault(`modelPreferences must be an object, got ${describeValue(preferences)}`);
  for (const key of ['costPriority', 'speedPriority', 'intelligencePriority'] as const) {
    const value = preferences[key];
    if (value !== undefined && !(typeof value === 'number' && value >= 0 && value <= 1))
      serverFault(`modelPreferences.${key} must be a number between 0 and 1, got ${describeValue(value)}`);
  }
  const hints = preferences.hints;
  if (hints === undefined) return;
  if (!Array.isArray(hints)) return serverFault(`modelPreferences.hints must be an array, got ${describeValue(hints)}`);
  hints.forEach((hint, i) => {
    if (!isPlainObject(hint)) serverFault(`modelPreferences.hints[${i}] must be an object, got ${describeValue(hint)}`);
    optional((hint as Record<string, unknown>).name, `modelPreferences.hints[${i}].name`, serverFault, 'string');
  });
}

/**
 * The 2025-11-25 tool-use rules over the whole conversation: tool_use only from the assistant, tool_result only
 * from the user and never mixed with other content, and every tool_use answered by id in the very next message.
 */
function checkToolTurns(messages: readonly { role: unknown; blocks: Located[] }[], declared: SamplingDeclared): void {
  let pending = new Map<string, string>();
  messages.forEach(({ role, blocks }, i) => {
    const uses = blocks.filter(({ block }) => block.type === 'tool_use');
    const results = blocks.filter(({ block }) => block.type === 'tool_result');
    const first = uses[0] ?? results[0];
    if (first && !declared.tools)
      serverFault(`${first.where} is a ${first.block.type} block, but the client did not declare sampling.tools`);
    if (uses[0] && role !== 'assistant')
      serverFault(
        `${uses[0].where}: tool_use blocks may only appear in assistant messages (messages[${i}] is ${role})`,
      );
    if (results[0] && role !== 'user')
      serverFault(
        `${results[0].where}: tool_result blocks may only appear in user messages (messages[${i}] is ${role})`,
      );
    if (results.length > 0) {
      const other = blocks.find(({ block }) => block.type !== 'tool_result');
      if (other)
        serverFault(
          `messages[${i}] holds tool_result blocks, so it must contain only tool_result blocks, but ${other.where} is ${other.block.type}`,
        );
      const answered = new Set<string>();
      for (const { block, where } of results) {
        const id = (block as ToolResultContent).toolUseId;
        if (!pending.has(id))
          serverFault(
            `${where}: tool_result for toolUseId ${quote(id)} matches no tool_use in the preceding assistant message`,
          );
        if (answered.has(id)) serverFault(`${where}: toolUseId ${quote(id)} is answered twice`);
        answered.add(id);
      }
    }
    for (const [id, where] of pending) {
      if (!results.some(({ block }) => (block as ToolResultContent).toolUseId === id))
        serverFault(`${where}: tool_use ${quote(id)} has no matching tool_result in messages[${i}]`);
    }
    pending = new Map();
    for (const { block, where } of uses) {
      const id = (block as ToolUseContent).id;
      if (pending.has(id)) serverFault(`${where}: tool_use id ${quote(id)} is used twice in messages[${i}]`);
      pending.set(id, where);
    }
  });
  for (const [id, where] of pending)
    serverFault(`${where}: tool_use ${quote(id)} is not answered: no user message with its tool_result follows`);
}

/**
 * Validates the params of a `sampling/createMessage` request against the protocol and what the client declared.
 * Throws `McpError(-32602)` naming the offending field, message index or tool id.
 *
 * `includeContext` "thisServer"/"allServers" without `declared.context` is not an error (servers only SHOULD NOT
 * send it, and the client MAY ignore it): the returned params carry `includeContext: "none"` instead, so the
 * application never acts on context it did not offer. Otherwise the params object itself is returned.
 */
export function checkCreateMessageParams(params: unknown, declared: SamplingDeclared): CreateMessageParams {
  if (!isPlainObject(params)) return serverFault(`params must be an object, got ${describeValue(params)}`);
  const { messages, maxTokens, tools, toolChoice, includeContext, stopSequences } = params;
  if (!Array.isArray(messages)) return serverFault(`messages must be an array, got ${describeValue(messages)}`);
  if (messages.length === 0) serverFault('messages must not be empty');
  if (!Number.isInteger(maxTokens) || (maxTokens as number) < 1)
    serverFault(`maxTokens must be a positive integer, got ${describeValue(maxTokens)}`);
  optional(params.systemPrompt, 'systemPrompt', serverFault, 'string');
  optional(params.temperature, 'temperature', serverFault, 'number');
  optional(params.metadata, 'metadata', serverFault, 'object');
  optional(params._meta, '_meta', serverFault, 'object');
  if (
    stopSequences !== undefined &&
    !(Array.isArray(stopSequences) && stopSequences.every((s) => typeof s === 'string'))
  )
    serverFault('stopSequences must be an array of strings');
  checkModelPreferences(params.modelPreferences);
  if (params.task !== undefined) {
    if (!isPlainObject(params.task)) serverFault(`task must be an object, got ${describeValue(params.task)}`);
    const ttl = (params.task as Record<string, unknown>).ttl;
    if (ttl !== undefined && !Number.isInteger(ttl))
      serverFault(`task.ttl must be an integer, got ${describeValue(ttl)}`);
  }
  if (includeContext !== undefined && !INCLUDE_CONTEXT.includes(includeContext))
    serverFault(`includeContext must be "none", "thisServer" or "allServers", got ${describeValue(includeContext)}`);

  if (tools !== undefined) {
    if (!declared.tools) serverFault('tools is present, but the client did not declare sampling.tools');
    if (!Array.isArray(tools)) return serverFault(`tools must be an array, got ${describeValue(tools)}`);
    tools.forEach((tool, i) => checkTool(tool, `tools[${i}]`));
  }
  if (toolChoice !== undefined) {
    if (!declared.tools) serverFault('toolChoice is present, but the client did not declare sampling.tools');
    if (!isPlainObject(toolChoice))
      return serverFault(`toolChoice must be an object, got ${describeValue(toolChoice)}`);
    if (toolChoice.mode !== undefined && !TOOL_CHOICE_MODES.includes(toolChoice.mode))
      serverFault(`toolChoice.mode must be "auto", "required" or "none", got ${describeValue(toolChoice.mode)}`);
  }

  const located = messages.map((message, i) => {
    const where = `messages[${i}]`;
    if (!isPlainObject(message)) return serverFault(`${where} must be an object, got ${describeValue(message)}`);
    if (!ROLES.includes(message.role))
      serverFault(`${where}.role must be "user" or "assistant", got ${describeValue(message.role)}`);
    optional(message._meta, `${where}._meta`, serverFault, 'object');
    return { role: message.role, blocks: blocksOf(message.content, `${where}.content`, serverFault) };
  });
  checkToolTurns(located, declared);

  if (includeContext !== undefined && includeContext !== 'none' && !declared.context)
    return { ...(params as unknown as CreateMessageParams), includeContext: 'none' };
  return params as unknown as CreateMessageParams;
}

/**
 * Validates what the application's sampling handler returned for `request` (as returned by
 * `checkCreateMessageParams`). Throws `TypeError` naming the problem: a malformed result, tool_use content the
 * request did not allow (no tools, `toolChoice.mode` "none", or a tool it did not offer), tool_use from a role
 * other than assistant, duplicate tool_use ids, or tool_result blocks (only the server produces those).
 */
export function checkCreateMessageResult(result: unknown, request: CreateMessageParams): CreateMessageResult {
  if (!isPlainObject(result)) return appFault(`the handler must return an object, got ${describeValue(result)}`);
  if (!ROLES.includes(result.role)) appFault(`role must be "user" or "assistant", got ${describeValue(result.role)}`);
  requireString(result.model, 'model', appFault);
  optional(result.stopReason, 'stopReason', appFault, 'string');
  optional(result._meta, '_meta', appFault, 'object');
  const ids = new Set<string>();
  for (const { block, where } of blocksOf(result.content, 'content', appFault)) {
    if (block.type === 'tool_result') appFault(`${where} is a tool_result block; only the server sends tool results`);
    if (block.type !== 'tool_use') continue;
    if (!request.tools?.length) appFault(`${where} is a tool_use block, but the request offered no tools`);
    if (request.toolChoice?.mode === 'none')
      appFault(`${where} is a tool_use block, but the request's toolChoice is "none"`);
    if (!request.tools?.some((tool) => tool.name === block.name))
      appFault(`${where} calls tool ${quote(block.name)}, which the request did not offer`);
    if (result.role !== 'assistant') appFault(`${where}: a tool_use result must have role "assistant"`);
    if (ids.has(block.id)) appFault(`${where}: tool_use id ${quote(block.id)} is used twice`);
    ids.add(block.id);
  }
  return result as unknown as CreateMessageResult;
}
