/**
 * RFC 6570 URI templates (https://www.rfc-editor.org/rfc/rfc6570): parse once, expand, and match URIs back
 * to variables.
 *
 * Parsing follows the RFC grammar and throws a TypeError naming the position and the fault: an unclosed
 * `{`, a stray `}`, an empty expression, a reserved or unknown operator, a bad variable name, or a bad
 * modifier (a prefix must be 1 to 9999; `*` and `:n` do not combine).
 *
 * Expansion implements levels 1 to 4 exactly as the RFC specifies. Literal text is copied, with characters
 * that may not appear in a URI percent-encoded (UTF-8). A prefix modifier on a list or an associative array
 * is an error (TypeError), as the RFC allows. Associative arrays expand in their key order.
 *
 * Matching is not defined by the RFC. `match(uri)` supports exactly this, and returns undefined otherwise:
 *
 * - Normalisation. The URI and the template's literals are compared after RFC 3986 normalisation:
 *   characters that may not appear in a URI are percent-encoded (UTF-8, so `é` is `%C3%A9` and a lone `%`
 *   is `%25`), percent-encodings use upper-case hex, and percent-encoded unreserved characters
 *   (`A-Z a-z 0-9 - . _ ~`) are decoded (`%7e`, `%7E` and `~` are the same). Beyond that, literals match
 *   exactly, case included (the scheme and host too). Matched values are percent-decoded; a value whose
 *   encoding is not UTF-8 fails the match. URIs longer than 8192 characters, before or after
 *   normalisation, never match.
 * - What each expression matches (`?` starts the query and `#` the fragment, so `?` occurs only in `{#var}`
 *   and query values, and `#` in none):
 *   - `{var}`: one or more characters other than `/ ? #`; `{+var}`: one or more other than `? #`, so
 *     `file:///{+path}` takes `a/b` but not `a/b?x`; both may be several comma-separated values.
 *   - `{#var}`: `#` then characters other than `#`; `{.var}`: `.` then characters other than `/ ? # .`;
 *     `{/var}`: `/` then characters other than `/ ? #`.
 *   - `{;var}`: `;name` or `;name=value` pairs, values without `/ ? # ;`; `{?var}` and `{&var}`: `?`/`&` then
 *     `name=value` (or `name`) pairs joined by `&`, values without `& #`.
 *   The expressions that start with an operator character may be absent (as when their variables are
 *   undefined) and their values may be empty (`X.`, `/a/`, `;x`, `?x=`, `#`); `{var}` and `{+var}` values
 *   may not, so `{id}` is a required segment.
 * - Several variables. Unnamed expressions (`{x,y}`, `{+x,y}`, `{#x,y}`, `{.x,y}`, `{/x,y}`) take their
 *   values in order between separators (`,`, `.`, `/`), which the values then cannot contain; trailing
 *   variables may be missing, and are absent from the result. Named ones (`{;x,y}`, `{?x,y}`, `{&x,y}`)
 *   take their pairs in any order, each optional. A pair whose name the expression does not list fails the
 *   match: unknown query parameters are not tolerated, so that among several templates the one naming the
 *   parameters serves the URI.
 * - Prefix `{var:3}`: 1 to 3 characters (0 to 3 where values may be empty), counting a percent-encoded UTF-8
 *   character as one.
 * - Explode: unnamed expressions (`{/segments*}`, `{.labels*}`, `{list*}`) return the values between
 *   separators as a list, and the variables after the exploded one in that expression become required;
 *   named ones (`{?list*}`, `{&list*}`, `{;list*}`) collect every `list=value` pair into a list. An
 *   unexploded `{list}` returns one string ("red,green,blue": alone in `{}`, `{+}` or `{#}` the value may
 *   contain commas). Associative arrays are not reconstructed: the keys of `{?keys*}` are unknown names.
 * - A variable that occurs more than once must have the same value each time; a prefix occurrence must be
 *   the start of the value (`{/var:1,var}` matches `/v/value`).
 * - Where an expression ends. Followed by a literal it cannot contain (`{var}/`, `{var}?`, `{+path}#`): at
 *   that literal. Followed by the template's final literal: where that literal ends the URI
 *   (`{+path}.md`). Followed by another literal that may occur inside it (`{year}-{month}-{day}`,
 *   `{+dir}/{name}.md`): at the first occurrence of that literal, except for the last such expression of the
 *   template, which ends at whichever occurrence lets the rest of the URI match. Directly followed by an
 *   expression with an operator: its values never contain that operator's character (`{name}{.ext}`
 *   splits `a.txt` but not `a.tar.gz`; `{name}{.ext*}` does). Directly followed by `{var}` or `{+var}`: it
 *   takes all it can, and the next one only what it cannot contain (`{a}{b}` never matches).
 *
 * Each template compiles once to a RegExp in which every expression but that last ambiguous one is atomic
 * (a lookahead and a back-reference), so matching is linear in the URI length, or quadratic at worst when
 * a template has an ambiguous expression; the length limit bounds both.
 */

