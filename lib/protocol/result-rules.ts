/**
 * The result rules of every MCP request we send, by revision and method: what a peer's answer must hold
 * before the caller sees it. Strict where the official schemas are (required members, their types,
 * content-block discriminators, `isError` a boolean, `nextCursor` a string, a tool's `inputSchema.type`
 * "object"), open where they are (unknown members pass; string formats such as `uri` or base64 are not
 * checked).
 *
 * Revisions differ only by additions. A member a later revision added is an unknown member to an earlier
 * one, so it is checked only from its revision on (a 2025-03-26 server may send any `structuredContent`).
 * Content types and shapes a later revision added (audio, resource links, tool use in sampling, lists in
 * elicitation answers) are accepted in every revision: a peer one revision ahead still works.
 */
import {
  anyObject,
  arrayOf,
  boolean,
  byType,
  constant,
  either,
  integer,
  number,
  numberBetween,
  object,
  oneOf,
  problem,
  recordOf,
  singleOrArray,
  string,
  withShortcut,
  type Fields,
  type Rule,
} from './rules';
import { isAtLeast, type ProtocolVersion } from './versions';
import { isPlainObject } from '../jsonrpc/classify';

/** The rules of one revision, method -> rule of its result. */
function buildRules(version: ProtocolVersion): Readonly<Record<string, Rule>> {
  /** `fields` when the revision defines them, else nothing (they are unknown members there). */
  const since = <T extends object>(first: ProtocolVersion, fields: T): T | object =>
    isAtLeast(version, first) ? fields : {};

  const meta = { _meta: anyObject };
  /** `_meta` on the parts of a result (contents, tools, resources, ...) came with 2025-06-18. */
  const partMeta = since('2025-06-18', meta);

  /** An open part of a result, with `_meta` where the revision has it there. */
  const part = (fields: Fields): Rule =>
    object({ required: fields.required, optional: { ...partMeta, ...fields.optional } });

  /** A whole result: `_meta` is there in every revision. */
  const result = (fields: Fields): Rule =>
    object({ required: fields.required, optional: { ...meta, ...fields.optional } });

  const role = oneOf(['user', 'assistant']);

  const icon = object({
    required: { src: string },
    optional: { mimeType: string, sizes: arrayOf(string), theme: string },
  });
  const icons = since('2025-11-25', { icons: arrayOf(icon) });

  const annotations = object({
    optional: {
      audience: arrayOf(role),
      priority: numberBetween(0, 1),
      ...since('2025-06-18', { lastModified: string }),
    },
  });

  /** What a resource, a resource link and a template share besides their address. */
  const described = {
    ...since('2025-06-18', { title: string }),
    description: string,
    mimeType: string,
    annotations,
    ...icons,
  };

  const resource = part({ required: { uri: string, name: string }, optional: { ...described, size: integer } });

  const resourceTemplate = part({ required: { uriTemplate: string, name: string }, optional: described });

  /** Text or blob contents of a resource: `uri` and one of the two payloads is what a reader needs. */
  const resourceContents = part({
    required: { uri: string },
    optional: { mimeType: string, text: string, blob: string },
  });
  const textOrBlob = either(
    object({ required: { text: string } }),
    object({ required: { blob: string } }),
    'must have a "text" or a "blob" string',
  );
  const anyResourceContents: Rule = (value) => resourceContents(value) ?? textOrBlob(value);

  const text = part({ required: { text: string }, optional: { annotations } });
  const binary = part({ required: { data: string, mimeType: string }, optional: { annotations } });

  /** A content block of tool results and prompt messages; a bare text block is checked in a few loads. */
  const contentBlock = withShortcut(
    isBareTextBlock,
    byType({
      text,
      image: binary,
      audio: binary,
      resource_link: object({
        required: { uri: string, name: string },
        optional: { ...meta, ...described, size: integer },
      }),
      resource: part({ required: { resource: anyResourceContents }, optional: { annotations } }),
    }),
  );

  /** A content block of a sampling message: no resources, but tool use and tool results (2025-11-25). */
  const samplingContent = byType({
    text,
    image: binary,
    audio: binary,
    tool_use: object({ required: { id: string, name: string, input: anyObject }, optional: meta }),
    tool_result: object({
      required: { toolUseId: string, content: arrayOf(contentBlock) },
      optional: { ...meta, structuredContent: anyObject, isError: boolean },
    }),
  });

  /** `inputSchema` and `outputSchema`: JSON Schemas of objects. */
  const objectSchema = object({
    required: { type: constant('object') },
    optional: {
      properties: recordOf(anyObject),
      required: arrayOf(string),
      ...since('2025-11-25', { $schema: string }),
    },
  });

  const tool = part({
    required: { name: string, inputSchema: objectSchema },
    optional: {
      description: string,
      ...since('2025-03-26', {
        annotations: object({
          optional: {
            title: string,
            readOnlyHint: boolean,
            destructiveHint: boolean,
            idempotentHint: boolean,
            openWorldHint: boolean,
          },
        }),
      }),
      ...since('2025-06-18', { title: string, outputSchema: objectSchema }),
      ...since('2025-11-25', {
        execution: object({ optional: { taskSupport: oneOf(['forbidden', 'optional', 'required']) } }),
      }),
      ...icons,
    },
  });

  const prompt = part({
    required: { name: string },
    optional: {
      ...since('2025-06-18', { title: string }),
      description: string,
      ...icons,
      arguments: arrayOf(
        object({
          required: { name: string },
          optional: { ...since('2025-06-18', { title: string }), description: string, required: boolean },
        }),
      ),
    },
  });

  /** A page of a list: its items under `key`, and the cursor of the next page when there is one. */
  const page = (key: string, item: Rule): Rule =>
    result({ required: { [key]: arrayOf(item) }, optional: { nextCursor: string } });

  const listChanged = object({ optional: { listChanged: boolean } });

  const serverCapabilities = object({
    optional: {
      experimental: recordOf(anyObject),
      logging: anyObject,
      ...since('2025-03-26', { completions: anyObject }),
      prompts: listChanged,
      resources: object({ optional: { listChanged: boolean, subscribe: boolean } }),
      tools: listChanged,
      ...since('2025-11-25', { tasks: anyObject }),
    },
  });

  const implementation = object({
    required: { name: string, version: string },
    optional: {
      ...since('2025-06-18', { title: string }),
      ...since('2025-11-25', { description: string, websiteUrl: string, icons: arrayOf(icon) }),
    },
  });

  const empty = withShortcut(isBareObject, result({}));

  /** Checked on every call: the common shape (text blocks, maybe `isError`) is checked without the full walk. */
  const callToolResult = withShortcut(
    isCommonToolResult,
    result({
      required: { content: arrayOf(contentBlock) },
      optional: { ...since('2025-06-18', { structuredContent: anyObject }), isError: boolean },
    }),
  );

  const strings = arrayOf(string);
  /** An answer to one form field: a string, a number, a boolean, or (2025-11-25) a list of strings. */
  const elicitedValue: Rule = (value) =>
    typeof value === 'string' || typeof value === 'boolean' || number(value) === undefined
      ? undefined
      : Array.isArray(value)
        ? strings(value)
        : problem('must be a string, a number, a boolean or a list of strings');

  return Object.freeze(
    Object.assign(Object.create(null) as Record<string, Rule>, {
      initialize: result({
        required: { protocolVersion: string, capabilities: serverCapabilities, serverInfo: implementation },
        optional: { instructions: string },
      }),
      ping: empty,
      'tools/list': page('tools', tool),
      'tools/call': callToolResult,
      'resources/list': page('resources', resource),
      'resources/templates/list': page('resourceTemplates', resourceTemplate),
      'resources/read': result({ required: { contents: arrayOf(anyResourceContents) } }),
      'resources/subscribe': empty,
      'resources/unsubscribe': empty,
      'prompts/list': page('prompts', prompt),
      'prompts/get': result({
        required: { messages: arrayOf(object({ required: { role, content: contentBlock } })) },
        optional: { description: string },
      }),
      'completion/complete': result({
        required: {
          completion: object({ required: { values: arrayOf(string) }, optional: { total: integer, hasMore: boolean } }),
        },
      }),
      'logging/setLevel': empty,
      'sampling/createMessage': result({
        required: { role, model: string, content: singleOrArray(samplingContent) },
        optional: { stopReason: string },
      }),
      'elicitation/create': result({
        required: { action: oneOf(['accept', 'decline', 'cancel']) },
        optional: { content: recordOf(elicitedValue) },
      }),
      'roots/list': result({
        required: { roots: arrayOf(part({ required: { uri: string }, optional: { name: string } })) },
      }),
    }),
  );
}

