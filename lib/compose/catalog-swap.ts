/**
 * A hub's new catalog put into its server's definition: each list that changed is replaced as a whole, in
 * chunks, and a list that did not change keeps its catalog (and its clients their caches).
 */
import type { ServerDefinition } from '../server/definition';
import type { BuiltCatalog } from './catalog';

/** Names and URIs handed to `withoutTools(...)` and friends per call, well under the engine's argument limit. */
const CHUNK = 10_000;

/** `current` with each list that changed replaced as a whole (lists that did not change keep their catalog). */
export function swapLists(current: ServerDefinition, before: BuiltCatalog, after: BuiltCatalog): ServerDefinition {
  let next = current;
  next = swap(
    next,
    before.tools,
    after.tools,
    (tool) => tool.name,
    (definition, names) => definition.withoutTools(...names),
    (definition, tools) => definition.withTools(...tools),
  );
  next = swap(
    next,
    before.prompts,
    after.prompts,
    (prompt) => prompt.name,
    (definition, names) => definition.withoutPrompts(...names),
    (definition, prompts) => definition.withPrompts(...prompts),
  );
  next = swap(
    next,
    before.resources,
    after.resources,
    (resource) => resource.uri,
    (definition, uris) => definition.withoutResources(...uris),
    (definition, resources) => definition.withResources(...resources),
  );
  return swap(
    next,
    before.resourceTemplates,
    after.resourceTemplates,
    (template) => template.uriTemplate,
    (definition, templates) => definition.withoutResourceTemplates(...templates),
    (definition, templates) => definition.withResourceTemplates(...templates),
  );
}

function swap<T>(
  definition: ServerDefinition,
  before: readonly T[],
  after: readonly T[],
  key: (item: T) => string,
  remove: (definition: ServerDefinition, keys: string[]) => ServerDefinition,
  add: (definition: ServerDefinition, items: T[]) => ServerDefinition,
): ServerDefinition {
  if (before.length === after.length && before.every((item, index) => item === after[index])) return definition;
  let next = definition;
  const keys = before.map(key);
  for (let start = 0; start < keys.length; start += CHUNK) next = remove(next, keys.slice(start, start + CHUNK));
  for (let start = 0; start < after.length; start += CHUNK) next = add(next, after.slice(start, start + CHUNK));
  return next;
}
