/**
 * Requests for an in-process upstream served straight from its definition, with the downstream request's
 * context: the same catalogs that answer over a connection, without the second hop.
 */
import type { ServerContext } from '../server/context';
import type { JsonObject } from '../jsonrpc/types';
import { complete } from '../server/completion';
import type { ServerDefinition } from '../server/definition';
import { unknownPrompt } from '../server/prompts';
import { resourceNotFound } from '../server/resources';
import { unknownTool } from '../server/tools';

/** The requests a hub forwards to an upstream. */
export type ForwardedMethod = 'tools/call' | 'resources/read' | 'prompts/get' | 'completion/complete';

export function dispatchDirect(
  definition: ServerDefinition,
  method: ForwardedMethod,
  params: JsonObject,
  context: ServerContext,
): unknown {
  switch (method) {
    case 'tools/call':
      if (!definition.tools) throw unknownTool(params.name);
      return definition.tools.call(params, context);
    case 'resources/read':
      if (!definition.resources) throw resourceNotFound(params.uri);
      return definition.resources.read(params, context);
    case 'prompts/get':
      if (!definition.prompts) throw unknownPrompt(params.name);
      return definition.prompts.render(params, context);
    case 'completion/complete':
      return complete(params, context, definition.prompts, definition.resources);
  }
}
