/**
 * What each revision can carry. Everything we send is shaped to the negotiated revision: fields an older
 * peer does not know are dropped, and content it cannot express is converted or refused (never sent
 * invalid). The field tables are checked against the official JSON schemas in the tests.
 */
import { excerpt } from '../jsonrpc/excerpt';
import type { CallToolResult, ContentBlock } from './types';
import { isAtLeast, type ProtocolVersion } from './versions';

type FieldTable = Readonly<Record<string, ProtocolVersion>>;

const V2024 = '2024-11-05';
const V2025_03 = '2025-03-26';
const V2025_06 = '2025-06-18';
const V2025_11 = '2025-11-25';

/** The first revision that knows each field, per MCP type. */
export const FIELDS = {
  Tool: {
    name: V2024,
    description: V2024,
    inputSchema: V2024,
    annotations: V2025_03,
    title: V2025_06,
    outputSchema: V2025_06,
    _meta: V2025_06,
    icons: V2025_11,
    execution: V2025_11,
  },
  Resource: {
    uri: V2024,
    name: V2024,
    description: V2024,
    mimeType: V2024,
    size: V2024,
    annotations: V2024,
    title: V2025_06,
    _meta: V2025_06,
    icons: V2025_11,
  },
  ResourceTemplate: {
    uriTemplate: V2024,
    name: V2024,
    description: V2024,
    mimeType: V2024,
    annotations: V2024,
    title: V2025_06,
    _meta: V2025_06,
    icons: V2025_11,
  },
  Prompt: { name: V2024, description: V2024, arguments: V2024, title: V2025_06, _meta: V2025_06, icons: V2025_11 },
  PromptArgument: { name: V2024, description: V2024, required: V2024, title: V2025_06 },
  Implementation: {
    name: V2024,
    version: V2024,
    title: V2025_06,
    description: V2025_11,
    icons: V2025_11,
    websiteUrl: V2025_11,
  },
  Annotations: { audience: V2024, priority: V2024, lastModified: V2025_06 },
  TextContent: { type: V2024, text: V2024, annotations: V2024, _meta: V2025_06 },
  ImageContent: { type: V2024, data: V2024, mimeType: V2024, annotations: V2024, _meta: V2025_06 },
  AudioContent: { type: V2025_03, data: V2025_03, mimeType: V2025_03, annotations: V2025_03, _meta: V2025_06 },
  EmbeddedResource: { type: V2024, resource: V2024, annotations: V2024, _meta: V2025_06 },
  ResourceLink: {
    type: V2025_06,
    uri: V2025_06,
    name: V2025_06,
    title: V2025_06,
    description: V2025_06,
    mimeType: V2025_06,
    size: V2025_06,
    annotations: V2025_06,
    _meta: V2025_06,
    icons: V2025_11,
  },
  TextResourceContents: { uri: V2024, mimeType: V2024, text: V2024, _meta: V2025_06 },
  BlobResourceContents: { uri: V2024, mimeType: V2024, blob: V2024, _meta: V2025_06 },
  Root: { uri: V2024, name: V2024, _meta: V2025_06 },
} as const satisfies Record<string, FieldTable>;

export type ShapedType = keyof typeof FIELDS;

/** Fields whose value is shaped with the table of its own type (an array: each element). */
const NESTED: Partial<Record<ShapedType, Readonly<Record<string, ShapedType>>>> = {
  Resource: { annotations: 'Annotations' },
  ResourceTemplate: { annotations: 'Annotations' },
  Prompt: { arguments: 'PromptArgument' },
  TextContent: { annotations: 'Annotations' },
  ImageContent: { annotations: 'Annotations' },
  AudioContent: { annotations: 'Annotations' },
  EmbeddedResource: { annotations: 'Annotations' },
  ResourceLink: { annotations: 'Annotations' },
};

function shapeNested(type: ShapedType, value: unknown, version: string): unknown {
  if (Array.isArray(value)) {
    const shaped = value.map((item) => shape(type, item as object, version));
    return shaped.every((item, index) => item === value[index]) ? value : shaped;
  }
  return typeof value === 'object' && value !== null ? shape(type, value, version) : value;
}

/** Per type, per revision: the fields a peer of that revision knows (null prototype: no inherited names). */
const KNOWN_FIELDS = new Map<ShapedType, Map<string, Readonly<Record<string, true>>>>();

