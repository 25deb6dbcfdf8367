/**
 * The fields of an elicitation form as a terminal shows and reads them: one line describing each, the text
 * typed for it turned into its value, and every value checked by the client's own rules for the form
 * (`checkElicitResult`), so the terminal accepts exactly what the client would send.
 */
import { applyDefaults, checkElicitResult } from '../client/elicitation';
import type { ElicitFormParams, ElicitValue, PrimitiveSchema, StringSchema } from '../protocol/client-features';

export interface FormField {
  readonly name: string;
  readonly schema: PrimitiveSchema;
  readonly required: boolean;
}

export function fieldsOf({ requestedSchema }: ElicitFormParams): FormField[] {
  const required = requestedSchema.required ?? [];
  return Object.entries(requestedSchema.properties).map(([name, schema]) => ({
    name,
    schema,
    required: required.includes(name),
  }));
}

/** The options of an enum field (single or multiple choice), as value and title; undefined for other fields. */
export function choicesOf(schema: PrimitiveSchema): { value: string; title: string }[] | undefined {
  if ('oneOf' in schema) return schema.oneOf.map((option) => ({ value: option.const, title: option.title }));
  if ('enum' in schema) {
    const names = 'enumNames' in schema ? schema.enumNames : undefined;
    return schema.enum.map((value, index) => ({ value, title: names?.[index] ?? value }));
  }
  if (schema.type !== 'array') return undefined;
  const { items } = schema;
  return 'enum' in items
    ? items.enum.map((value) => ({ value, title: value }))
    : items.anyOf.map((option) => ({ value: option.const, title: option.title }));
}

/**
 * The server's `text` as a terminal may show it: control characters (an escape sequence could rewrite the
 * screen, or hide what is asked) written as JSON escapes.
 */
export function printable(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(
    /[\u0000-\u001f\u007f-\u009f]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** `age: an integer (0 to 150), optional, default 30`: what a field takes, in one line (printable). */
export function describeField({ name, schema, required }: FormField): string {
  const rest = [required ? 'required' : 'optional'];
  if (schema.default !== undefined) rest.push(`default ${showValue(schema.default)}`);
  const about = schema.title ?? schema.description;
  return printable(`${name}${about && about !== name ? ` (${about})` : ''}: ${kindOf(schema)}, ${rest.join(', ')}`);
}

function kindOf(schema: PrimitiveSchema): string {
  const choices = choicesOf(schema);
  if (schema.type === 'array') {
    const count = range(schema.minItems, schema.maxItems, 'choice');
    return `some of ${choices!.map((choice) => choice.value).join(', ')}${count}`;
  }
  if (choices) return `one of ${choices.map((choice) => choice.value).join(', ')}`;
  switch (schema.type) {
    case 'boolean':
      return 'yes or no';
    case 'number':
    case 'integer':
      return `${schema.type === 'integer' ? 'an integer' : 'a number'}${range(schema.minimum, schema.maximum)}`;
    case 'string': {
      const { format, minLength, maxLength } = schema as StringSchema;
      return `${format ? `text (${format})` : 'text'}${range(minLength, maxLength, 'character')}`;
    }
  }
}

/** ` (0 to 150)`, ` (at least 1 character)`, ` (at most 2 choices)`, or nothing. */
function range(low: number | undefined, high: number | undefined, unit?: string): string {
  const of = (count: number) => (unit ? ` ${unit}${count === 1 ? '' : 's'}` : '');
  if (low !== undefined && high !== undefined) return ` (${low} to ${high}${of(high)})`;
  if (low !== undefined) return ` (at least ${low}${of(low)})`;
  return high === undefined ? '' : ` (at most ${high}${of(high)})`;
}

export function showValue(value: ElicitValue): string {
  return Array.isArray(value) ? value.join(', ') : typeof value === 'boolean' ? (value ? 'yes' : 'no') : String(value);
}

const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i;
const YES = new Set(['y', 'yes', 'true', '1']);
const NO = new Set(['n', 'no', 'false', '0']);

/** The value typed for `field` (not empty), or why it is not one. */
export function readFieldValue(field: FormField, text: string): { value: ElicitValue } | { problem: string } {
  const { schema } = field;
  const choices = choicesOf(schema);
  let value: ElicitValue;
  if (schema.type === 'array') {
    value = text.split(',').map((word) => pickChoice(choices!, word.trim()));
  } else if (choices) {
    value = pickChoice(choices, text);
  } else if (schema.type === 'boolean') {
    const word = text.toLowerCase();
    if (!YES.has(word) && !NO.has(word)) return { problem: 'answer yes or no' };
    value = YES.has(word);
  } else if (schema.type === 'number' || schema.type === 'integer') {
    if (!NUMBER.test(text)) return { problem: `"${text}" is not a number` };
    value = Number(text);
  } else {
    value = text;
  }
  const problem = contentProblem({ [field.name]: value }, { [field.name]: schema });
  return problem === undefined ? { value } : { problem };
}

/** A choice by its number in the list (1-based), its value or its title; else the text as typed. */
function pickChoice(choices: readonly { value: string; title: string }[], text: string): string {
  const byNumber = /^\d+$/.test(text) ? choices[Number(text) - 1] : undefined;
  const byName = choices.find((choice) => choice.value === text) ?? choices.find((choice) => choice.title === text);
  return (byName ?? byNumber)?.value ?? text;
}

/**
 * Why `content` is not an answer the client would send for `params` (its defaults filled in, as the client
 * fills them), or undefined: `age must be at most 150, got 200`.
 */
export function answerProblem(
  params: ElicitFormParams,
  content: Readonly<Record<string, unknown>>,
): string | undefined {
  return contentProblem(applyDefaults(params.requestedSchema, content), params.requestedSchema.properties, params);
}

function contentProblem(
  content: Readonly<Record<string, unknown>>,
  properties: Readonly<Record<string, PrimitiveSchema>>,
  params?: ElicitFormParams,
): string | undefined {
  const form: ElicitFormParams = params ?? { message: '', requestedSchema: { type: 'object', properties } };
  try {
    checkElicitResult({ action: 'accept', content }, form);
    return undefined;
  } catch (error) {
    // `Invalid elicitation/create result: content.age must be ...`: the field and its problem are what matter here.
    return (error as Error).message.replace(/^Invalid elicitation\/create result: (content\.)?/, '');
  }
}
