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
import type { ServerDefinition } from '../definition';
import { SHARED_HANDLERS } from '../handlers';
import type { ModernHost } from './modern-request';
import { identityMeta } from './results';
import { MODERN_TASK_HANDLERS } from '../tasks/task-handlers';

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

function discover(context: RequestContext<ModernHost>): object {
  const request = context.connection;
  const definition = request.definition;
  return {
    supportedVersions: request.modernVersions,
    capabilities: definition.capabilitiesAt(request.protocolVersion),
    ...(definition.instructions !== undefined && { instructions: definition.instructions }),
    _meta: identityMeta(definition.info, request.protocolVersion),
  };
}

export const MODERN_HANDLERS: HandlerTable<ModernHost> = handlerTable<ModernHost>({
  'server/discover': discover,
  'subscriptions/listen': listen,
  ...Object.fromEntries(
    Object.keys(SERVABLE)
      .filter((method) => SHARED_HANDLERS[method] !== undefined)
      .map((method) => [method, SHARED_HANDLERS[method]!]),
  ),
  ...MODERN_TASK_HANDLERS,
});

/** The classifier's policy for a server: the revisions it serves and the methods its definition declares. */
export function eraPolicyOf(current: () => ServerDefinition): EraPolicy {
  return {
    get supportedVersions() {
      return current().modernProtocolVersions;
    },
    isKnownMethod: (method: string) => {
      const spec = SERVABLE[method];
      if (spec === undefined || MODERN_HANDLERS[method] === undefined) return false;
      const definition = current();
      return declares(spec, definition.capabilitiesAt(definition.modernProtocolVersions[0] ?? ''));
    },
  };
}