function knownFields(type: ShapedType, version: string): Readonly<Record<string, true>> {
  let byVersion = KNOWN_FIELDS.get(type);
  if (!byVersion) KNOWN_FIELDS.set(type, (byVersion = new Map()));
  let known = byVersion.get(version);
  if (!known) {
    const fields: Record<string, true> = Object.create(null);
    for (const [field, since] of Object.entries(FIELDS[type] as FieldTable)) {
      if (isAtLeast(version, since)) fields[field] = true;
    }
    byVersion.set(version, (known = fields));
  }
  return known;
}

/**
 * `value` as a peer of `version` knows it: unknown fields and fields newer than `version` are dropped.
 * Returns the same object when nothing had to go (no allocation on the common path).
 */
export function shape<T extends object>(type: ShapedType, value: T, version: string): T {
  const known = knownFields(type, version);
  const nestedTypes = NESTED[type];
  let shaped: Record<string, unknown> | undefined;
  const source = value as Record<string, unknown>;
  for (const field of Object.keys(source)) {
    const kept = known[field] === true;
    const nested = kept && nestedTypes ? nestedTypes[field] : undefined;
    const fieldValue = nested ? shapeNested(nested, source[field], version) : source[field];
    if (kept && fieldValue === source[field]) {
      if (shaped) shaped[field] = fieldValue;
      continue;
    }
    shaped ??= copyUntil(source, field);
    if (kept) shaped[field] = fieldValue;
  }
  return (shaped ?? value) as T;
}

/** The fields of `source` before `stop`, in order: where a changed copy starts. */
function copyUntil(source: Record<string, unknown>, stop: string): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const field of Object.keys(source)) {
    if (field === stop) break;
    copy[field] = source[field];
  }
  return copy;
}

const CONTENT_TYPES: Readonly<Record<string, ShapedType>> = {
  text: 'TextContent',
  image: 'ImageContent',
  audio: 'AudioContent',
  resource: 'EmbeddedResource',
  resource_link: 'ResourceLink',
};

/** Why a content block cannot be sent at `version`, or undefined when it can. */
export function contentRefusal(block: ContentBlock, version: string): string | undefined {
  const type = CONTENT_TYPES[block?.type];
  if (!type) return `content of unknown type ${excerpt(block?.type)}`;
  const since = (FIELDS[type] as FieldTable).type!;
  if (isAtLeast(version, since) || block.type === 'resource_link') return undefined;
  return `${block.type} content, which protocol revision ${version} cannot carry (it needs ${since} or later)`;
}

/**
 * A content block for a peer of `version`. A `resource_link` before 2025-06-18 becomes a text block
 * naming the resource (the model still learns where it is); call `contentRefusal` first for the rest.
 */
export function shapeContent(block: ContentBlock, version: string): ContentBlock {
  if (block.type === 'resource_link' && !isAtLeast(version, V2025_06)) {
    const label = block.title ?? block.name;
    return { type: 'text', text: `${label}: ${block.uri}${block.description ? ` (${block.description})` : ''}` };
  }
  const shaped = shape(CONTENT_TYPES[block.type]!, block, version);
  if (shaped.type !== 'resource') return shaped;
  const inner = shaped.resource;
  const resource = shape('text' in inner ? 'TextResourceContents' : 'BlobResourceContents', inner, version);
  return resource === inner ? shaped : { ...shaped, resource };
}

/** Shapes every block; returns the first refusal instead when a block cannot be sent. */
export function shapeContentList(
  blocks: readonly ContentBlock[],
  version: string,
): { content: readonly ContentBlock[] } | { refusal: string } {
  let shaped: ContentBlock[] | undefined;
  for (let index = 0; index < blocks.length; index++) {
    const block = blocks[index]!;
    const refusal = contentRefusal(block, version);
    if (refusal) return { refusal };
    const next = shapeContent(block, version);
    if (next !== block) (shaped ??= blocks.slice(0, index))[index] = next;
    else if (shaped) shaped[index] = next;
  }
  return { content: shaped ?? blocks };
}

/** A tool result for `version`: `structuredContent` only from 2025-06-18, content blocks shaped. */
export function shapeCallToolResult(result: CallToolResult, version: string): CallToolResult {
  const shaped = shapeContentList(result.content, version);
  if ('refusal' in shaped) {
    return { content: [{ type: 'text', text: `The tool returned ${shaped.refusal}` }], isError: true };
  }
  const dropStructured = result.structuredContent !== undefined && !isAtLeast(version, V2025_06);
  if (!dropStructured && shaped.content === result.content) return result;
  const { structuredContent: _structured, ...rest } = result;
  return dropStructured ? { ...rest, content: shaped.content } : { ...result, content: shaped.content };
}
