import { isThenable } from '../core/thenable';
import type { Subscribable } from 'rxjs';
import { ErrorCode, invalidParams, McpError } from '../jsonrpc/errors';
import { clipText } from '../jsonrpc/excerpt';
import type { JsonObject } from '../jsonrpc/types';
import { shape } from '../protocol/shape';
import type { ReadResourceResult, Resource, ResourceContents, ResourceTemplate } from '../protocol/types';
import { Listing, listResult } from './listing';
import { peerText } from './peer-text';
import type { Completer, ServerContext } from './context';
import { UriTemplate } from './uri-template';
import { checkScopes } from '../auth/server/scopes';

/** Resource contents whose `uri` defaults to the URI read. */
export type ContentsItem = ResourceContents extends infer T
  ? T extends ResourceContents
    ? Omit<T, 'uri'> & { readonly uri?: string }
    : never
  : never;

/** What a read may return: text, a contents item, several, or a full result. */
export type ContentsInput = string | ContentsItem | readonly ContentsItem[] | ReadResourceResult;

export type TemplateVariables = Readonly<Record<string, string | string[]>>;

/** A resource at a fixed URI. */
export interface ResourceDefinition extends Resource {
  readonly read: (context: ServerContext) => ContentsInput | Promise<ContentsInput>;
  /**
   * Emits whenever the resource changes: each emission sends `notifications/resources/updated` to the
   * clients subscribed to it (a string emission names a sub-resource URI). Subscribed to on the first
   * client subscription and unsubscribed after the last.
   */
  readonly updates?: Subscribable<unknown>;
  /** OAuth scopes a caller's token must grant to read it, on an HTTP endpoint with `auth`. Not listed. */
  readonly scopes?: readonly string[];
}

/** Resources whose URIs match an RFC 6570 template; reads get the template's variables. */
export interface ResourceTemplateDefinition extends ResourceTemplate {
  readonly read: (
    variables: TemplateVariables,
    context: ServerContext,
    uri: string,
  ) => ContentsInput | Promise<ContentsInput>;
  /** Completion for the template's variables (`completion/complete` with a `ref/resource`). */
  readonly complete?: Readonly<Record<string, Completer>>;
  /** Changes of one resource of this template, as for `ResourceDefinition.updates`. */
  readonly updates?: (uri: string, variables: TemplateVariables) => Subscribable<unknown>;
  /** OAuth scopes a caller's token must grant to read its resources, on an HTTP endpoint with `auth`. Not listed. */
  readonly scopes?: readonly string[];
}

/** `ResourceDefinition` minus its functions: what `resources/list` shows. */
function resourceWire({ read: _read, updates: _updates, scopes: _scopes, ...resource }: ResourceDefinition): Resource {
  return resource;
}

function templateWire({
  read: _read,
  complete: _complete,
  updates: _updates,
  scopes: _scopes,
  ...template
}: ResourceTemplateDefinition): ResourceTemplate {
  return template;
}

interface CompiledTemplate {
  readonly definition: ResourceTemplateDefinition;
  readonly template: UriTemplate;
}

/** What serves a URI: a fixed resource, or a template with the variables it matched. */
export type ResourceMatch =
  | { readonly resource: ResourceDefinition; readonly template?: undefined; readonly variables?: undefined }
  | {
      readonly resource?: undefined;
      readonly template: ResourceTemplateDefinition;
      readonly variables: TemplateVariables;
    };

/**
 * An immutable set of resources and resource templates: paged listings, reads (a fixed URI first, then
 * the templates in order), and the change streams that subscriptions follow.
 */
export class ResourceCatalog {
  private readonly byUri = new Map<string, ResourceDefinition>();
  private readonly templates: readonly CompiledTemplate[];
  private readonly resourceListing: Listing<Resource>;
  private readonly templateListing: Listing<ResourceTemplate>;

  constructor(
    readonly resources: readonly ResourceDefinition[],
    readonly resourceTemplates: readonly ResourceTemplateDefinition[],
  ) {
    for (const resource of resources) {
      if (typeof resource.read !== 'function') throw new TypeError(`Resource ${resource.uri}: read must be a function`);
      if (this.byUri.has(resource.uri)) throw new TypeError(`Two resources have the URI ${resource.uri}`);
      checkScopes(`Resource ${resource.uri}`, resource.scopes);
      this.byUri.set(resource.uri, Object.freeze(resource));
    }
    const seen = new Set<string>();
    this.templates = resourceTemplates.map((definition) => {
      if (typeof definition.read !== 'function')
        throw new TypeError(`Resource template ${definition.uriTemplate}: read must be a function`);
      if (seen.has(definition.uriTemplate)) throw new TypeError(`Two resource templates are ${definition.uriTemplate}`);
      seen.add(definition.uriTemplate);
      checkScopes(`Resource template ${definition.uriTemplate}`, definition.scopes);
      return { definition: Object.freeze(definition), template: UriTemplate.parse(definition.uriTemplate) };
    });
    this.resourceListing = new Listing('resources', 'Resource', resources, resourceWire);
    this.templateListing = new Listing('templates', 'ResourceTemplate', resourceTemplates, templateWire);
  }

