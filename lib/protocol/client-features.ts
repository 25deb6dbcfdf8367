/**
 * Wire types of the client features a server calls: sampling, elicitation and roots (revision 2025-11-25,
 * a superset of the older ones).
 */
import type { AudioContent, ContentBlock, ImageContent, MessageRole, Meta, TextContent, Tool } from './types';

export interface ToolUseContent {
  readonly type: 'tool_use';
  readonly id: string;
  readonly name: string;
  readonly input: Readonly<Record<string, unknown>>;
  readonly _meta?: Meta;
}

export interface ToolResultContent {
  readonly type: 'tool_result';
  readonly toolUseId: string;
  readonly content: readonly ContentBlock[];
  readonly structuredContent?: Readonly<Record<string, unknown>>;
  readonly isError?: boolean;
  readonly _meta?: Meta;
}

/** One block of a sampling message (`SamplingMessageContentBlock`). */
export type SamplingContent = TextContent | ImageContent | AudioContent | ToolUseContent | ToolResultContent;

export interface SamplingMessage {
  readonly role: MessageRole;
  readonly content: SamplingContent | readonly SamplingContent[];
  readonly _meta?: Meta;
}

/** A tool offered to the model during sampling: the same shape as a server's Tool. */
export type SamplingTool = Tool;

export interface ToolChoice {
  readonly mode?: 'auto' | 'required' | 'none';
}

export interface ModelPreferences {
  readonly hints?: readonly { readonly name?: string }[];
  readonly costPriority?: number;
  readonly speedPriority?: number;
  readonly intelligencePriority?: number;
}

export type IncludeContext = 'none' | 'thisServer' | 'allServers';

export interface CreateMessageParams {
  readonly messages: readonly SamplingMessage[];
  readonly maxTokens: number;
  readonly modelPreferences?: ModelPreferences;
  readonly systemPrompt?: string;
  readonly includeContext?: IncludeContext;
  readonly temperature?: number;
  readonly stopSequences?: readonly string[];
  readonly metadata?: Readonly<Record<string, unknown>>;
  readonly tools?: readonly SamplingTool[];
  readonly toolChoice?: ToolChoice;
  readonly task?: { readonly ttl?: number };
  readonly _meta?: Meta;
}

export interface CreateMessageResult {
  readonly role: MessageRole;
  readonly content: SamplingContent | readonly SamplingContent[];
  readonly model: string;
  /** `endTurn`, `stopSequence`, `maxTokens`, `toolUse`, or any provider-specific string. */
  readonly stopReason?: string;
  readonly _meta?: Meta;
}

export type StringFormat = 'email' | 'uri' | 'date' | 'date-time';

/** The `title` and `description` every primitive schema of an elicitation form may carry. */
export interface Described {
  readonly title?: string;
  readonly description?: string;
}

export interface StringSchema extends Described {
  readonly type: 'string';
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly format?: StringFormat;
  readonly default?: string;
}

export interface NumberSchema extends Described {
  readonly type: 'number' | 'integer';
  readonly minimum?: number;
  readonly maximum?: number;
  readonly default?: number;
}

export interface BooleanSchema extends Described {
  readonly type: 'boolean';
  readonly default?: boolean;
}

export interface EnumOption {
  readonly const: string;
  readonly title: string;
}

export interface UntitledSingleSelectEnumSchema extends Described {
  readonly type: 'string';
  readonly enum: readonly string[];
  readonly default?: string;
}

export interface TitledSingleSelectEnumSchema extends Described {
  readonly type: 'string';
  readonly oneOf: readonly EnumOption[];
  readonly default?: string;
}

/** Deprecated in 2025-11-25 (use TitledSingleSelectEnumSchema), still accepted. */
export interface LegacyTitledEnumSchema extends Described {
  readonly type: 'string';
  readonly enum: readonly string[];
  readonly enumNames?: readonly string[];
  readonly default?: string;
}

export interface UntitledMultiSelectEnumSchema extends Described {
  readonly type: 'array';
  readonly items: { readonly type: 'string'; readonly enum: readonly string[] };
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly default?: readonly string[];
}

export interface TitledMultiSelectEnumSchema extends Described {
  readonly type: 'array';
  readonly items: { readonly anyOf: readonly EnumOption[] };
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly default?: readonly string[];
}

/** One property of a form: `PrimitiveSchemaDefinition`. */
export type PrimitiveSchema =
  | StringSchema
  | NumberSchema
  | BooleanSchema
  | UntitledSingleSelectEnumSchema
  | TitledSingleSelectEnumSchema
  | LegacyTitledEnumSchema
  | UntitledMultiSelectEnumSchema
  | TitledMultiSelectEnumSchema;

/** The restricted schema of a form: a flat object of primitive properties. */
export interface RequestedSchema {
  readonly $schema?: string;
  readonly type: 'object';
  readonly properties: Readonly<Record<string, PrimitiveSchema>>;
  readonly required?: readonly string[];
}

export interface ElicitFormParams {
  /** Absent means form mode. */
  readonly mode?: 'form';
  readonly message: string;
  readonly requestedSchema: RequestedSchema;
  readonly task?: { readonly ttl?: number };
  readonly _meta?: Meta;
}

export interface ElicitUrlParams {
  readonly mode: 'url';
  readonly message: string;
  readonly elicitationId: string;
  readonly url: string;
  readonly task?: { readonly ttl?: number };
  readonly _meta?: Meta;
}

export type ElicitParams = ElicitFormParams | ElicitUrlParams;

export type ElicitValue = string | number | boolean | readonly string[];

export interface ElicitResult {
  readonly action: 'accept' | 'decline' | 'cancel';
  /** Only for an accepted form-mode elicitation. */
  readonly content?: Readonly<Record<string, ElicitValue>>;
  readonly _meta?: Meta;
}

export interface Root {
  /** A `file://` URI (the only scheme the protocol allows for now). */
  readonly uri: string;
  readonly name?: string;
  readonly _meta?: Meta;
}
