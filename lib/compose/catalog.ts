/**
 * The hub's catalog, computed from its upstreams' catalogs: filters (on the upstreams' own names), the
 * naming policy (tools and prompts), resources and templates kept by URI (the first upstream in order that
 * serves one wins), and for each entry a definition whose handler forwards to its upstream. Entries of an
 * upstream that did not change keep their definition objects, so an unchanged list compares equal.
 */
import { isPlainObject } from '../jsonrpc/classify';
import type { Subscribable } from 'rxjs';
import type { Completer, ServerContext } from '../server/context';
import { excerpt } from '../jsonrpc/excerpt';
import type { JsonObject } from '../jsonrpc/types';
import type {
  CallToolResult,
  CompleteParams,
  Completion,
  CompletionReference,
  GetPromptResult,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplate,
  Tool,
} from '../protocol/types';
import { peerText } from '../server/peer-text';
import type { PromptDefinition } from '../server/prompts';
import type { ResourceDefinition, ResourceTemplateDefinition } from '../server/resources';
import { toolSchemaProblem, type ToolDefinition } from '../server/tools';
import { UriTemplate } from '../server/uri-template';
import type { NamePredicate } from './name-filter';
import { assignNames, type NameCandidate, type NamingPolicy } from './naming';
import type { ListKind, UpstreamCatalog } from './session';

type Context = ServerContext;

/** What the catalog needs of an upstream. */
export interface CatalogSource {
  readonly name: string;
  readonly naming: NamingPolicy;
  readonly accepts: Readonly<Record<ListKind, NamePredicate>>;
  /** The last catalog it listed, if it ever did. */
  readonly catalog: UpstreamCatalog | undefined;
  /** Whether its entries are served now. */
  readonly serving: boolean;
  callTool(name: string, args: JsonObject, context: Context): CallToolResult | Promise<CallToolResult>;
  getPrompt(name: string, args: Readonly<Record<string, string>>, context: Context): Promise<GetPromptResult>;
  readResource(uri: string, context: Context): Promise<ReadResourceResult>;
  complete(params: CompleteParams, context: Context): Promise<Completion>;
  /** The URIs of `uri` (and its sub-resources) that change, while subscribed. */
  resourceUpdates(uri: string): Subscribable<string>;
}

export interface CatalogProblem {
  readonly severity: 'error' | 'warning' | 'info';
  readonly upstream: string;
  readonly kind: 'tool' | 'prompt' | 'resource' | 'resource template';
  /** The upstream's name (or URI) of the entry. */
  readonly original: string;
  readonly message: string;
}

export interface BuiltCatalog {
  readonly tools: readonly ToolDefinition[];
  readonly prompts: readonly PromptDefinition[];
  readonly resources: readonly ResourceDefinition[];
  readonly resourceTemplates: readonly ResourceTemplateDefinition[];
  readonly problems: readonly CatalogProblem[];
}

interface Cached {
  readonly name: string;
  readonly definition: object;
}

export class HubCatalog {
  /** Per upstream, per upstream item: the definition made for it (under the name it got), reused while both stay. */
  private readonly definitionCache = new WeakMap<CatalogSource, WeakMap<object, Cached>>();

  /** With `tasksForEveryTool`, the hub offers to run any tool as a task, whether or not its upstream can. */
  constructor(private readonly tasksForEveryTool = false) {}

  build(sources: readonly CatalogSource[]): BuiltCatalog {
    const problems: CatalogProblem[] = [];
    const everyTool = this.tasksForEveryTool;
    const tools = this.named(
      'tool',
      sources,
      problems,
      (catalog) => catalog.tools,
      validTool,
      (source, tool, name) => toolDefinition(source, tool, name, everyTool),
    );
    const prompts = this.named(
      'prompt',
      sources,
      problems,
      (catalog) => catalog.prompts,
      validPrompt,
      promptDefinition,
    );
    const resources = this.byKey(
      'resource',
      sources,
      problems,
      (catalog) => catalog.resources,
      (resource) => resource.uri,
      validResource,
      resourceDefinition,
    );
    const resourceTemplates = this.byKey(
      'resource template',
      sources,
      problems,
      (catalog) => catalog.resourceTemplates,
      (template) => template.uriTemplate,
      validTemplate,
      templateDefinition,
    );
    return { tools, prompts, resources, resourceTemplates, problems };
  }

