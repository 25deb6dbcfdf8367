/**
 * The MCP shapes the runtime reads and writes (revision 2025-11-25, a superset of the older ones).
 * Open objects (`_meta`, capabilities, results) keep unknown keys: we pass through what we do not know.
 */
import type { JsonObject, RequestId } from '../jsonrpc/types';

export type Meta = Readonly<Record<string, unknown>>;

export interface Icon {
  readonly src: string;
  readonly mimeType?: string;
  readonly sizes?: readonly string[];
  readonly theme?: 'light' | 'dark';
}

export interface Implementation {
  readonly name: string;
  readonly version: string;
  readonly title?: string;
  readonly description?: string;
  readonly icons?: readonly Icon[];
  readonly websiteUrl?: string;
}

export interface ClientCapabilities {
  readonly experimental?: Readonly<Record<string, object>>;
  readonly roots?: { readonly listChanged?: boolean };
  readonly sampling?: { readonly context?: object; readonly tools?: object };
  readonly elicitation?: { readonly form?: object; readonly url?: object };
  readonly tasks?: object;
  readonly [key: string]: unknown;
}

export interface ServerCapabilities {
  readonly experimental?: Readonly<Record<string, object>>;
  readonly logging?: object;
  readonly completions?: object;
  readonly prompts?: { readonly listChanged?: boolean };
  readonly resources?: { readonly subscribe?: boolean; readonly listChanged?: boolean };
  readonly tools?: { readonly listChanged?: boolean };
  readonly tasks?: object;
  readonly [key: string]: unknown;
}

export interface InitializeResult {
  readonly protocolVersion: string;
  readonly capabilities: ServerCapabilities;
  readonly serverInfo: Implementation;
  readonly instructions?: string;
  readonly _meta?: Meta;
}

export type MessageRole = 'user' | 'assistant';

export interface Annotations {
  readonly audience?: readonly MessageRole[];
  readonly priority?: number;
  readonly lastModified?: string;
}

export interface TextContent {
  readonly type: 'text';
  readonly text: string;
  readonly annotations?: Annotations;
  readonly _meta?: Meta;
}

export interface ImageContent {
  readonly type: 'image';
  readonly data: string;
  readonly mimeType: string;
  readonly annotations?: Annotations;
  readonly _meta?: Meta;
}

export interface AudioContent {
  readonly type: 'audio';
  readonly data: string;
  readonly mimeType: string;
  readonly annotations?: Annotations;
  readonly _meta?: Meta;
}

/** A link to a resource in tool results and prompts (it need not appear in `resources/list`). */
export interface ResourceLink extends Resource {
  readonly type: 'resource_link';
}

export interface TextResourceContents {
  readonly uri: string;
  readonly mimeType?: string;
  readonly text: string;
  readonly _meta?: Meta;
}

export interface BlobResourceContents {
  readonly uri: string;
  readonly mimeType?: string;
  readonly blob: string;
  readonly _meta?: Meta;
}

export interface EmbeddedResource {
  readonly type: 'resource';
  readonly resource: TextResourceContents | BlobResourceContents;
  readonly annotations?: Annotations;
  readonly _meta?: Meta;
}

export type ContentBlock = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource;

export interface ToolAnnotations {
  readonly title?: string;
  readonly readOnlyHint?: boolean;
  readonly destructiveHint?: boolean;
  readonly idempotentHint?: boolean;
  readonly openWorldHint?: boolean;
}

/** A JSON Schema object (2020-12 unless its `$schema` says otherwise). */
export type JsonSchema = Readonly<Record<string, unknown>>;

export interface Tool {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly icons?: readonly Icon[];
  readonly inputSchema: JsonSchema;
  readonly outputSchema?: JsonSchema;
  readonly annotations?: ToolAnnotations;
  readonly execution?: { readonly taskSupport?: 'forbidden' | 'optional' | 'required' };
  readonly _meta?: Meta;
}

export interface CallToolResult {
  readonly content: readonly ContentBlock[];
  readonly structuredContent?: JsonObject;
  readonly isError?: boolean;
  readonly _meta?: Meta;
  readonly [key: string]: unknown;
}

export interface ListToolsResult {
  readonly tools: readonly Tool[];
  readonly nextCursor?: string;
  readonly _meta?: Meta;
}

export const LOGGING_LEVELS = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
] as const;
export type LoggingLevel = (typeof LOGGING_LEVELS)[number];

export interface LoggingMessageParams {
  readonly level: LoggingLevel;
  readonly logger?: string;
  readonly data: unknown;
}

export interface ProgressParams {
  readonly progressToken: RequestId;
  readonly progress: number;
  readonly total?: number;
  readonly message?: string;
}

export interface CancelledParams {
  readonly requestId?: RequestId;
  readonly reason?: string;
}

/** What `notifications/progress` reports to an `onProgress` callback. */
export interface Progress {
  readonly progress: number;
  readonly total?: number;
  readonly message?: string;
}

export interface Resource {
  readonly uri: string;
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly mimeType?: string;
  /** Raw size in bytes, when known. */
  readonly size?: number;
  readonly annotations?: Annotations;
  readonly icons?: readonly Icon[];
  readonly _meta?: Meta;
}

export interface ResourceTemplate {
  /** An RFC 6570 URI template. */
  readonly uriTemplate: string;
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly mimeType?: string;
  readonly annotations?: Annotations;
  readonly icons?: readonly Icon[];
  readonly _meta?: Meta;
}

export type ResourceContents = TextResourceContents | BlobResourceContents;

export interface ReadResourceResult {
  readonly contents: readonly ResourceContents[];
  readonly _meta?: Meta;
}

export interface PromptArgument {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly required?: boolean;
}

export interface Prompt {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly arguments?: readonly PromptArgument[];
  readonly icons?: readonly Icon[];
  readonly _meta?: Meta;
}

export interface PromptMessage {
  readonly role: MessageRole;
  readonly content: ContentBlock;
}

export interface GetPromptResult {
  readonly description?: string;
  readonly messages: readonly PromptMessage[];
  readonly _meta?: Meta;
}

/** What `completion/complete` refers to: a prompt by name, or a resource template by its URI template. */
export type CompletionReference =
  | { readonly type: 'ref/prompt'; readonly name: string; readonly title?: string }
  | { readonly type: 'ref/resource'; readonly uri: string };

export interface CompleteParams {
  readonly ref: CompletionReference;
  readonly argument: { readonly name: string; readonly value: string };
  /** Values already chosen for other arguments (2025-06-18 and later). */
  readonly context?: { readonly arguments?: Readonly<Record<string, string>> };
}

export interface Completion {
  /** At most 100. */
  readonly values: readonly string[];
  readonly total?: number;
  readonly hasMore?: boolean;
}

export interface CompleteResult {
  readonly completion: Completion;
  readonly _meta?: Meta;
}

export interface ResourceUpdatedParams {
  readonly uri: string;
  readonly _meta?: Meta;
}

/** Who may share a cached 2026-07-28 result (`cacheScope`): anyone, or one authorization context only. */
export type CacheScope = 'public' | 'private';
