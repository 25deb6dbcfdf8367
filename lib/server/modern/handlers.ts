/**
 * The handlers of modern (2026-07-28) requests: the shared ones of the primitives (lib/server/handlers.ts),
 * `server/discover`, and no handshake. Which of them a server serves follows what it declares, so that
 * `server/discover`'s capabilities and the methods answered are the same set (a method the server does not
 * declare is 404 / -32601 at the classifier).
 */
import { handlerTable, type HandlerTable } from '../../core/inbound-requests';
import { listen } from '../listen';
import type { RequestContext } from '../../core/request-context';
import type { EraPolicy } from '../../protocol/era';
import { META } from '../../protocol/modern';
import { shape } from '../../protocol/shape';
import type { ServerCapabilities } from '../../protocol/types';
import { RESOURCE_SEARCH_EXTENSION, type ServerDefinition } from '../definition';
import { SERVER_HANDLERS, type ServerHandlersHost } from '../handlers';
import type { ModernExchange, ModernHost } from './exchange';

/** The request methods a 2026-07-28 server may serve, with the capability that declares each. */
const DECLARED_BY: Readonly<Record<string, (capabilities: ServerCapabilities) => boolean>> = {
  'server/discover': () => true,
  'tools/list': (capabilities) => capabilities.tools !== undefined,
  'tools/call': (capabilities) => capabilities.tools !== undefined,
  'resources/list': (capabilities) => capabilities.resources !== undefined,
  'resources/templates/list': (capabilities) => capabilities.resources !== undefined,
  'resources/read': (capabilities) => capabilities.resources !== undefined,
  'prompts/list': (capabilities) => capabilities.prompts !== undefined,
  'prompts/get': (capabilities) => capabilities.prompts !== undefined,
  'completion/complete': (capabilities) => capabilities.completions !== undefined,
  'resources/search': (capabilities) => capabilities.experimental?.[RESOURCE_SEARCH_EXTENSION] !== undefined,
  // Something to listen to: a list that can change, or resources to follow.
  'subscriptions/listen': (capabilities) =>
    !!(
      capabilities.tools?.listChanged ||
      capabilities.prompts?.listChanged ||
      capabilities.resources?.listChanged ||
      capabilities.resources?.subscribe
    ),
};

function discover(context: RequestContext<ServerHandlersHost>): object {
  const exchange = context.connection as ModernExchange;
  const definition = exchange.definition;
  return {
    supportedVersions: exchange.modernVersions,
    capabilities: definition.capabilities,
    ...(definition.instructions !== undefined && { instructions: definition.instructions }),
    _meta: { [META.serverInfo]: shape('Implementation', definition.info, exchange.protocolVersion) },
  };
}

export const MODERN_HANDLERS: HandlerTable<ModernHost> = handlerTable<ModernHost>({
  'server/discover': discover,
  'subscriptions/listen': listen,
  ...Object.fromEntries(
    Object.keys(DECLARED_BY)
      .filter((method) => SERVER_HANDLERS[method] !== undefined)
      .map((method) => [method, SERVER_HANDLERS[method]!]),
  ),
});

/** The classifier's policy for a server: the revisions it serves and the methods its definition declares. */
export function eraPolicyOf(current: () => ServerDefinition): EraPolicy {
  return {
    get supportedVersions() {
      return current().modernProtocolVersions;
    },
    isKnownMethod: (method: string) => {
      const declared = DECLARED_BY[method];
      return declared !== undefined && MODERN_HANDLERS[method] !== undefined && declared(current().capabilities);
    },
  };
}