  /** A `resources/list` result (with `granted`, of the resources whose scopes it holds). */
  list(cursor: unknown, version: string, pageSize: number, granted?: readonly string[]) {
    return listResult('resources', this.resourceListing.page(cursor, version, pageSize, granted));
  }

  /** A `resources/templates/list` result (with `granted`, of the templates whose scopes it holds). */
  listTemplates(cursor: unknown, version: string, pageSize: number, granted?: readonly string[]) {
    return listResult('resourceTemplates', this.templateListing.page(cursor, version, pageSize, granted));
  }

  /** The fixed resource or the first matching template for `uri`. */
  find(uri: string): ResourceMatch | undefined {
    const resource = this.byUri.get(uri);
    if (resource) return { resource };
    for (const { definition, template } of this.templates) {
      const variables = template.match(uri);
      if (variables) return { template: definition, variables };
    }
    return undefined;
  }

  /** The scopes reading `uri` needs (its resource's, or its template's). */
  scopesOf(uri: string): readonly string[] | undefined {
    const match = this.find(uri);
    return match?.resource ? match.resource.scopes : match?.template.scopes;
  }

  /** The template whose URI template string is `uriTemplate` (what completion references name). */
  template(uriTemplate: string): { definition: ResourceTemplateDefinition; template: UriTemplate } | undefined {
    return this.templates.find((compiled) => compiled.definition.uriTemplate === uriTemplate);
  }

  /** The change stream of `uri`, if its resource or template offers one. */
  updatesOf(uri: string): Subscribable<unknown> | undefined {
    const match = this.find(uri);
    if (!match) return undefined;
    return match.resource ? match.resource.updates : match.template.updates?.(uri, match.variables);
  }

  /** Runs `resources/read`. Unknown URI: -32002 with the URI in `data`. */
  read(params: JsonObject | undefined, context: ServerContext): ReadResourceResult | Promise<ReadResourceResult> {
    const uri = params?.uri;
    if (typeof uri !== 'string') throw invalidParams('resources/read needs a string "uri"');
    const match = this.find(uri);
    if (!match) throw resourceNotFound(uri);
    const version = context.protocolVersion!;
    const mimeType = match.resource ? match.resource.mimeType : match.template.mimeType;
    const output = match.resource ? match.resource.read(context) : match.template.read(match.variables, context, uri);
    const finish = (value: ContentsInput) => shapeRead(toReadResult(value, uri, mimeType), version);
    return isThenable(output) ? output.then(finish) : finish(output);
  }
}

/**
 * How much of an unknown URI the -32002 error's `data.uri` echoes: a real URI whole (signed URLs run to
 * hundreds of characters), a megabyte one cut (the peer knows what it sent).
 */
export const MAX_ECHOED_URI_CHARS = 1024;

/** -32002 for a URI we do not serve, with the URI (a bounded excerpt of it) in `data`. */
export function resourceNotFound(uri: unknown): McpError {
  const echoed = typeof uri === 'string' ? clipText(uri, MAX_ECHOED_URI_CHARS) : peerText(uri);
  return new McpError(ErrorCode.ResourceNotFound, `Resource not found: ${peerText(uri)}`, { uri: echoed });
}

/** Normalizes what a read returned; a handler that breaks the contract gets an internal error naming the resource. */
function toReadResult(value: ContentsInput, uri: string, mimeType: string | undefined): ReadResourceResult {
  if (typeof value === 'string')
    return { contents: [mimeType ? { uri, mimeType, text: value } : { uri, text: value }] };
  if (typeof value === 'object' && value !== null && 'contents' in value) {
    if (!Array.isArray(value.contents)) throw invalidContents(uri, '"contents" must be an array');
    value.contents.forEach((contents) => checkContents(contents, uri));
    return value;
  }
  const list = Array.isArray(value) ? value : [value];
  return {
    contents: (list as readonly ContentsItem[]).map((contents) => {
      checkContents(contents, uri);
      const withUri = contents.uri === undefined ? { uri, ...contents } : contents;
      return (withUri.mimeType === undefined && mimeType ? { ...withUri, mimeType } : withUri) as ResourceContents;
    }),
  };
}

function checkContents(contents: unknown, uri: string): void {
  const item = contents as Record<string, unknown> | null;
  if (typeof item !== 'object' || item === null) throw invalidContents(uri, 'each contents item must be an object');
  const hasText = typeof item.text === 'string';
  const hasBlob = typeof item.blob === 'string';
  if (hasText === hasBlob)
    throw invalidContents(uri, 'each contents item needs exactly one of a string "text" or a base64 "blob"');
  if (item.uri !== undefined && typeof item.uri !== 'string') throw invalidContents(uri, '"uri" must be a string');
}

function invalidContents(uri: string, why: string): McpError {
  return new McpError(ErrorCode.InternalError, `Reading ${peerText(uri)} returned invalid contents: ${why}`);
}

function shapeRead(result: ReadResourceResult, version: string): ReadResourceResult {
  let changed = false;
  const contents = result.contents.map((item) => {
    const shaped = shape('text' in item ? 'TextResourceContents' : 'BlobResourceContents', item, version);
    changed ||= shaped !== item;
    return shaped;
  });
  return changed ? { ...result, contents } : result;
}