  /** Tools and prompts: filtered, then named by the policy over every known upstream. */
  private named<T extends { name: string }, D extends object>(
    kind: 'tool' | 'prompt',
    sources: readonly CatalogSource[],
    problems: CatalogProblem[],
    list: (catalog: UpstreamCatalog) => readonly T[],
    valid: (item: T) => string | undefined,
    define: (source: CatalogSource, item: T, name: string) => D,
  ): D[] {
    const candidates: NameCandidate<T>[] = [];
    const sourceOf = new Map<string, CatalogSource>();
    for (const source of sources) {
      if (!source.catalog) continue;
      sourceOf.set(source.name, source);
      for (const item of list(source.catalog)) {
        const invalid = valid(item);
        if (invalid) {
          problems.push(invalidEntry(source, kind, item, invalid));
          continue;
        }
        if (!source.accepts[kind === 'tool' ? 'tools' : 'prompts'](item.name)) continue;
        const { name, naming: policy, serving } = source;
        candidates.push({ upstream: name, policy, original: item.name, item, serving });
      }
    }
    const assignment = assignNames(kind === 'tool' ? 'Tool' : 'Prompt', candidates);
    for (const { severity, upstream, original, message } of assignment.problems) {
      problems.push({ severity, upstream, kind, original, message });
    }
    return assignment.served.map(({ name, candidate }) =>
      this.definitionFor(sourceOf.get(candidate.upstream)!, candidate.item, name, define),
    );
  }

  /** Resources and templates: kept as they are, the first serving upstream in order owning each key. */
  private byKey<T extends object, D extends object>(
    kind: 'resource' | 'resource template',
    sources: readonly CatalogSource[],
    problems: CatalogProblem[],
    list: (catalog: UpstreamCatalog) => readonly T[],
    key: (item: T) => string,
    valid: (item: T) => string | undefined,
    define: (source: CatalogSource, item: T, name: string) => D,
  ): D[] {
    const owners = new Map<string, string>();
    const served: D[] = [];
    for (const source of sources) {
      if (!source.catalog || !source.serving) continue;
      for (const item of list(source.catalog)) {
        const invalid = valid(item);
        if (invalid) {
          problems.push(invalidEntry(source, kind, item, invalid));
          continue;
        }
        const itemKey = key(item);
        if (!source.accepts.resources(itemKey)) continue;
        const owner = owners.get(itemKey);
        if (owner !== undefined) {
          problems.push({
            severity: 'warning',
            upstream: source.name,
            kind,
            original: itemKey,
            message: `${kind} ${peerText(itemKey)} of ${source.name} is also offered by ${owner}, which comes first: it is left out`,
          });
          continue;
        }
        owners.set(itemKey, source.name);
        served.push(this.definitionFor(source, item, itemKey, define));
      }
    }
    return served;
  }

  private definitionFor<T extends object, D extends object>(
    source: CatalogSource,
    item: T,
    name: string,
    define: (source: CatalogSource, item: T, name: string) => D,
  ): D {
    let cache = this.definitionCache.get(source);
    if (!cache) this.definitionCache.set(source, (cache = new WeakMap()));
    const cached = cache.get(item);
    if (cached?.name === name) return cached.definition as D;
    const definition = define(source, item, name);
    cache.set(item, { name, definition });
    return definition;
  }
}

function invalidEntry(source: CatalogSource, kind: CatalogProblem['kind'], item: unknown, why: string): CatalogProblem {
  const label = (item as { name?: unknown; uri?: unknown; uriTemplate?: unknown } | null) ?? {};
  // Whatever the upstream sent as the name: a string of any length, or any value (`String` recurses into arrays).
  const original = peerText(label.name ?? label.uri ?? label.uriTemplate ?? '?');
  return {
    severity: 'warning',
    upstream: source.name,
    kind,
    original,
    message: `${source.name} offers an invalid ${kind} ${excerpt(original)}: ${why}; it is left out`,
  };
}

