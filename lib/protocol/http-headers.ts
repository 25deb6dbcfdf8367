/**
 * The 2026-07-28 Streamable HTTP request headers that mirror body values, for both sides
 * (`basic/transports/streamable-http` "Request Metadata"):
 * - standard headers: `Mcp-Method` on every request, `Mcp-Name` for the methods that name a target;
 * - custom headers: tool input properties annotated `x-mcp-header: "{Name}"` are mirrored as
 *   `Mcp-Param-{Name}`.
 * The client builds them (`standardHeaders`, `paramHeaders`) and drops tools whose annotations are invalid
 * (`mcpHeaderParams`); the server checks them against the body (`checkStandardHeaders`,
 * `checkParamHeaders`) and answers a disagreement with HTTP 400 and `HeaderMismatch` (-32020).
 * Pure functions over plain values: no transport, no Node imports.
 */
import { isPlainObject } from '../jsonrpc/classify';
import { ErrorCode } from '../jsonrpc/errors';
import { excerpt } from '../jsonrpc/excerpt';
import {
  decodeHeaderValue,
  encodeHeaderValue,
  readHeader,
  trimOptionalWhitespace,
  type HeaderSource,
} from './header-value';

export { decodeHeaderValue, encodeHeaderValue, type HeaderSource } from './header-value';

/** `HeaderMismatch`: a header disagrees with the body, or a required one is missing or malformed. */

export const MCP_METHOD_HEADER = 'Mcp-Method';
export const MCP_NAME_HEADER = 'Mcp-Name';
export const MCP_PARAM_HEADER_PREFIX = 'Mcp-Param-';
/** The schema extension keyword that designates a tool parameter to mirror. */
export const X_MCP_HEADER = 'x-mcp-header';

/** The methods whose request carries `Mcp-Name`, and the `params` member it mirrors (the tasks extension's: the task). */
export const NAME_SOURCES: ReadonlyMap<string, 'name' | 'uri' | 'taskId'> = new Map([
  ['tools/call', 'name'],
  ['prompts/get', 'name'],
  ['resources/read', 'uri'],
  ['tasks/get', 'taskId'],
  ['tasks/update', 'taskId'],
  ['tasks/cancel', 'taskId'],
]);

interface RequestLike {
  readonly method: string;
  readonly params?: unknown;
}

interface ToolLike {
  readonly inputSchema?: unknown;
}

export type HeaderVerdict =
  | { readonly ok: true }
  | { readonly ok: false; readonly code: typeof ErrorCode.HeaderMismatch; readonly message: string };

const HEADERS_AGREE: HeaderVerdict = Object.freeze({ ok: true });

function mismatch(message: string): HeaderVerdict {
  return { ok: false, code: ErrorCode.HeaderMismatch, message: `Header mismatch: ${message}` };
}

// ---- standard headers ---------------------------------------------------------------------------------

/** The `Mcp-Method` and (for a named target) `Mcp-Name` headers a client sends with `message`. */
export function standardHeaders(message: RequestLike): Record<string, string> {
  const headers: Record<string, string> = { [MCP_METHOD_HEADER]: message.method };
  const name = nameOf(message);
  if (name !== undefined) headers[MCP_NAME_HEADER] = encodeHeaderValue(name);
  return headers;
}

/** The body value `Mcp-Name` mirrors, when the method has one and the body carries it as a string. */
function nameOf(message: RequestLike): string | undefined {
  const member = NAME_SOURCES.get(message.method);
  if (member === undefined || !isPlainObject(message.params)) return undefined;
  const value = message.params[member];
  return typeof value === 'string' ? value : undefined;
}

/**
 * The server's check of `Mcp-Method` and `Mcp-Name` against the body: both required where they apply,
 * values case-sensitive, `Mcp-Name` decoded first. A body without a string name is left to params
 * validation (it is refused there).
 */
