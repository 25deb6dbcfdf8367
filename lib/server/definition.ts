import { RESOURCE_SEARCH_EXTENSION, TASKS_EXTENSION } from '../protocol/method-table';
import { deepFreeze } from '../core/freeze';
import type { Implementation, Resource, ServerCapabilities } from '../protocol/types';
import { isAtLeast, SUPPORTED_PROTOCOL_VERSIONS, type ProtocolVersion } from '../protocol/versions';
import { defaultValidator, type SchemaValidator } from '../validation/json-schema';
import { PromptCatalog, type PromptSpec } from './prompts';
import { ResourceCatalog, type ResourceDefinition, type ResourceTemplateDefinition } from './resources';
import type { ServerContext } from './context';
import { defineTool, ToolCatalog, type ToolSpec } from './tools';
import { MODERN_PROTOCOL_VERSIONS } from '../protocol/modern';
import { checkCacheHint, type CacheHints, type CacheableName } from './modern/results';
import type { ScopeRequirements } from '../auth/server/scopes';
import { methodTarget, type ItemKind, type ItemScopes } from '../protocol/method-targets';

function isModernVersion(version: string): boolean {
  return (MODERN_PROTOCOL_VERSIONS as readonly string[]).includes(version);
}

function checkCacheHints(hints: CacheHints): CacheHints {
  for (const [name, hint] of Object.entries(hints)) {
    if (hint !== undefined) checkCacheHint(name as CacheableName, hint);
  }
  return Object.freeze({ ...hints });
}

/**
 * `resources/search` is not part of MCP: we offer it as an extension (lib/protocol/method-table.ts),
 * advertised under `capabilities.experimental` by this key, and only when the server defines `searchResources`.
 */
export { RESOURCE_SEARCH_EXTENSION };

export type ResourceSearch = (
  query: string,
  context: ServerContext,
) => readonly Resource[] | Promise<readonly Resource[]>;

export interface ServerSpec extends Implementation {
  /** A usage hint the client may put in the model's system prompt. */
  readonly instructions?: string;
  /** Declaring `tools` (even empty) declares the tools capability. */
  readonly tools?: readonly ToolSpec<any, any>[];
  /** Declaring resources or templates (even empty) declares the resources capability, with subscriptions. */
  readonly resources?: readonly ResourceDefinition[];
  readonly resourceTemplates?: readonly ResourceTemplateDefinition[];
  /** Declaring `prompts` (even empty) declares the prompts capability. */
  readonly prompts?: readonly PromptSpec<any>[];
  /** Turns on the `resources/search` extension. */
  readonly searchResources?: ResourceSearch;
  /** Items per page of a list result (default 100). */
  readonly pageSize?: number;
  /** Revisions this server accepts, newest first (default: all four). */
  readonly protocolVersions?: readonly ProtocolVersion[];
  /** Validates tool input and output; defaults to a process-wide Ajv validator. */
  readonly validator?: SchemaValidator;
  /** Extra entries under `capabilities.experimental`. */
  readonly experimental?: Readonly<Record<string, object>>;
  /**
   * Stateless revisions served to requests that carry the 2026-07-28 envelope, newest first (default
   * `MODERN_PROTOCOL_VERSIONS`; `[]` serves the handshake era only, as before).
   */
  readonly modernProtocolVersions?: readonly string[];
  /**
   * Cache hints of modern results (`ttlMs`, `cacheScope`) for discover, each list and resource reads; a
   * handler's own hint wins. Default `DEFAULT_CACHE_HINT` (stale at once, private).
   */
  readonly cacheHints?: CacheHints;
  /**
   * Lists (`tools/list`, `prompts/list`, `resources/list`, `resources/templates/list`, `resources/search`)
   * show a caller only the items whose `scopes` its token grants (`ctx.auth`, on an HTTP endpoint with
   * `auth`); a request without a principal (stdio, no `auth`) sees everything. Default false: every item is
   * listed and a call lacking scopes gets 403 `insufficient_scope`, which sends the client to step up.
   */
  readonly hideUnauthorized?: boolean;
}

export const DEFAULT_PAGE_SIZE = 100;

/**
 * What a server offers: immutable, and shared by any number of connections (one per client). A changed
 * server is a new definition (`withTools`, `withResources`, ...), handed to `Server.update`.
 */
export class ServerDefinition implements ScopeRequirements, ItemScopes {
  readonly info: Implementation;
  readonly instructions: string | undefined;
  readonly tools: ToolCatalog | undefined;
  readonly resources: ResourceCatalog | undefined;
  readonly prompts: PromptCatalog | undefined;
  readonly searchResources: ResourceSearch | undefined;
  readonly pageSize: number;
  readonly protocolVersions: readonly ProtocolVersion[];
  readonly modernProtocolVersions: readonly string[];
  readonly cacheHints: CacheHints | undefined;
  readonly hideUnauthorized: boolean;
  /** What the server declares in every revision; `capabilitiesAt` adds what only some revisions have (tasks). */
  readonly capabilities: ServerCapabilities;
  /** Whether a tool may run as a task (`execution.taskSupport` optional or required): the server serves tasks. */
  readonly servesTasks: boolean;
  private readonly capabilitiesByVersion = new Map<string, ServerCapabilities>();

