/**
 * Pure validation for `elicitation/create` (client side): form mode (2025-06-18) and URL mode (2025-11-25).
 * A request that breaks the protocol throws `McpError(-32602)`; a bad answer from the application throws `TypeError`.
 */
import { isPlainObject } from '../jsonrpc/classify';
import { ErrorCode, McpError } from '../jsonrpc/errors';
import { describeValue, faultsOf, quote, quoteList } from './checks';
import type {
  ElicitParams,
  ElicitResult,
  ElicitUrlParams,
  PrimitiveSchema,
  RequestedSchema,
  StringFormat,
  StringSchema,
} from '../protocol/client-features';

/** What the client declared under `capabilities.elicitation` (`elicitation: {}` means form only). */
export interface ElicitationDeclared {
  readonly form: boolean;
  readonly url: boolean;
  /** The revision's URL-mode requests carry no `elicitationId` (2026-07-28 has none). */
  readonly urlWithoutId?: boolean;
}

const { serverFault, appFault } = faultsOf('elicitation/create');

// RFC 3986 allows only these characters; the official schema checks `url` and `format: uri` against it.
const URI_CHARACTERS = /^(?:[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*$/;
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

function isUri(value: string): boolean {
  if (!SCHEME.test(value) || !URI_CHARACTERS.test(value)) return false;
  try {
    new URL(value);
    return true;
  } catch {
    return false;
  }
}

/**
 * The URL a client may show and open: absolute http(s), RFC 3986 characters only (what is shown is what opens),
 * and no user:password part (pre-authenticated, and `https://bank.example@evil.example` misleads the user).
 */
function urlProblem(url: unknown): string | undefined {
  if (typeof url !== 'string') return `must be a string, got ${describeValue(url)}`;
  if (!isUri(url)) return `${quote(url)} is not a valid absolute URL`;
  const parsed = new URL(url);
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    return `${quote(url)} must use http or https, not ${parsed.protocol}`;
  if (parsed.username || parsed.password) return `${quote(url)} must not carry credentials`;
  return undefined;
}

/** Problems of URL-mode params, as `[field, problem]`, or undefined. */
function urlParamsProblem(params: Record<string, unknown>, withId = true): [string, string] | undefined {
  if (params.mode !== 'url') return ['mode', `must be "url", got ${describeValue(params.mode)}`];
  if (typeof params.message !== 'string') return ['message', `must be a string, got ${describeValue(params.message)}`];
  const id = params.elicitationId;
  if (withId && (typeof id !== 'string' || id === ''))
    return ['elicitationId', `must be a non-empty string, got ${describeValue(id)}`];
  const url = urlProblem(params.url);
  return url ? ['url', url] : undefined;
}

const FORMATS: readonly unknown[] = ['email', 'uri', 'date', 'date-time'];
// Referential, composed or conditional schemas are outside the restricted subset, at any level.
const NOT_FLAT = ['$ref', '$dynamicRef', 'allOf', 'anyOf', 'not', 'if', 'then', 'else', 'patternProperties'];
// And a property may not nest anything (`oneOf` is allowed there: the titled single-select enum).
const NESTING = ['properties', 'prefixItems', 'contains', '$defs', 'definitions'];
// Validation keywords of the restricted subset, and which property type each belongs to.
const KEYWORD_TYPES: Record<string, readonly string[]> = {
  minLength: ['string'],
  maxLength: ['string'],
  format: ['string'],
  enum: ['string'],
  enumNames: ['string'],
  oneOf: ['string'],
  minimum: ['number', 'integer'],
  maximum: ['number', 'integer'],
  items: ['array'],
  minItems: ['array'],
  maxItems: ['array'],
};

function isCount(value: unknown): boolean {
  return Number.isInteger(value) && (value as number) >= 0;
}

function checkRange(
  schema: Record<string, unknown>,
  [low, high]: readonly [string, string],
  [isValue, what]: readonly [(value: unknown) => boolean, string],
): string | undefined {
  const min = schema[low];
  const max = schema[high];
  if (min !== undefined && !isValue(min)) return `${low} must be ${what}, got ${describeValue(min)}`;
  if (max !== undefined && !isValue(max)) return `${high} must be ${what}, got ${describeValue(max)}`;
  if (min !== undefined && max !== undefined && (min as number) > (max as number)) return `${low} exceeds ${high}`;
  return undefined;
}

const COUNT = [isCount, 'a non-negative integer'] as const;
const NUMBER = [Number.isFinite, 'a finite number'] as const;

function optionsProblem(options: unknown, where: string): string | undefined {
  if (!Array.isArray(options) || options.length === 0) return `${where} must be a non-empty array of options`;
  const bad = options.findIndex((o) => !isPlainObject(o) || typeof o.const !== 'string' || typeof o.title !== 'string');
  return bad >= 0 ? `${where}[${bad}] must be an object with string const and title` : undefined;
}

function enumProblem(values: unknown, where: string): string | undefined {
  if (!Array.isArray(values) || values.length === 0 || !values.every((v) => typeof v === 'string'))
    return `${where} must be a non-empty array of strings`;
  return undefined;
}

/** The allowed values of an enum property, or undefined for free text / numbers / booleans. */
function choicesOf(schema: PrimitiveSchema): readonly string[] | undefined {
  if ('enum' in schema) return schema.enum;
  if ('oneOf' in schema) return schema.oneOf.map((option) => option.const);
  if (schema.type !== 'array') return undefined;
  return 'enum' in schema.items ? schema.items.enum : schema.items.anyOf.map((option) => option.const);
}

/** Why `schema` (one property of a form) is outside the restricted subset, or undefined. */
function schemaProblem(schema: unknown): string | undefined {
  if (!isPlainObject(schema)) return `must be a schema object, got ${describeValue(schema)}`;
  const type = schema.type;
  if (type === 'object') return 'is a nested object; only primitive properties are allowed';
  for (const keyword of [...NOT_FLAT, ...NESTING])
    if (keyword in schema) return `uses ${keyword}, which the restricted elicitation schema does not allow`;
  if (typeof type !== 'string' || !['string', 'number', 'integer', 'boolean', 'array'].includes(type))
    return `has unsupported type ${describeValue(type)}`;
  for (const [keyword, types] of Object.entries(KEYWORD_TYPES))
    if (keyword in schema && !types.includes(type)) return `uses ${keyword}, which a ${type} property cannot have`;
  for (const key of ['title', 'description'])
    if (schema[key] !== undefined && typeof schema[key] !== 'string') return `${key} must be a string`;

  if (type === 'string') {
    if (schema.format !== undefined && !FORMATS.includes(schema.format))
      return `has unsupported format ${describeValue(schema.format)} (allowed: email, uri, date, date-time)`;
    const range = checkRange(schema, ['minLength', 'maxLength'], COUNT);
    if (range) return range;
    if ('enum' in schema && 'oneOf' in schema) return 'has both enum and oneOf';
    if ('enumNames' in schema) {
      if (!('enum' in schema)) return 'has enumNames without enum';
      const names = schema.enumNames;
      if (!Array.isArray(names) || !names.every((n) => typeof n === 'string'))
        return 'enumNames must be an array of strings';
      if (Array.isArray(schema.enum) && names.length !== schema.enum.length)
        return 'enumNames must name every enum value';
    }
    if ('enum' in schema) return enumProblem(schema.enum, 'enum');
    if ('oneOf' in schema) return optionsProblem(schema.oneOf, 'oneOf');
  } else if (type === 'number' || type === 'integer') {
    return checkRange(schema, ['minimum', 'maximum'], NUMBER);
  } else if (type === 'array') {
    const items = schema.items;
    if (!isPlainObject(items)) return `items must be an object, got ${describeValue(items)}`;
    if (items.type === 'object' || 'properties' in items)
      return 'is an array of objects; only multi-select enums are allowed';
    const range = checkRange(schema, ['minItems', 'maxItems'], COUNT);
    if (range) return range;
    if ('anyOf' in items) return optionsProblem(items.anyOf, 'items.anyOf');
    if (items.type !== 'string' || !('enum' in items))
      return 'items must be {type: "string", enum: [...]} or {anyOf: [{const, title}, ...]}';
    return enumProblem(items.enum, 'items.enum');
  }
  return undefined;
}

// The regex of ajv-formats' full mode, so we agree with JSON Schema validators (a dotted domain is needed).
const EMAIL =
  /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/i;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIME = /^(?<h>\d{2}):(?<m>\d{2}):(?<s>\d{2})(?:\.\d+)?(?:z|(?<sign>[+-])(?<oh>\d{2}):(?<om>\d{2}))$/i;

function isDate(value: string): boolean {
  const match = DATE.exec(value);
  if (!match) return false;
  const [year, month, day] = match.slice(1).map(Number) as [number, number, number];
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
  return days !== undefined && day >= 1 && day <= days;
}

function isDateTime(value: string): boolean {
  const [date, time, ...rest] = value.split(/[tT ]/);
  if (rest.length > 0 || !date || !time || !isDate(date)) return false;
  const groups = TIME.exec(time)?.groups;
  if (!groups) return false;
  const [h, m, s, oh, om] = [groups.h, groups.m, groups.s, groups.oh ?? '0', groups.om ?? '0'].map(Number) as [
    number,
    number,
    number,
    number,
    number,
  ];
  if (h > 23 || m > 59 || oh > 23 || om > 59) return false;
  if (s < 60) return true;
  // :60 is a leap second, which only exists at 23:59 UTC.
  const offset = (groups.sign === '-' ? -1 : 1) * (oh * 60 + om);
  return s === 60 && (h * 60 + m - offset + 1440) % 1440 === 1439;
}

const FORMAT_CHECKS: Record<StringFormat, [check: (value: string) => boolean, what: string]> = {
  email: [(value) => EMAIL.test(value), 'an email address'],
  uri: [isUri, 'an absolute URI'],
  date: [isDate, 'a date (YYYY-MM-DD)'],
  'date-time': [isDateTime, 'a date-time (RFC 3339, with a time zone)'],
};

const length = (value: string) => [...value].length;

/** Why `value` does not satisfy the (valid, restricted) property `schema`, or undefined. */
function valueProblem(schema: PrimitiveSchema, value: unknown): string | undefined {
  const choices = choicesOf(schema);
  switch (schema.type) {
    case 'boolean':
      return typeof value === 'boolean' ? undefined : `must be a boolean, got ${describeValue(value)}`;
    case 'number':
    case 'integer': {
      if (typeof value !== 'number' || !Number.isFinite(value)) return `must be a number, got ${describeValue(value)}`;
      if (schema.type === 'integer' && !Number.isInteger(value)) return `must be an integer, got ${value}`;
      if (schema.minimum !== undefined && value < schema.minimum)
        return `must be at least ${schema.minimum}, got ${value}`;
      if (schema.maximum !== undefined && value > schema.maximum)
        return `must be at most ${schema.maximum}, got ${value}`;
      return undefined;
    }
    case 'array': {
      if (!Array.isArray(value)) return `must be an array of strings, got ${describeValue(value)}`;
      const { minItems, maxItems } = schema;
      if (minItems !== undefined && value.length < minItems)
        return `must have at least ${minItems} items, got ${value.length}`;
      if (maxItems !== undefined && value.length > maxItems)
        return `must have at most ${maxItems} items, got ${value.length}`;
      const outside = value.find((item) => !choices!.includes(item));
      if (outside !== undefined)
        return `contains ${describeValue(outside)}, which is not one of ${quoteList(choices!)}`;
      const twice = value.find((item, i) => value.indexOf(item) !== i);
      return twice === undefined ? undefined : `contains ${describeValue(twice)} more than once`;
    }
    case 'string': {
      if (typeof value !== 'string') return `must be a string, got ${describeValue(value)}`;
      if (choices)
        return choices.includes(value)
          ? undefined
          : `must be one of ${quoteList(choices)}, got ${describeValue(value)}`;
      const { minLength, maxLength, format } = schema as StringSchema;
      if (minLength !== undefined && length(value) < minLength) return `must be at least ${minLength} characters long`;
      if (maxLength !== undefined && length(value) > maxLength) return `must be at most ${maxLength} characters long`;
      if (format && !FORMAT_CHECKS[format][0](value))
        return `must be ${FORMAT_CHECKS[format][1]}, got ${describeValue(value)}`;
      return undefined;
    }
  }
}

function checkRequestedSchema(schema: unknown): void {
  if (!isPlainObject(schema)) return serverFault(`requestedSchema must be an object, got ${describeValue(schema)}`);
  if (schema.type !== 'object') serverFault(`requestedSchema.type must be "object", got ${describeValue(schema.type)}`);
  if (schema.$schema !== undefined && typeof schema.$schema !== 'string')
    serverFault('requestedSchema.$schema must be a string');
  for (const keyword of [...NOT_FLAT, 'oneOf'])
    if (keyword in schema)
      serverFault(`requestedSchema uses ${keyword}, which the restricted elicitation schema does not allow`);
  const properties = schema.properties;
  if (!isPlainObject(properties))
    return serverFault(`requestedSchema.properties must be an object, got ${describeValue(properties)}`);
  for (const [name, property] of Object.entries(properties)) {
    const problem = schemaProblem(property) ?? defaultProblem(property as PrimitiveSchema);
    if (problem) serverFault(`requestedSchema property ${quote(name)} ${problem}`);
  }
  const required = schema.required;
  if (required === undefined) return;
  if (!Array.isArray(required))
    return serverFault(`requestedSchema.required must be an array, got ${describeValue(required)}`);
  for (const name of required) {
    if (typeof name !== 'string') serverFault(`requestedSchema.required must hold strings, got ${describeValue(name)}`);
    if (!Object.hasOwn(properties, name))
      serverFault(`requestedSchema.required names ${quote(name)}, which is not a property`);
  }
}

function defaultProblem(schema: PrimitiveSchema): string | undefined {
  if (schema.default === undefined) return undefined;
  const problem = valueProblem(schema, schema.default);
  return problem && `has a default that ${problem}`;
}

/**
 * Validates `elicitation/create` params. No `mode` means form mode. Throws `McpError(-32602)` for a mode the
 * client did not declare, a URL-mode request without a string `elicitationId` (where its revision has one) or with a URL that is not absolute
 * http(s) (javascript:, data:, file: and URLs with embedded credentials are refused), or a form whose
 * `requestedSchema` leaves the restricted flat subset (the message names the property). Returns `params`.
 */
export function parseElicitParams(params: unknown, declared: ElicitationDeclared): ElicitParams {
  if (!isPlainObject(params)) return serverFault(`params must be an object, got ${describeValue(params)}`);
  const mode = params.mode ?? 'form';
  if (mode !== 'form' && mode !== 'url') return serverFault(`mode must be "form" or "url", got ${describeValue(mode)}`);
  if (!declared[mode]) serverFault(`the client did not declare elicitation.${mode}`);
  if (typeof params.message !== 'string') serverFault(`message must be a string, got ${describeValue(params.message)}`);
  if (params._meta !== undefined && !isPlainObject(params._meta)) serverFault('_meta must be an object');
  if (params.task !== undefined) {
    const ttl = isPlainObject(params.task) ? params.task.ttl : undefined;
    if (!isPlainObject(params.task) || (ttl !== undefined && !Number.isInteger(ttl)))
      serverFault('task must be an object whose ttl, if present, is an integer');
  }
  if (mode === 'url') {
    const problem = urlParamsProblem(params, !declared.urlWithoutId);
    if (problem) serverFault(`${problem[0]} ${problem[1]}`);
  } else {
    checkRequestedSchema(params.requestedSchema);
  }
  return params as unknown as ElicitParams;
}

/**
 * `content` with each property's `default` filled in where the user left it out (2025-11-25 allows a default on
 * every primitive kind). Returns a new object; neither argument is changed.
 */
export function applyDefaults(
  schema: RequestedSchema,
  content: Readonly<Record<string, unknown>> | undefined,
): Record<string, unknown> {
  const defaults = Object.entries(schema.properties)
    .filter(([name, property]) => property.default !== undefined && content?.[name] === undefined)
    .map(([name, property]) => [name, Array.isArray(property.default) ? [...property.default] : property.default]);
  // fromEntries, not assignment: a property named "__proto__" must stay a plain key.
  return { ...content, ...Object.fromEntries(defaults) };
}

/**
 * Validates the application's answer to `params` (as returned by `parseElicitParams`). Throws `TypeError` naming
 * the field: an unknown action; content on a URL-mode, declined or cancelled result; or, for an accepted form, a
 * missing content object, a missing required field, a field the schema does not ask for, or a value of the wrong
 * type, outside its options, length, range or item count, or not matching its format. Returns `result`.
 */
export function checkElicitResult(result: unknown, params: ElicitParams): ElicitResult {
  if (!isPlainObject(result)) return appFault(`the handler must return an object, got ${describeValue(result)}`);
  const { action, content } = result;
  if (action !== 'accept' && action !== 'decline' && action !== 'cancel')
    return appFault(`action must be "accept", "decline" or "cancel", got ${describeValue(action)}`);
  if (result._meta !== undefined && !isPlainObject(result._meta)) appFault('_meta must be an object');
  if (params.mode === 'url') {
    if (content !== undefined) appFault('a URL-mode result must not carry content');
    return result as unknown as ElicitResult;
  }
  if (action !== 'accept') {
    if (content !== undefined) appFault(`a "${action}" result must not carry content`);
    return result as unknown as ElicitResult;
  }
  if (!isPlainObject(content))
    return appFault(`an accepted form needs a content object, got ${describeValue(content)}`);
  const { properties, required = [] } = params.requestedSchema;
  for (const name of Object.keys(content))
    if (!Object.hasOwn(properties, name)) appFault(`content.${name} is not a property of the requested schema`);
  for (const [name, schema] of Object.entries(properties)) {
    const value = content[name];
    if (value === undefined) {
      if (required.includes(name)) appFault(`content.${name} is required`);
      continue;
    }
    const problem = valueProblem(schema, value);
    if (problem) appFault(`content.${name} ${problem}`);
  }
  return result as unknown as ElicitResult;
}

/** The `data` of a -32042 URLElicitationRequiredError. Throws `TypeError` for an empty list or invalid entries. */
export function urlElicitationRequiredData(elicitations: readonly ElicitUrlParams[]): {
  elicitations: ElicitUrlParams[];
} {
  if (!Array.isArray(elicitations) || elicitations.length === 0)
    throw new TypeError('A URL elicitation required error needs at least one elicitation');
  elicitations.forEach((elicitation, i) => {
    const problem = isPlainObject(elicitation) ? urlParamsProblem(elicitation) : ['', 'must be an object'];
    if (problem) throw new TypeError(`elicitations[${i}]${problem[0] && '.'}${problem[0]} ${problem[1]}`);
  });
  return { elicitations: [...elicitations] };
}

/**
 * The URL elicitations a -32042 `McpError` asks for, or undefined when `error` is anything else or its data is
 * malformed (no list, an empty list, or any entry that is not valid URL-mode params with an http(s) URL), so a
 * caller never sees an unchecked URL.
 */
export function readUrlElicitations(error: unknown): ElicitUrlParams[] | undefined {
  if (!(error instanceof McpError) || error.code !== ErrorCode.UrlElicitationRequired) return undefined;
  const data = error.data;
  if (!isPlainObject(data) || !Array.isArray(data.elicitations) || data.elicitations.length === 0) return undefined;
  const elicitations: unknown[] = data.elicitations;
  if (!elicitations.every((entry) => isPlainObject(entry) && urlParamsProblem(entry) === undefined)) return undefined;
  return elicitations as ElicitUrlParams[];
}
