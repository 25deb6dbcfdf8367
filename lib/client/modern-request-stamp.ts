/**
 * What a client connected in the stateless revision (2026-07-28) adds to each request: the `_meta` envelope
 * (protocol version, client capabilities, client info, and the log level once `setLoggingLevel` chose one),
 * the `Mcp-Param-*` headers of a `tools/call` (from the tool's `x-mcp-header` annotations, learnt by
 * `listTools`), and the one retry a -32022 naming another revision we speak earns.
 */
import { isPlainObject } from '../jsonrpc/classify';
import { ErrorCode, McpError, TransportError } from '../jsonrpc/errors';
import type { JsonObject } from '../jsonrpc/types';
import { mcpHeaderParams, paramHeaders, type ParamHeader } from '../protocol/http-headers';
import { META } from '../protocol/modern';
import type { LoggingLevel, Tool } from '../protocol/types';
import { mutualVersion } from './era-probe';

export class ModernRequestStamp {
  /** The envelope without caller keys, shared by every request until the version or the log level changes. */
  private meta: JsonObject;
  private logLevel: LoggingLevel | undefined;
  /** The tools whose calls carry `Mcp-Param-*` headers, by name (from the last `listTools`); made by the first. */
  private headerTools: Map<string, Tool> | undefined;

  constructor(
    /** The revision requests claim; a -32022 retry may switch it. */
    private versionInUse: string,
    /** The modern revisions we speak, newest first. */
    private readonly ours: readonly string[],
    private readonly capabilities: JsonObject,
    private readonly clientInfo: JsonObject,
  ) {
    this.meta = this.envelope();
  }

  get version(): string {
    return this.versionInUse;
  }

  /** `params` with the envelope in `_meta`: the caller's `_meta` keys win, except the protocol version. */
  stamp(params: JsonObject | undefined): JsonObject {
    if (params === undefined) return { _meta: this.meta };
    // Object.assign, then the member: on V8 (Node 20) `{ ...params, _meta }` takes a slow path (~0.5 µs a call).
    const stamped: JsonObject = Object.assign({}, params);
    const own = params._meta;
    stamped._meta =
      own === undefined
        ? this.meta
        : Object.assign({}, this.meta, own as JsonObject, { [META.protocolVersion]: this.versionInUse });
    return stamped;
  }

  /** The revision has no `logging/setLevel`: the level travels in each request's envelope from now on. */
  setLogLevel(level: LoggingLevel): void {
    this.logLevel = level;
    this.meta = this.envelope();
  }

  /**
   * The revision to retry a failed request with: a -32022 whose `data.supported` names one of ours other
   * than the one the request claimed. Undefined for any other failure (no retry).
   */
  retryVersion(error: unknown): string | undefined {
    if (!(error instanceof McpError) || error.code !== ErrorCode.UnsupportedProtocolVersion) return undefined;
    const supported = isPlainObject(error.data) ? error.data.supported : undefined;
    const version = mutualVersion(this.ours, supported);
    return version === undefined || version === this.versionInUse ? undefined : version;
  }

  switchVersion(version: string): void {
    this.versionInUse = version;
    this.meta = this.envelope();
  }

  /**
   * The tools a modern client may call: a tool whose `x-mcp-header` annotations are invalid is dropped
   * (`report` says why), since no request to it could carry valid headers. Remembers the ones whose calls
   * carry `Mcp-Param-*` headers.
   */
  usableTools(tools: readonly Tool[], report: (tool: Tool, problem: string) => void): Tool[] {
    const usable: Tool[] = [];
    for (const tool of tools) {
      const plan = mcpHeaderParams(tool);
      const problem = plan.ok ? numberAnnotation(tool, plan.params) : plan.problem;
      if (problem !== undefined) {
        this.headerTools?.delete(tool.name);
        report(tool, problem);
        continue;
      }
      if (!plan.ok) continue; // (for the type checker: a plan with no problem is ok)
      if (plan.params.length > 0) (this.headerTools ??= new Map()).set(tool.name, tool);
      else this.headerTools?.delete(tool.name);
      usable.push(tool);
    }
    return usable;
  }

  /** The `Mcp-Param-*` headers of a `tools/call` with `params`, or undefined when there are none. */
  headersFor(method: string, params: JsonObject | undefined): Record<string, string> | undefined {
    const headerTools = this.headerTools;
    if (method !== 'tools/call' || !headerTools?.size || typeof params?.name !== 'string') return undefined;
    const tool = headerTools.get(params.name);
    if (tool === undefined) return undefined;
    const headers = paramHeaders(tool, params.arguments);
    return Object.keys(headers).length > 0 ? headers : undefined;
  }

  private envelope(): JsonObject {
    return requestEnvelope(this.versionInUse, this.capabilities, this.clientInfo, this.logLevel);
  }
}

/** The `_meta` envelope of a modern request (frozen: one object is shared by many requests). */
export function requestEnvelope(
  version: string,
  capabilities: JsonObject,
  clientInfo: JsonObject,
  logLevel?: LoggingLevel,
): JsonObject {
  const meta: JsonObject = {
    [META.protocolVersion]: version,
    [META.clientCapabilities]: capabilities,
    [META.clientInfo]: clientInfo,
  };
  if (logLevel !== undefined) meta[META.logLevel] = logLevel;
  return Object.freeze(meta) as JsonObject;
}

/**
 * Why a designated parameter of type `number` makes the tool invalid: the spec allows integer, string and
 * boolean only, and conformance 0.2.0-alpha.12 (`http-invalid-tool-headers`, `invalid_number_header`)
 * expects such a tool dropped. `mcpHeaderParams` still accepts `number` (an older reading of the
 * scenarios); once it refuses it, this check can go.
 */
function numberAnnotation(tool: Tool, params: readonly ParamHeader[]): string | undefined {
  for (const param of params) {
    let node: unknown = tool.inputSchema;
    for (const key of param.path)
      node = isPlainObject(node) && isPlainObject(node.properties) ? node.properties[key] : undefined;
    const type = isPlainObject(node) ? node.type : undefined;
    if (type === 'number' || (Array.isArray(type) && type.includes('number')))
      return `${param.header} is on a parameter of type number, not integer, string or boolean`;
  }
  return undefined;
}

/** The JSON-RPC implementation-defined server error the SDKs answer a request without a session with. */
const SERVER_ERROR = -32000;

/**
 * A failure of a modern request that says the server may no longer serve the stateless revision (it was
 * replaced, or the verdict was wrong): an HTTP 400, 404 or 405 without a JSON-RPC body, a JSON-RPC
 * "Invalid Request", or the -32000 a handshake-era SDK server answers a request before `initialize`
 * (HTTP 400 "Server not initialized"). The cached era verdict is dropped then, so the next connection
 * probes again: a modern server's own -32000 costs no more than that one probe.
 */
export function isHandshakeEraFailure(error: unknown): boolean {
  if (error instanceof McpError) return error.code === ErrorCode.InvalidRequest || error.code === SERVER_ERROR;
  if (!(error instanceof TransportError)) return false;
  const status = (error as { httpStatus?: unknown }).httpStatus;
  return status === 400 || status === 404 || status === 405;
}