  private constructor(
    private readonly spec: ServerSpec,
    private readonly validator: SchemaValidator,
    previous?: ServerDefinition,
  ) {
    const { name, version, title, description, icons, websiteUrl } = spec;
    this.info = Object.freeze({
      name,
      version,
      ...(title !== undefined && { title }),
      ...(description !== undefined && { description }),
      ...(icons !== undefined && { icons }),
      ...(websiteUrl !== undefined && { websiteUrl }),
    });
    this.instructions = spec.instructions;
    // A list that did not change keeps its catalog: connections compare catalogs to see what changed.
    this.tools =
      previous && previous.spec.tools === spec.tools
        ? previous.tools
        : spec.tools &&
          new ToolCatalog(
            spec.tools.map((tool) => defineTool(tool)),
            validator,
          );
    this.resources =
      previous &&
      previous.spec.resources === spec.resources &&
      previous.spec.resourceTemplates === spec.resourceTemplates
        ? previous.resources
        : spec.resources || spec.resourceTemplates
          ? new ResourceCatalog(spec.resources ?? [], spec.resourceTemplates ?? [])
          : undefined;
    this.prompts =
      previous && previous.spec.prompts === spec.prompts
        ? previous.prompts
        : spec.prompts && new PromptCatalog(spec.prompts);
    this.searchResources = spec.searchResources;
    this.pageSize = spec.pageSize ?? DEFAULT_PAGE_SIZE;
    if (!(this.pageSize >= 1)) throw new RangeError('pageSize must be at least 1');
    this.protocolVersions = spec.protocolVersions ?? SUPPORTED_PROTOCOL_VERSIONS;
    if (this.protocolVersions.length === 0) throw new RangeError('protocolVersions must not be empty');
    this.modernProtocolVersions = spec.modernProtocolVersions ?? MODERN_PROTOCOL_VERSIONS;
    const unknown = this.modernProtocolVersions.find((version) => !isModernVersion(version));
    if (unknown !== undefined)
      throw new RangeError(`modernProtocolVersions: ${unknown} is not a stateless revision we serve`);
    this.cacheHints = spec.cacheHints && checkCacheHints(spec.cacheHints);
    this.hideUnauthorized = spec.hideUnauthorized === true;
    this.capabilities =
      spec.experimental || spec.searchResources
        ? deepFreeze({
            ...baseCapabilities(this),
            experimental: { ...spec.experimental, ...(spec.searchResources && { [RESOURCE_SEARCH_EXTENSION]: {} }) },
          })
        : baseCapabilities(this);
    this.servesTasks = this.tools?.definitions.some((tool) => taskSupportOf(tool) !== 'forbidden') ?? false;
    Object.freeze(this);
  }

  /**
   * What the server declares to a client of `version`: `capabilities`, and its tasks in the revision's form
   * (2025-11-25: `tasks`; the stateless revision: the extension under `extensions`; older: none).
   */
  capabilitiesAt(version: string): ServerCapabilities {
    if (!this.servesTasks) return this.capabilities;
    let declared = this.capabilitiesByVersion.get(version);
    if (declared === undefined) {
      declared = deepFreeze(withTasks(this.capabilities, version));
      this.capabilitiesByVersion.set(version, declared);
    }
    return declared;
  }

  static create(spec: ServerSpec): ServerDefinition {
    return new ServerDefinition(spec, spec.validator ?? defaultValidator());
  }

  /** A definition with these tools added, replacing tools of the same name. */
  withTools(...tools: ToolSpec<any, any>[]): ServerDefinition {
    return this.derive({ tools: replaced(this.spec.tools, tools, (tool) => tool.name) });
  }

  withoutTools(...names: string[]): ServerDefinition {
    return this.derive({ tools: removed(this.spec.tools, names, (tool) => tool.name) });
  }

  /** A definition with these resources added, replacing resources with the same URI. */
  withResources(...resources: ResourceDefinition[]): ServerDefinition {
    return this.derive({ resources: replaced(this.spec.resources, resources, (resource) => resource.uri) });
  }

  withoutResources(...uris: string[]): ServerDefinition {
    return this.derive({ resources: removed(this.spec.resources, uris, (resource) => resource.uri) });
  }

  withResourceTemplates(...templates: ResourceTemplateDefinition[]): ServerDefinition {
    const resourceTemplates = replaced(this.spec.resourceTemplates, templates, (template) => template.uriTemplate);
    return this.derive({ resourceTemplates });
  }

  withoutResourceTemplates(...uriTemplates: string[]): ServerDefinition {
    const resourceTemplates = removed(this.spec.resourceTemplates, uriTemplates, (template) => template.uriTemplate);
    return this.derive({ resourceTemplates });
  }

  /** A definition with these prompts added, replacing prompts of the same name. */
  withPrompts(...prompts: PromptSpec<any>[]): ServerDefinition {
    return this.derive({ prompts: replaced(this.spec.prompts, prompts, (prompt) => prompt.name) });
  }