import { excerpt } from '../jsonrpc/excerpt';

/** Longer URIs never match: it bounds the work a match can take. */
const MAX_URI_LENGTH = 8192;

interface Operator {
  readonly first: string;
  readonly sep: string;
  readonly named: boolean;
  readonly ifemp: string;
  /** Reserved characters pass through expansion unencoded. */
  readonly reserved: boolean;
  /** For matching: characters that never occur inside this operator's expansion. */
  readonly stops: string;
}

const OPERATORS: Readonly<Record<string, Operator>> = {
  '': { first: '', sep: ',', named: false, ifemp: '', reserved: false, stops: '/?#' },
  '+': { first: '', sep: ',', named: false, ifemp: '', reserved: true, stops: '?#' },
  '#': { first: '#', sep: ',', named: false, ifemp: '', reserved: true, stops: '#' },
  '.': { first: '.', sep: '.', named: false, ifemp: '', reserved: false, stops: '/?#' },
  '/': { first: '/', sep: '/', named: false, ifemp: '', reserved: false, stops: '?#' },
  ';': { first: ';', sep: ';', named: true, ifemp: '', reserved: false, stops: '/?#' },
  '?': { first: '?', sep: '&', named: true, ifemp: '=', reserved: false, stops: '#' },
  '&': { first: '&', sep: '&', named: true, ifemp: '=', reserved: false, stops: '#' },
};

interface VarSpec {
  readonly name: string;
  readonly explode: boolean;
  readonly prefix?: number;
}

interface Expression {
  readonly op: Operator;
  readonly vars: readonly VarSpec[];
}

/** Literal text (already encoded as expansion copies it) or an expression. */
type Part = string | Expression;

/** A variable's value; undefined, null, an empty list and an empty map are all "undefined" to the RFC. */
export type UriTemplateValue = string | readonly string[] | Readonly<Record<string, string>> | undefined | null;

type Capture =
  | { readonly kind: 'value'; readonly group: string; readonly spec: VarSpec; readonly sep: string }
  | {
      readonly kind: 'pairs';
      readonly group: string;
      readonly specs: ReadonlyMap<string, VarSpec>;
      readonly sep: string;
    };

interface Found {
  readonly value: string | string[];
  /** Matched by a prefix occurrence, so possibly cut short. */
  readonly partial: boolean;
}

export class UriTemplate {
  readonly variableNames: readonly string[];

  private constructor(
    readonly template: string,
    private readonly parts: readonly Part[],
    private readonly regex: RegExp,
    private readonly captures: readonly Capture[],
  ) {
    const names = parts.flatMap((part) => (typeof part === 'string' ? [] : part.vars.map((spec) => spec.name)));
    this.variableNames = Object.freeze([...new Set(names)]);
  }

