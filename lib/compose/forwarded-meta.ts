/**
 * The `_meta` of what the hub forwards, both ways. The hub is a client to each upstream and a server to its
 * callers, and says who it is on each side: the keys MCP reserves describe one hop (the 2026-07-28 envelope
 * of a request, the `serverInfo` of a result, a related task) and never cross the hub. A forwarded request
 * gets the envelope of the hub's own client for that upstream (stamped by that client; none in a
 * handshake-era session); a result the hub relays loses what the upstream said about itself (the hub's
 * own identity is its server's to give: `server/discover`). Every other key passes unchanged (a tool's own
 * `_meta`, `traceparent`); the progress token is the upstream request's own.
 */
import type { JsonObject } from '../jsonrpc/types';
import { META } from '../protocol/modern';
import type { Meta } from '../protocol/types';

const MCP_LABELS: ReadonlySet<string> = new Set(['modelcontextprotocol', 'mcp']);

/**
 * Whether MCP reserves a `_meta` key: its prefix's second label is `modelcontextprotocol` or `mcp`
 * (`io.modelcontextprotocol/clientInfo`, `dev.mcp/x`; not `com.example.mcp/x`).
 */
export function isReservedMetaKey(key: string): boolean {
  const slash = key.indexOf('/');
  const dot = key.indexOf('.');
  if (slash < 0 || dot < 0 || dot > slash) return false;
  const next = key.indexOf('.', dot + 1);
  return MCP_LABELS.has(key.slice(dot + 1, next < 0 || next > slash ? slash : next));
}

/** The downstream request's progress token, and every key of a hop: what a forwarded request leaves behind. */
function staysDownstream(key: string): boolean {
  return key === META.progressToken || isReservedMetaKey(key);
}

/** `params` with the keys of the downstream request's `meta` that pass the hub (none: no `_meta`). */
export function forwardedParams(params: JsonObject, meta: Meta | undefined): JsonObject {
  const kept = meta === undefined ? undefined : without(meta, staysDownstream);
  return kept === undefined ? params : { ...params, _meta: kept as JsonObject };
}

/** An upstream's result as the hub's own: without the reserved keys of its `_meta` (the same object if it has none). */
export function relayedResult<T>(result: T): T {
  if (typeof result !== 'object' || result === null) return result;
  const meta = (result as { _meta?: unknown })._meta;
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) return result;
  const kept = without(meta as Meta, isReservedMetaKey);
  if (kept === meta) return result;
  if (kept !== undefined) return { ...result, _meta: kept };
  const { _meta: _dropped, ...rest } = result as T & { _meta?: unknown };
  return rest as T;
}

/** `meta` without the keys `drop` names: the same object when it names none, undefined when none is left. */
function without(meta: Meta, drop: (key: string) => boolean): Meta | undefined {
  let kept: Record<string, unknown> | undefined;
  let left = 0;
  for (const key in meta) {
    if (!drop(key)) {
      left++;
      continue;
    }
    // A copy (own `__proto__` keys included), then deletes: no allocation when nothing is dropped.
    kept ??= { ...meta };
    delete kept[key];
  }
  return left === 0 ? undefined : (kept ?? meta);
}
