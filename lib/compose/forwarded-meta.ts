/**
 * The `_meta` of what the hub forwards, both ways. The hub is a client to each upstream and a server to its
 * callers, and says who it is on each side: the keys MCP reserves describe one hop (the 2026-07-28 envelope
 * of a request, the `serverInfo` of a result, a related task) and never cross the hub. A forwarded request
 * gets the envelope of the hub's own client for that upstream (stamped by that client; none in a
 * handshake-era session); a result the hub relays loses what the upstream said about itself (the hub's
 * own identity is its server's to give: `server/discover`). A request an upstream sends the caller (sampling,
 * elicitation) loses its reserved keys and progress token the same way. Every other key passes unchanged (a
 * tool's own `_meta`, `traceparent`); a progress token is each hop's own.
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

/** A request's progress token, and every key of a hop: what a forwarded request leaves behind, either way. */
function staysDownstream(key: string): boolean {
  return key === META.progressToken || isReservedMetaKey(key);
}

/** `params` with the keys of the downstream request's `meta` that pass the hub (none: no `_meta`). */
export function forwardedParams(params: JsonObject, meta: Meta | undefined): JsonObject {
  const kept = meta === undefined ? undefined : without(meta, staysDownstream);
  return kept === undefined ? params : { ...params, _meta: kept as JsonObject };
}

/**
 * The params of a request an upstream sends the hub's caller (sampling, elicitation) with the keys of their
 * `_meta` that pass the hub: what the upstream says of one hop (its progress token, a related task of its
 * own) stays with the upstream. The same object when nothing is dropped.
 */
export function relayedRequestParams(params: JsonObject): JsonObject {
  const meta = params._meta;
  if (!isMetaObject(meta)) return params;
  const kept = without(meta, staysDownstream);
  if (kept === meta) return params;
  if (kept !== undefined) return { ...params, _meta: kept as JsonObject };
  const { _meta: _dropped, ...rest } = params;
  return rest;
}

/** An upstream's result as the hub's own: without the reserved keys of its `_meta` (the same object if it has none). */
export function relayedResult<T>(result: T): T {
  if (typeof result !== 'object' || result === null) return result;
  const meta = (result as { _meta?: unknown })._meta;
  if (!isMetaObject(meta)) return result;
  const kept = without(meta, isReservedMetaKey);
  if (kept === meta) return result;
  if (kept !== undefined) return { ...result, _meta: kept };
  const { _meta: _dropped, ...rest } = result as T & { _meta?: unknown };
  return rest as T;
}

function isMetaObject(meta: unknown): meta is Meta {
  return typeof meta === 'object' && meta !== null && !Array.isArray(meta);
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