  /** Parses and compiles a template; throws a TypeError for a malformed one. */
  static parse(template: string): UriTemplate {
    const parts: Part[] = [];
    for (const token of template.matchAll(/\{([^{}]*)\}|[{}]|[^{}]+/g)) {
      const fail = (why: string) =>
        new TypeError(`Invalid URI template ${excerpt(template)} at position ${token.index}: ${why}`);
      if (token[1] !== undefined) parts.push(parseExpression(token[1], fail));
      else if (token[0] === '{') throw fail('unclosed "{"');
      else if (token[0] === '}') throw fail('"}" without "{"');
      else parts.push(encodeReserved(token[0]));
    }
    const { regex, captures } = compile(parts);
    return new UriTemplate(template, parts, regex, captures);
  }

  /** Expands the template (RFC 6570 levels 1 to 4); undefined variables are omitted. */
  expand(variables: Readonly<Record<string, UriTemplateValue>>): string {
    let uri = '';
    for (const part of this.parts) uri += typeof part === 'string' ? part : expandExpression(part, variables);
    return uri;
  }

  /** The variables of `uri`, or undefined when it does not match (see the module comment for the rules). */
  match(uri: string): Record<string, string | string[]> | undefined {
    if (uri.length > MAX_URI_LENGTH) return undefined;
    const normalised = normalise(uri);
    if (normalised.length > MAX_URI_LENGTH) return undefined;
    const matched = this.regex.exec(normalised);
    if (!matched) return undefined;
    const found = new Map<string, Found>();
    const record = (name: string, value: string | string[], partial: boolean) => {
      const seen = found.get(name);
      const merged = seen ? agree(seen, { value, partial }) : { value, partial };
      if (merged) found.set(name, merged);
      return merged !== undefined;
    };
    try {
      for (const capture of this.captures) {
        const text = matched.groups?.[capture.group];
        if (text === undefined) continue;
        if (capture.kind === 'value') {
          const { spec } = capture;
          const value = spec.explode ? text.split(capture.sep).map(decodeURIComponent) : decodeURIComponent(text);
          if (!record(spec.name, value, spec.prefix !== undefined)) return undefined;
          continue;
        }
        const lists = new Map<string, string[]>();
        for (const pair of text.split(capture.sep)) {
          const equals = pair.indexOf('=');
          const spec = capture.specs.get(equals < 0 ? pair : pair.slice(0, equals))!;
          const value = equals < 0 ? '' : decodeURIComponent(pair.slice(equals + 1));
          if (!spec.explode) {
            if (!record(spec.name, value, spec.prefix !== undefined)) return undefined;
          } else if (lists.has(spec.name)) lists.get(spec.name)!.push(value);
          else lists.set(spec.name, [value]);
        }
        for (const [name, list] of lists) if (!record(name, list, false)) return undefined;
      }
    } catch (error) {
      if (error instanceof URIError) return undefined;
      throw error;
    }
    return Object.fromEntries([...found].map(([name, { value }]) => [name, value]));
  }
}