export function checkStandardHeaders(message: RequestLike, headers: HeaderSource): HeaderVerdict {
  const method = readHeader(headers, 'mcp-method');
  if (method === undefined)
    return mismatch(`missing ${MCP_METHOD_HEADER} header (the body's method is ${quote(message.method)})`);
  // Only Mcp-Name and Mcp-Param-* may use the Base64 form; a method name is compared as sent.
  if (trimOptionalWhitespace(method) !== message.method) {
    return mismatch(
      `${MCP_METHOD_HEADER} header value ${quote(method)} does not match body value ${quote(message.method)}`,
    );
  }
  const name = nameOf(message);
  if (name === undefined) return HEADERS_AGREE;
  const sentName = readHeader(headers, 'mcp-name');
  if (sentName === undefined) return mismatch(`missing ${MCP_NAME_HEADER} header (required for ${message.method})`);
  return compareText(MCP_NAME_HEADER, sentName, name);
}

// ---- x-mcp-header annotations ---------------------------------------------------------------------------

/** One designated parameter: where its value sits in the arguments and the header that mirrors it. */
export interface ParamHeader {
  /** The chain of `properties` keys from the schema root to the annotated property. */
  readonly path: readonly string[];
  /** `Mcp-Param-{Name}` with the annotation's spelling. */
  readonly header: string;
  /** The header name in lower case, for lookups in Node's header records. */
  readonly key: string;
}

export type ParamHeaderPlan =
  { readonly ok: true; readonly params: readonly ParamHeader[] } | { readonly ok: false; readonly problem: string };

/** RFC 9110 §5.6.2 `token` (1*tchar): excludes empty names, spaces, control characters, delimiters, non-ASCII. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * The primitive types a designated parameter may have. The spec text names integer, string and boolean
 * and excludes `number`; the conformance suite's client scenario (`http-custom-headers`) annotates
 * `number` properties and expects them mirrored, so `number` is accepted too (as other SDKs do).
 */
const PRIMITIVE_TYPES: ReadonlySet<string> = new Set(['string', 'integer', 'boolean', 'number']);

/** Subschema keywords whose members are never statically reachable (everything but `properties`). */
const SCHEMA_MAP_KEYWORDS = ['patternProperties', '$defs', 'definitions', 'dependentSchemas', 'dependencies'];
const SCHEMA_KEYWORDS = [
  'additionalProperties',
  'unevaluatedProperties',
  'propertyNames',
  'items',
  'additionalItems',
  'unevaluatedItems',
  'contains',
  'not',
  'if',
  'then',
  'else',
  'contentSchema',
];
const SCHEMA_LIST_KEYWORDS = ['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items'];

/** Nodes walked before a schema counts as too large (or cyclic) to check: bounds a hostile definition. */
export const MAX_SCHEMA_NODES = 200_000;

/** A `properties` chain as a list from the leaf up, shared between siblings (copying would be quadratic in depth). */
interface PathStep {
  readonly key: string;
  readonly parent: PathStep | typeof ROOT;
}
const ROOT = 'root';
/** Where a node sits: on the `properties` chain from the root, or off it (`undefined`: not statically reachable). */
type Position = PathStep | typeof ROOT | undefined;

interface PendingNode {
  readonly node: unknown;
  readonly at: Position;
}

function pathOf(step: PathStep): string[] {
  const path: string[] = [];
  for (let at: PathStep | typeof ROOT = step; at !== ROOT; at = at.parent) path.push(at.key);
  return path.reverse();
}

/**
 * The `x-mcp-header` annotations of `tool.inputSchema`, or why they make the tool definition invalid
 * (`basic/transports/streamable-http` "Schema Extension"): the value must be a non-empty HTTP token,
 * unique case-insensitively, on a property of a primitive type, reachable from the root through
 * `properties` keys alone. Data keywords (`const`, `enum`, `default`, `examples`, unknown ones) are not
 * schemas, so an `x-mcp-header` key inside them is not an annotation. Never throws; walks iteratively.
 */