  withoutPrompts(...names: string[]): ServerDefinition {
    return this.derive({ prompts: removed(this.spec.prompts, names, (prompt) => prompt.name) });
  }

  /**
   * The OAuth scopes a request needs of its caller's token besides the endpoint's: those of the items it
   * names, as the method table says (`METHOD_TARGETS`). An HTTP endpoint with `auth` checks them before the call.
   */
  requiredScopes(method: string, params: unknown): readonly string[] | undefined {
    return methodTarget(method)?.scopes?.(params, this);
  }

  /** The `scopes` of a tool, prompt, resource (its own or its template's, by URI) or resource template. */
  scopesOf(kind: ItemKind, key: string): readonly string[] | undefined {
    switch (kind) {
      case 'tool':
        return this.tools?.definitionOf(key)?.scopes;
      case 'prompt':
        return this.prompts?.get(key)?.scopes;
      case 'resource':
        return this.resources?.scopesOf(key);
      case 'resourceTemplate':
        return this.resources?.template(key)?.definition.scopes;
    }
  }

  private derive(change: Partial<ServerSpec>): ServerDefinition {
    return new ServerDefinition({ ...this.spec, ...change }, this.validator, this);
  }
}

function replaced<T>(current: readonly T[] | undefined, additions: readonly T[], key: (item: T) => string): T[] {
  const keys = new Set(additions.map(key));
  return [...(current ?? []).filter((item) => !keys.has(key(item))), ...additions];
}

function removed<T>(current: readonly T[] | undefined, keys: readonly string[], key: (item: T) => string): T[] {
  const gone = new Set(keys);
  return (current ?? []).filter((item) => !gone.has(key(item)));
}

/** A tool's `execution.taskSupport` (absent: forbidden). */
export function taskSupportOf(tool: { readonly execution?: { readonly taskSupport?: string } }): string {
  return tool.execution?.taskSupport ?? 'forbidden';
}

/** The 2025-11-25 `tasks` capability: tool calls as tasks, listed and cancellable. */
const HANDSHAKE_TASKS_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } };

function withTasks(capabilities: ServerCapabilities, version: string): ServerCapabilities {
  if (isModernVersion(version)) {
    return { ...capabilities, extensions: { ...(capabilities.extensions as object), [TASKS_EXTENSION]: {} } };
  }
  return isAtLeast(version, '2025-11-25') ? { ...capabilities, tasks: HANDSHAKE_TASKS_CAPABILITY } : capabilities;
}

const sharedCapabilities = new Map<string, ServerCapabilities>();

/** What a definition declares, as one frozen object shared by every definition that declares the same. */
function baseCapabilities(definition: ServerDefinition): ServerCapabilities {
  const completions = hasCompleters(definition);
  const key = [
    definition.tools && 't',
    definition.resources && 'r',
    definition.prompts && 'p',
    completions && 'c',
  ].join('');
  let capabilities = sharedCapabilities.get(key);
  if (!capabilities) {
    capabilities = deepFreeze({
      logging: {},
      ...(completions && { completions: {} }),
      ...(definition.prompts && { prompts: { listChanged: true } }),
      ...(definition.resources && { resources: { subscribe: true, listChanged: true } }),
      ...(definition.tools && { tools: { listChanged: true } }),
    });
    sharedCapabilities.set(key, capabilities);
  }
  return capabilities;
}

function hasCompleters(definition: ServerDefinition): boolean {
  return (
    (definition.prompts?.definitions.some((prompt) => prompt.complete) ?? false) ||
    (definition.resources?.resourceTemplates.some((template) => template.complete) ?? false)
  );
}

/**
 * A `ServerSpec` whose tools and prompts type their handlers: each tool's `handler` gets the arguments its
 * `inputSchema` describes (a Standard Schema's output, or `FromSchema` of a JSON Schema literal), each
 * prompt's `get` the arguments its `arguments` describe.
 */
export type TypedServerSpec<Inputs extends readonly unknown[], Arguments extends readonly unknown[]> = Omit<
  ServerSpec,
  'tools' | 'prompts'
> & {
  readonly tools?: { readonly [K in keyof Inputs]: ToolSpec<Inputs[K]> };
  readonly prompts?: { readonly [K in keyof Arguments]: PromptSpec<Arguments[K]> };
};

/**
 * Defines a server: its identity, instructions, tools, resources and prompts. Tools and prompts are checked
 * here (`defineTool`, `definePrompt`): a bad name, a value that is no schema or an invalid JSON Schema throws
 * a TypeError naming the tool. A handler's return type follows its tool's `outputSchema` only with
 * `defineTool`; inline, any result is accepted by type and checked when the tool runs.
 */
export function defineServer<
  const Inputs extends readonly unknown[] = readonly unknown[],
  const Arguments extends readonly unknown[] = readonly unknown[],
>(spec: TypedServerSpec<Inputs, Arguments>): ServerDefinition {
  return ServerDefinition.create(spec as ServerSpec);
}
