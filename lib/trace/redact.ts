/**
 * Redaction: what a trace may show of tool arguments, results and `_meta`. A runtime's redactor runs once
 * per event before any subscriber or sink sees it (and on the payloads OpenTelemetry records). It never
 * mutates a message: messages pass by reference, so it returns redacted copies.
 */
import { isPlainObject } from '../jsonrpc/classify';
import type { TraceEvent, TraceKind } from './types';

export interface RedactionContext {
  readonly kind: TraceKind;
  /** The request's method, for responses too (absent when unknown, e.g. an ignored late response). */
  readonly method?: string;
  readonly direction?: 'in' | 'out';
}

/** Returns what to show instead of `message`: a copy with the sensitive parts replaced, or `message` itself. */
export type Redactor = (message: unknown, context: RedactionContext) => unknown;

/** `true` puts the placeholder in place of the value; a function returns the replacement. */
export type Replacement = true | ((value: unknown, context: RedactionContext) => unknown);

export interface RedactionPolicy {
  /** The `arguments` of `tools/call` and `prompts/get` requests. */
  readonly arguments?: Replacement;
  /** The `result` of `tools/call` responses. */
  readonly results?: Replacement;
  /** `_meta` keys whose values are replaced wherever they appear (params and results): names or a test. */
  readonly meta?: readonly string[] | ((key: string) => boolean);
  /** What `true` and redacted `_meta` values become (default `'[redacted]'`). */
  readonly placeholder?: unknown;
  /**
   * Replace the values of credential members (`SECRET_KEYS`: `authorization`, `access_token`, `client_secret`,
   * …) wherever they appear in a message, at any depth (default true).
   */
  readonly secrets?: boolean;
}

export const REDACTED = '[redacted]';

/**
 * Member names whose values are credentials (compared without case): an `Authorization` header's value, and
 * the OAuth token and client-authentication fields. A trace never shows them.
 */
export const SECRET_KEYS: ReadonlySet<string> = new Set([
  'authorization',
  'proxy-authorization',
  'access_token',
  'refresh_token',
  'id_token',
  'client_secret',
  'assertion',
  'client_assertion',
  'subject_token',
  'actor_token',
]);

/** Deeper than this a message is not searched (messages are refused past 128 levels on the way in). */
const MAX_SECRET_DEPTH = 160;

/**
 * `value` with the value of every member named in `SECRET_KEYS` replaced by `placeholder`, at any depth: the
 * same object when it has none (nothing is copied), else copies along the paths to them.
 */
export function redactSecrets(value: unknown, placeholder: unknown = REDACTED): unknown {
  return withoutSecrets(value, placeholder, 0);
}

function withoutSecrets(value: unknown, placeholder: unknown, depth: number): unknown {
  if (value === null || typeof value !== 'object' || depth > MAX_SECRET_DEPTH) return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let index = 0; index < value.length; index++) {
      const element = value[index];
      const shown = withoutSecrets(element, placeholder, depth + 1);
      if (shown !== element) (copy ??= value.slice())[index] = shown;
    }
    return copy ?? value;
  }
  let copy: JsonRecord | undefined;
  const record = value as JsonRecord;
  for (const key of Object.keys(record)) {
    const member = record[key];
    const shown = SECRET_KEYS.has(key.toLowerCase()) ? placeholder : withoutSecrets(member, placeholder, depth + 1);
    if (shown !== member) (copy ??= { ...record })[key] = shown;
  }
  return copy ?? value;
}

const METHODS_WITH_ARGUMENTS = new Set(['tools/call', 'prompts/get']);

type JsonRecord = Record<string, unknown>;

/** A redactor for the common cases; write a `Redactor` yourself for anything else. */
export function createRedactor(policy: RedactionPolicy): Redactor {
  const placeholder = 'placeholder' in policy ? policy.placeholder : REDACTED;
  const replace = (how: Replacement, value: unknown, context: RedactionContext) =>
    how === true ? placeholder : how(value, context);
  const listed = Array.isArray(policy.meta) ? new Set<string>(policy.meta) : undefined;
  const metaTest: ((key: string) => boolean) | undefined =
    typeof policy.meta === 'function' ? policy.meta : listed && ((key) => listed.has(key));

  const redactMeta = (meta: unknown): unknown => {
    if (!metaTest || !isPlainObject<JsonRecord>(meta)) return meta;
    let copy: JsonRecord | undefined;
    for (const key of Object.keys(meta)) {
      if (metaTest(key)) (copy ??= { ...meta })[key] = placeholder;
    }
    return copy ?? meta;
  };

  const redactParams = (params: JsonRecord, context: RedactionContext): JsonRecord => {
    let next = params;
    if (policy.arguments && 'arguments' in params && METHODS_WITH_ARGUMENTS.has(context.method ?? '')) {
      next = { ...next, arguments: replace(policy.arguments, params.arguments, context) };
    }
    const meta = redactMeta(params._meta);
    return meta === params._meta ? next : { ...next, _meta: meta };
  };

  const redactResult = (result: unknown, context: RedactionContext): unknown => {
    if (policy.results && context.method === 'tools/call') return replace(policy.results, result, context);
    if (!isPlainObject<JsonRecord>(result)) return result;
    const meta = redactMeta(result._meta);
    return meta === result._meta ? result : { ...result, _meta: meta };
  };

  const secrets = policy.secrets ?? true;

  const redactMessage = (given: unknown, context: RedactionContext): unknown => {
    const message = secrets ? withoutSecrets(given, placeholder, 0) : given;
    if (!isPlainObject<JsonRecord>(message)) return message;
    if (isPlainObject<JsonRecord>(message.params)) {
      const params = redactParams(message.params, context);
      return params === message.params ? message : { ...message, params };
    }
    if ('result' in message) {
      const result = redactResult(message.result, context);
      return result === message.result ? message : { ...message, result };
    }
    return message;
  };

  return (message, context) => {
    if (!Array.isArray(message)) return redactMessage(message, context);
    // A batch: each element is redacted as what it is.
    let changed = false;
    const elements = message.map((element) => {
      const method =
        isPlainObject<JsonRecord>(element) && typeof element.method === 'string' ? element.method : undefined;
      const kind: TraceKind = isPlainObject<JsonRecord>(element) && 'id' in element ? 'request' : 'notification';
      const redacted = redactMessage(element, { kind, method, direction: context.direction });
      changed ||= redacted !== element;
      return redacted;
    });
    return changed ? elements : message;
  };
}

/**
 * The redaction every runtime should apply when given none: credentials only (`SECRET_KEYS`), everything
 * else shown as it is.
 */
export const secretsRedactor: Redactor = createRedactor({});

/** `event` with its message redacted (the same object when nothing changed). */
export function redactTraceEvent(event: TraceEvent, redactor: Redactor): TraceEvent {
  if (event.message === undefined) return event;
  const message = redactor(event.message, event);
  return message === event.message ? event : { ...event, message };
}