export function mcpHeaderParams(tool: ToolLike): ParamHeaderPlan {
  const params: ParamHeader[] = [];
  const seen = new Set<string>();
  const pending: PendingNode[] = [{ node: tool.inputSchema, at: ROOT }];
  let walked = 0;
  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    if (++walked > MAX_SCHEMA_NODES)
      return { ok: false, problem: `inputSchema is larger than ${MAX_SCHEMA_NODES} schema nodes` };
    const { node, at } = item;
    if (!isPlainObject(node)) continue;
    if (Object.hasOwn(node, X_MCP_HEADER)) {
      const path = at === undefined ? undefined : at === ROOT ? [] : pathOf(at);
      const problem = annotationProblem(node, path, seen);
      if (problem !== undefined) return { ok: false, problem };
      const name = node[X_MCP_HEADER] as string;
      seen.add(name.toLowerCase());
      const header = `${MCP_PARAM_HEADER_PREFIX}${name}`;
      params.push({ path: path as string[], header, key: header.toLowerCase() });
    }
    queueSubschemas(node, at, pending);
  }
  return { ok: true, params };
}

function annotationProblem(
  node: Record<string, unknown>,
  path: readonly string[] | undefined,
  seen: Set<string>,
): string | undefined {
  const name = node[X_MCP_HEADER];
  const where = path && path.length > 0 ? `property ${quote(path.join('.'))}` : 'the schema root';
  if (typeof name !== 'string') return `${X_MCP_HEADER} on ${where} is not a string`;
  if (name === '') return `${X_MCP_HEADER} on ${where} is empty`;
  if (!TOKEN.test(name)) return `${X_MCP_HEADER} ${quote(name)} on ${where} is not an HTTP token (RFC 9110 tchar only)`;
  if (path === undefined)
    return `${X_MCP_HEADER} ${quote(name)} is not reachable from the root through properties alone`;
  if (path.length === 0) return `${X_MCP_HEADER} ${quote(name)} is on the schema root, not on a parameter`;
  if (seen.has(name.toLowerCase()))
    return `${X_MCP_HEADER} ${quote(name)} on ${where} repeats another annotation (names are case-insensitive)`;
  if (!isPrimitiveType(node.type))
    return `${X_MCP_HEADER} ${quote(name)} is on ${where} of type ${excerpt(node.type ?? 'unspecified', 60)}, not integer, string or boolean`;
  return undefined;
}

/** One primitive type, or a list of primitive types, `null` allowed alongside (a null value is not mirrored). */
function isPrimitiveType(type: unknown): boolean {
  if (typeof type === 'string') return PRIMITIVE_TYPES.has(type);
  if (!Array.isArray(type)) return false;
  let primitives = 0;
  for (const member of type) {
    if (member === 'null') continue;
    if (typeof member !== 'string' || !PRIMITIVE_TYPES.has(member)) return false;
    primitives++;
  }
  return primitives > 0;
}

function queueSubschemas(node: Record<string, unknown>, at: Position, pending: PendingNode[]): void {
  const properties = node.properties;
  if (isPlainObject(properties)) {
    for (const key of Object.keys(properties)) {
      pending.push({ node: properties[key], at: at === undefined ? undefined : { key, parent: at } });
    }
  }
  for (const keyword of SCHEMA_MAP_KEYWORDS) {
    const map = node[keyword];
    if (isPlainObject(map)) for (const key of Object.keys(map)) pending.push({ node: map[key], at: undefined });
  }
  for (const keyword of SCHEMA_KEYWORDS) {
    if (Object.hasOwn(node, keyword)) pending.push({ node: node[keyword], at: undefined });
  }
  for (const keyword of SCHEMA_LIST_KEYWORDS) {
    const list = node[keyword];
    if (Array.isArray(list)) for (const member of list) pending.push({ node: member, at: undefined });
  }
}

/** The plan of `tool`, computed once per input schema object (tool definitions are not mutated). */
const plans = new WeakMap<object, ParamHeaderPlan>();
const NO_PARAMS: ParamHeaderPlan = Object.freeze({ ok: true, params: Object.freeze([]) });

function planOf(tool: ToolLike): ParamHeaderPlan {
  const schema = tool.inputSchema;
  if (schema === null || typeof schema !== 'object') return NO_PARAMS;
  let plan = plans.get(schema);
  if (plan === undefined) {
    plan = mcpHeaderParams(tool);
    plans.set(schema, plan);
  }
  return plan;
}