const VARNAME = /^(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*/;

function parseExpression(body: string, fail: (why: string) => TypeError): Expression {
  if (body === '') throw fail('empty expression');
  const first = body[0]!;
  if ('=,!@|'.includes(first)) throw fail(`operator "${first}" is reserved`);
  if (!/[+#./;?&A-Za-z0-9_%]/.test(first)) throw fail(`unknown operator "${first}"`);
  const op = '+#./;?&'.includes(first) ? first : '';
  const vars = body
    .slice(op.length)
    .split(',')
    .map((text): VarSpec => {
      const name = VARNAME.exec(text)?.[0];
      if (name === undefined) throw fail(`invalid variable name ${excerpt(text)}`);
      const modifier = text.slice(name.length);
      if (modifier === '') return { name, explode: false };
      if (modifier === '*') return { name, explode: true };
      if (/^:[1-9][0-9]{0,3}$/.test(modifier)) return { name, explode: false, prefix: Number(modifier.slice(1)) };
      throw fail(
        ':*'.includes(modifier[0]!)
          ? `invalid modifier ${excerpt(modifier)} on ${excerpt(name)}`
          : `invalid variable name ${excerpt(text)}`,
      );
    });
  return { op: OPERATORS[op]!, vars };
}

function expandExpression({ op, vars }: Expression, variables: Readonly<Record<string, UriTemplateValue>>): string {
  const items: string[] = [];
  for (const spec of vars) {
    const item = expandVariable(spec, Object.hasOwn(variables, spec.name) ? variables[spec.name] : undefined, op);
    if (item !== undefined) items.push(item);
  }
  return items.length === 0 ? '' : op.first + items.join(op.sep);
}

function expandVariable(spec: VarSpec, value: UriTemplateValue, op: Operator): string | undefined {
  if (value === undefined || value === null) return undefined;
  const encode = op.reserved ? encodeReserved : encodeUnreserved;
  const named = (name: string, text: string) => (op.named ? name + (text === '' ? op.ifemp : '=') + text : text);
  if (typeof value === 'string') {
    const text = spec.prefix === undefined ? value : Array.from(value).slice(0, spec.prefix).join('');
    return named(spec.name, encode(text));
  }
  if (spec.prefix !== undefined) {
    throw new TypeError(`URI template variable "${spec.name}" has a prefix modifier but its value is not a string`);
  }
  if (isList(value)) {
    if (value.length === 0) return undefined;
    if (!spec.explode) return named(spec.name, value.map(encode).join(','));
    return value.map((member) => named(spec.name, encode(member))).join(op.sep);
  }
  const entries = Object.entries(value);
  if (entries.length === 0) return undefined;
  if (!spec.explode) return named(spec.name, entries.flat().map(encode).join(','));
  return entries
    .map(([key, member]) => (op.named ? named(encode(key), encode(member)) : `${encode(key)}=${encode(member)}`))
    .join(op.sep);
}

function isList(value: UriTemplateValue): value is readonly string[] {
  return Array.isArray(value);
}

/** Two matches of one variable: the value they agree on, or undefined when they contradict each other. */
function agree(a: Found, b: Found): Found | undefined {
  const [short, long] = a.value.length <= b.value.length ? [a, b] : [b, a];
  if (typeof short.value !== 'string' || typeof long.value !== 'string') {
    return JSON.stringify(a.value) === JSON.stringify(b.value) ? a : undefined;
  }
  if (short.value === long.value) return { value: long.value, partial: short.partial && long.partial };
  return short.partial && long.value.startsWith(short.value) ? long : undefined;
}

/** Builds the matching RegExp and records which named group holds which variable. */
function compile(parts: readonly Part[]): { regex: RegExp; captures: Capture[] } {
  const captures: Capture[] = [];
  let groups = 0;
  const group = () => `g${groups++}`;
  const atomic = (body: string, follow: string) => {
    const name = group();
    return `(?=(?<${name}>${body})${follow})\\k<${name}>`;
  };
  const literals = parts.map((part) => (typeof part === 'string' ? normalise(part) : undefined));
  const isFinal = (i: number) => i === parts.length - 1;
  // Expressions followed by a (not final) literal that may occur inside them.
  const ambiguous = parts.map((part, i) => {
    const after = literals[i + 1];
    return typeof part !== 'string' && after !== undefined && !isFinal(i + 1) && !part.op.stops.includes(after[0]!);
  });
  const backtracking = ambiguous.lastIndexOf(true);

  let source = '^';
  parts.forEach((part, i) => {
    const literal = literals[i];
    if (literal !== undefined) {
      source += escapeRegExp(literal);
      return;
    }
    const expression = part as Expression;
    const next = parts[i + 1];
    const after = literals[i + 1];
    if (i === backtracking) source += expressionSource(expression, '', true, captures, group);
    else if (after !== undefined && (ambiguous[i] || isFinal(i + 1))) {
      const follow = escapeRegExp(after) + (isFinal(i + 1) ? '$' : '');
      source += atomic(expressionSource(expression, '', true, captures, group), follow);
    } else {
      const stop = typeof next === 'object' ? next.op.first : '';
      source += atomic(expressionSource(expression, stop, false, captures, group), '');
    }
  });
  return { regex: new RegExp(`${source}$`), captures };
}

/**
 * The pattern of one expression over a normalised URI. `stop` is a character the values may not contain
 * (the operator of an expression that directly follows); `lazy` makes every quantifier prefer less.
 */
function expressionSource(
  { op, vars }: Expression,
  stop: string,
  lazy: boolean,
  captures: Capture[],
  group: () => string,
): string {
  const q = lazy ? '?' : '';
  const first = escapeRegExp(op.first);
  const sep = escapeRegExp(op.sep);
  if (op.named) {
    const specs = new Map(vars.map((spec) => [normalise(spec.name), spec]));
    const value = (spec: VarSpec) => valuePattern(spec, op.stops + op.sep + stop, 0, q);
    const pair = `(?:${[...specs].map(([name, spec]) => `${escapeRegExp(name)}(?:=${value(spec)})?`).join('|')})`;
    const name = group();
    captures.push({ kind: 'pairs', group: name, specs, sep: op.sep });
    return `(?:${first}(?<${name}>${pair}(?:${sep}${pair})*${q}))?${q}`;
  }
  // A lone unexploded value may contain commas: `{list}` matches "red,green,blue" as one string.
  const lone = vars.length === 1 && !vars[0]!.explode && op.sep === ',';
  const excluded = op.stops + stop + (lone ? '' : op.sep);
  const min = op.first === '' ? 1 : 0;
  const pieces = vars.map((spec) => {
    const value = valuePattern(spec, excluded, min, q);
    const name = group();
    captures.push({ kind: 'value', group: name, spec, sep: op.sep });
    return `(?<${name}>${spec.explode ? `${value}(?:${sep}${value})*${q}` : value})`;
  });
  let tail = '';
  for (let i = pieces.length - 1; i > 0; i--) {
    const required = vars.slice(0, i).some((spec) => spec.explode);
    tail = `(?:${sep}${pieces[i]}${tail})${required ? '' : `?${q}`}`;
  }
  const source = first + pieces[0] + tail;
  return op.first === '' ? source : `(?:${source})?${q}`;
}

function valuePattern(spec: VarSpec, excluded: string, min: number, q: string): string {
  if (spec.prefix === undefined) return `[^${excluded}]${min ? '+' : '*'}${q}`;
  // One unit per character: a plain one, or a percent-encoded UTF-8 lead byte with its continuation bytes.
  const unit = `(?:[^%${excluded}]|%(?![89AB])[0-9A-F]{2}(?:%[89AB][0-9A-F])*)`;
  return `${unit}{${min},${spec.prefix}}${q}`;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** A percent-encoded triplet, or a character that may not appear in a URI as it is (a lone `%` among them). */
const TRIPLET_OR_FOREIGN = /%[0-9A-Fa-f]{2}|[^A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=]/gu;
const NOT_UNRESERVED = /[^A-Za-z0-9\-._~]/gu;
const UNRESERVED = /^[A-Za-z0-9\-._~]$/;

const utf8 = new TextEncoder();

/** Percent-encodes one character as UTF-8 (a lone surrogate becomes U+FFFD). */
function percentEncode(char: string): string {
  let encoded = '';
  for (const byte of utf8.encode(char)) encoded += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  return encoded;
}

/** Expansion's U set: only unreserved characters stay as they are. */
function encodeUnreserved(text: string): string {
  return text.replace(NOT_UNRESERVED, percentEncode);
}

/** Expansion's U+R set: unreserved and reserved characters and percent-encoded triplets stay as they are. */
function encodeReserved(text: string): string {
  return text.replace(TRIPLET_OR_FOREIGN, (found) => (found.length === 3 ? found : percentEncode(found)));
}

/** RFC 3986 normalisation of percent-encoding (see the module comment). */
function normalise(text: string): string {
  return text.replace(TRIPLET_OR_FOREIGN, (found) => {
    if (found.length !== 3) return percentEncode(found);
    const char = String.fromCharCode(parseInt(found.slice(1), 16));
    return UNRESERVED.test(char) ? char : found.toUpperCase();
  });
}