function validTool(tool: Tool): string | undefined {
  if (!isPlainObject(tool) || typeof tool.name !== 'string' || tool.name === '') return 'it has no name';
  if (!isPlainObject(tool.inputSchema) || tool.inputSchema.type !== 'object')
    return 'its inputSchema is not of type "object"';
  if (tool.outputSchema !== undefined && (!isPlainObject(tool.outputSchema) || tool.outputSchema.type !== 'object')) {
    return 'its outputSchema is not of type "object"';
  }
  const support = (tool.execution as { taskSupport?: unknown } | undefined)?.taskSupport;
  if (support !== undefined && !['forbidden', 'optional', 'required'].includes(support as string)) {
    return 'its execution.taskSupport is not forbidden, optional or required';
  }
  const problem = toolSchemaProblem(tool);
  return problem === undefined ? undefined : `its ${problem}`;
}

function validPrompt(prompt: Prompt): string | undefined {
  if (!isPlainObject(prompt) || typeof prompt.name !== 'string' || prompt.name === '') return 'it has no name';
  const args = prompt.arguments;
  if (
    args !== undefined &&
    (!Array.isArray(args) || args.some((arg) => !isPlainObject(arg) || typeof arg.name !== 'string'))
  ) {
    return 'its arguments are not a list of named arguments';
  }
  return undefined;
}

function validResource(resource: Resource): string | undefined {
  if (!isPlainObject(resource) || typeof resource.uri !== 'string' || typeof resource.name !== 'string') {
    return 'it needs a string uri and name';
  }
  return undefined;
}

function validTemplate(template: ResourceTemplate): string | undefined {
  if (!isPlainObject(template) || typeof template.uriTemplate !== 'string' || typeof template.name !== 'string') {
    return 'it needs a string uriTemplate and name';
  }
  try {
    UriTemplate.parse(template.uriTemplate);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

function toolDefinition(source: CatalogSource, tool: Tool, name: string, everyToolAsTask: boolean): ToolDefinition {
  const original = tool.name;
  const offersTask = everyToolAsTask && (tool.execution?.taskSupport ?? 'forbidden') === 'forbidden';
  return Object.freeze({
    ...tool,
    name,
    ...(offersTask && { execution: { ...tool.execution, taskSupport: 'optional' as const } }),
    handler: (args: JsonObject, context: Context) => source.callTool(original, args, context),
  });
}

function promptDefinition(source: CatalogSource, prompt: Prompt, name: string): PromptDefinition {
  const original = prompt.name;
  const names = (prompt.arguments ?? []).map((argument) => argument.name);
  const complete = completersFor(source, { type: 'ref/prompt', name: original }, names);
  return Object.freeze({
    ...prompt,
    name,
    get: (args: Readonly<Record<string, string>>, context: Context) => source.getPrompt(original, args, context),
    ...(complete && { complete }),
  });
}

function resourceDefinition(source: CatalogSource, resource: Resource): ResourceDefinition {
  const uri = resource.uri;
  return Object.freeze({
    ...resource,
    read: (context: Context) => source.readResource(uri, context),
    ...(subscribable(source) && { updates: source.resourceUpdates(uri) }),
  });
}

function templateDefinition(source: CatalogSource, template: ResourceTemplate): ResourceTemplateDefinition {
  const names = UriTemplate.parse(template.uriTemplate).variableNames;
  const complete = completersFor(source, { type: 'ref/resource', uri: template.uriTemplate }, names);
  return Object.freeze({
    ...template,
    read: (_variables: unknown, context: Context, uri: string) => source.readResource(uri, context),
    ...(subscribable(source) && { updates: (uri: string) => source.resourceUpdates(uri) }),
    ...(complete && { complete }),
  });
}

function subscribable(source: CatalogSource): boolean {
  return !!source.catalog?.capabilities.resources?.subscribe;
}

/** A completer per argument or variable, forwarding `completion/complete` with the upstream's own reference. */
function completersFor(
  source: CatalogSource,
  ref: CompletionReference,
  names: readonly string[],
): Record<string, Completer> | undefined {
  if (!source.catalog?.capabilities.completions || names.length === 0) return undefined;
  const completers: Record<string, Completer> = {};
  for (const name of names) {
    completers[name] = (value, { arguments: chosen, request }) =>
      source.complete(
        { ref, argument: { name, value }, ...(Object.keys(chosen).length > 0 && { context: { arguments: chosen } }) },
        request,
      );
  }
  return completers;
}