// Shortcuts for the results of every call: plain functions with direct property loads, valid in every
// revision (each accepts only what the full rule of every revision accepts).

function isBareObject(value: unknown): boolean {
  return isPlainObject(value) && value._meta === undefined;
}

function isBareTextBlock(value: unknown): boolean {
  return (
    isPlainObject(value) &&
    value.type === 'text' &&
    typeof value.text === 'string' &&
    value.annotations === undefined &&
    value._meta === undefined
  );
}

/** Text blocks only, `isError` a boolean if there, `structuredContent` an object if there, no `_meta`. */
function isCommonToolResult(value: unknown): boolean {
  if (!isPlainObject(value) || value._meta !== undefined) return false;
  const { content, isError, structuredContent } = value;
  if (isError !== undefined && typeof isError !== 'boolean') return false;
  if (structuredContent !== undefined && !isPlainObject(structuredContent)) return false;
  if (!Array.isArray(content)) return false;
  for (let index = 0; index < content.length; index++) if (!isBareTextBlock(content[index])) return false;
  return true;
}

const byRevision = new Map<ProtocolVersion, Readonly<Record<string, Rule>>>();

/** Method -> the rule of its result in `version`, built once per revision. Extension methods have none. */
export function resultRules(version: ProtocolVersion): Readonly<Record<string, Rule>> {
  let rules = byRevision.get(version);
  if (!rules) byRevision.set(version, (rules = buildRules(version)));
  return rules;
}
