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
import { declares, STATELESS_METHODS, type MethodSpec } from '../../protocol/methods';
import { META } from '../../protocol/modern';
import { shape } from '../../protocol/shape';
import type { ServerDefinition } from '../definition';
import { SERVER_HANDLERS, type ServerHandlersHost } from '../handlers';
import type { ModernExchange, ModernHost } from './exchange';

/**
 * The requests a 2026-07-28 server may serve, with their columns of the method table: the era's client
 * requests and our extensions. Each is served when the server's capabilities declare it (`declares`).
 */
const SERVABLE: Readonly<Record<string, MethodSpec>> = Object.freeze(
  Object.assign(
    Object.create(null) as Record<string, MethodSpec>,
    STATELESS_METHODS.clientRequests,
    STATELESS_METHODS.extensions,
  ),
);

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
    Object.keys(SERVABLE)
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
      const spec = SERVABLE[method];
      return spec !== undefined && MODERN_HANDLERS[method] !== undefined && declares(spec, current().capabilities);
    },
  };
}