// ---- Mcp-Param-* headers --------------------------------------------------------------------------------

/**
 * The `Mcp-Param-*` headers a client sends when calling `tool` with `args`: one per designated parameter
 * whose value is present, not null and primitive. A tool with invalid annotations yields none (the
 * client drops such tools from its list; see `mcpHeaderParams`).
 */
export function paramHeaders(tool: ToolLike, args: unknown): Record<string, string> {
  const headers: Record<string, string> = {};
  const plan = planOf(tool);
  if (!plan.ok) return headers;
  for (const param of plan.params) {
    const text = headerTextOf(valueAt(args, param.path));
    if (text !== undefined) headers[param.header] = encodeHeaderValue(text);
  }
  return headers;
}

/**
 * The server's check of `Mcp-Param-*` headers against the arguments of a call to `tool`: a parameter
 * with a value needs its header, decoded equal (numbers compared numerically); a parameter without one
 * must have no header. Undesignated `Mcp-Param-*` headers are ignored. A tool whose annotations are
 * invalid enforces none (a server should refuse to define it; see `mcpHeaderParams`). A non-primitive
 * value is left to input validation, which refuses it.
 */
export function checkParamHeaders(tool: ToolLike, args: unknown, headers: HeaderSource): HeaderVerdict {
  const plan = planOf(tool);
  if (!plan.ok) return HEADERS_AGREE;
  for (const param of plan.params) {
    const verdict = checkParam(param, valueAt(args, param.path), readHeader(headers, param.key));
    if (!verdict.ok) return verdict;
  }
  return HEADERS_AGREE;
}

function checkParam(param: ParamHeader, value: unknown, sent: string | undefined): HeaderVerdict {
  if (value === undefined || value === null) {
    return sent === undefined
      ? HEADERS_AGREE
      : mismatch(`${param.header} header sent but ${argumentName(param)} has no value`);
  }
  if (sent === undefined) return mismatch(`missing ${param.header} header (${argumentName(param)} has a value)`);
  if (typeof value === 'number') return compareNumber(param.header, sent, value);
  const expected = headerTextOf(value);
  return expected === undefined ? HEADERS_AGREE : compareText(param.header, sent, expected);
}

function compareText(header: string, sent: string, expected: string): HeaderVerdict {
  const decoded = decodeHeaderValue(sent);
  if (decoded === undefined)
    return mismatch(`${header} header value ${quote(sent)} has invalid characters or a malformed =?base64?…?= form`);
  if (decoded !== expected)
    return mismatch(`${header} header value ${quote(decoded)} does not match body value ${quote(expected)}`);
  return HEADERS_AGREE;
}

/** JSON number syntax: what a decimal rendering of a number looks like (`42`, `42.0`, `-7`, `1e+21`). */
const NUMBER_TEXT = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

function compareNumber(header: string, sent: string, expected: number): HeaderVerdict {
  const decoded = decodeHeaderValue(sent);
  if (decoded === undefined)
    return mismatch(`${header} header value ${quote(sent)} has invalid characters or a malformed =?base64?…?= form`);
  if (!NUMBER_TEXT.test(decoded) || Number(decoded) !== expected) {
    return mismatch(`${header} header value ${quote(decoded)} does not match body value ${expected}`);
  }
  return HEADERS_AGREE;
}

function argumentName(param: ParamHeader): string {
  return `arguments.${param.path.join('.')}`;
}

/** The value at `path` in the arguments, through own members of plain objects only. */
function valueAt(args: unknown, path: readonly string[]): unknown {
  let value = args;
  for (const key of path) {
    if (!isPlainObject(value) || !Object.hasOwn(value, key)) return undefined;
    value = value[key];
  }
  return value;
}

/** The type conversion of "Value Encoding": strings as they are, numbers in decimal, booleans in lower case. */
function headerTextOf(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      return value;
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      return Number.isFinite(value) ? String(value) : undefined;
    case 'bigint':
      return String(value);
    default:
      return undefined;
  }
}

// ---- helpers --------------------------------------------------------------------------------------------

function quote(value: string): string {
  return excerpt(value, 80);
}
