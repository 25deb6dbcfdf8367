import { describe, expect, it } from 'vitest';
import { compileWithAjv, specAccepts, expectInvalidParams, expectTypeError, thrown } from '../helpers/rules';
import { ClientFeatures } from '../../lib/client/features';
import { ErrorCode, McpError } from '../../lib/jsonrpc/errors';
import {
  applyDefaults,
  checkElicitResult,
  parseElicitParams,
  readUrlElicitations,
  urlElicitationRequiredData,
  type ElicitationDeclared,
} from '../../lib/client/elicitation';
import type {
  ElicitFormParams,
  ElicitParams,
  ElicitUrlParams,
  RequestedSchema,
} from '../../lib/protocol/client-features';

const FORM: ElicitationDeclared = { form: true, url: false };
const URL_ONLY: ElicitationDeclared = { form: false, url: true };
const BOTH: ElicitationDeclared = { form: true, url: true };

/** One property of every kind the restricted schema allows. */
const KINDS = {
  name: { type: 'string', title: 'Name', description: 'Your name', minLength: 2, maxLength: 5, default: 'Ann' },
  email: { type: 'string', format: 'email', default: 'user@example.com' },
  homepage: { type: 'string', format: 'uri' },
  birthday: { type: 'string', format: 'date' },
  meeting: { type: 'string', format: 'date-time' },
  age: { type: 'integer', minimum: 18, maximum: 130, default: 30 },
  ratio: { type: 'number', minimum: 0, maximum: 1, default: 0.5 },
  subscribe: { type: 'boolean', default: false },
  color: { type: 'string', enum: ['Red', 'Green', 'Blue'], default: 'Red' },
  hex: {
    type: 'string',
    oneOf: [
      { const: '#FF0000', title: 'Red' },
      { const: '#00FF00', title: 'Green' },
    ],
    default: '#FF0000',
  },
  legacy: { type: 'string', enum: ['s', 'm', 'l'], enumNames: ['Small', 'Medium', 'Large'], default: 'm' },
  tags: {
    type: 'array',
    minItems: 1,
    maxItems: 2,
    items: { type: 'string', enum: ['a', 'b', 'c'] },
    default: ['a'],
  },
  hexes: {
    type: 'array',
    maxItems: 2,
    items: {
      anyOf: [
        { const: '#FF0000', title: 'Red' },
        { const: '#00FF00', title: 'Green' },
      ],
    },
    default: ['#00FF00'],
  },
} as const;

const form = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  message: 'Please fill in',
  requestedSchema: { type: 'object', properties, ...extra },
});

const urlParams = (url: string, extra: Record<string, unknown> = {}) => ({
  mode: 'url',
  message: 'Please provide your API key to continue.',
  elicitationId: '550e8400-e29b-41d4-a716-446655440000',
  url,
  ...extra,
});

const allKinds = () => parseElicitParams(form(KINDS, { required: ['name', 'age'] }), FORM) as ElicitFormParams;

describe('parseElicitParams: modes and capabilities', () => {
  it('treats a request without mode as form mode and returns it', () => {
    const params = form({ name: { type: 'string' } }, { required: ['name'] });
    expect(specAccepts('ElicitRequestFormParams', params)).toBe(true);
    expect(parseElicitParams(params, FORM)).toBe(params);
    const explicit = { mode: 'form', ...params };
    expect(specAccepts('ElicitRequestFormParams', explicit)).toBe(true);
    expect(parseElicitParams(explicit, BOTH)).toBe(explicit);
  });

  it('refuses form mode when the client did not declare elicitation.form', () => {
    expectInvalidParams(
      () => parseElicitParams(form({ name: { type: 'string' } }), URL_ONLY),
      'the client did not declare elicitation.form',
    );
  });

  it('accepts URL mode (the spec example) when declared, and refuses it otherwise', () => {
    const params = urlParams('https://mcp.example.com/ui/set_api_key');
    expect(specAccepts('ElicitRequestURLParams', params)).toBe(true);
    expect(parseElicitParams(params, URL_ONLY)).toBe(params);
    expectInvalidParams(() => parseElicitParams(params, FORM), 'the client did not declare elicitation.url');
  });

  it('refuses an unknown mode and malformed common fields', () => {
    expectInvalidParams(() => parseElicitParams({ ...form({}), mode: 'popup' }, BOTH), 'mode must be', '"popup"');
    expectInvalidParams(() => parseElicitParams('form', BOTH), 'params must be an object');
    const noMessage = { requestedSchema: { type: 'object', properties: {} } };
    expect(specAccepts('ElicitRequestFormParams', noMessage)).toBe(false);
    expectInvalidParams(() => parseElicitParams(noMessage, BOTH), 'message must be a string');
    expectInvalidParams(() => parseElicitParams({ ...form({}), task: { ttl: 'x' } }, BOTH), 'task must be');
    expect(parseElicitParams({ ...form({}), task: { ttl: 1000 } }, BOTH)).toBeDefined();
  });
});

describe('parseElicitParams: URL mode', () => {
  it('accepts http and https URLs with paths, queries and fragments', () => {
    for (const url of ['http://localhost:3000/connect', 'https://mcp.example.com/connect?elicitationId=1&x=%20#top']) {
      expect(specAccepts('ElicitRequestURLParams', urlParams(url))).toBe(true);
      expect(parseElicitParams(urlParams(url), URL_ONLY)).toEqual(urlParams(url));
    }
  });

  it('needs a non-empty string elicitationId', () => {
    for (const elicitationId of [undefined, 42, '']) {
      expectInvalidParams(
        () => parseElicitParams(urlParams('https://x.example', { elicitationId }), URL_ONLY),
        'elicitationId must be a non-empty string',
      );
    }
    expect(specAccepts('ElicitRequestURLParams', urlParams('https://x.example', { elicitationId: 42 }))).toBe(false);
  });

  it('needs no elicitationId in 2026-07-28, which has none', () => {
    const { elicitationId: _none, ...params } = urlParams('https://x.example');
    expect(parseElicitParams(params, { ...URL_ONLY, urlWithoutId: true })).toBe(params);
    const features = new ClientFeatures({ elicitation: { url: () => ({ action: 'accept' }) } });
    expect(features.elicitationDeclared('2026-07-28')).toMatchObject({ url: true, urlWithoutId: true });
    expect(features.elicitationDeclared('2025-11-25').urlWithoutId).toBeUndefined();
  });

  it('refuses URLs that are not absolute http(s)', () => {
    const cases: [unknown, string][] = [
      [undefined, 'url must be a string'],
      ['/connect', 'is not a valid absolute URL'],
      ['mcp.example.com/connect', 'is not a valid absolute URL'],
      ['javascript:alert(1)', 'must use http or https, not javascript:'],
      ['JavaScript:alert(1)', 'must use http or https, not javascript:'],
      ['data:text/html,<b>hi</b>', 'is not a valid absolute URL'],
      ['data:text/html;base64,PGI+aGk8L2I+', 'must use http or https, not data:'],
      ['file:///etc/passwd', 'must use http or https, not file:'],
      ['ftp://example.com/x', 'must use http or https, not ftp:'],
      ['vscode://settings', 'must use http or https'],
    ];
    for (const [url, fragment] of cases)
      expectInvalidParams(() => parseElicitParams(urlParams(url as string), URL_ONLY), 'url', fragment);
  });

  it("quotes at most an excerpt of the server's URL, property names and choices in its refusal", () => {
    const url = `https://x.example/${'a b'.repeat(100_000)}`;
    const refusal = (thrown(() => parseElicitParams(urlParams(url), URL_ONLY)) as Error).message;
    expect(refusal).toContain('… (300018 characters) is not a valid absolute URL');
    expect(refusal.length).toBeLessThan(300);
    const name = 'n'.repeat(100_000);
    const badProperty = thrown(() => parseElicitParams(form({ [name]: { type: 'object' } }), FORM)) as Error;
    expect(badProperty.message).toContain('(100000 characters) is a nested object');
    expect(badProperty.message.length).toBeLessThan(300);
    const choices = Array.from({ length: 5000 }, (_, i) => `choice-${i}`);
    const params = parseElicitParams(form({ pick: { type: 'string', enum: choices } }), FORM) as ElicitFormParams;
    const wrong = thrown(() => checkElicitResult({ action: 'accept', content: { pick: 'none' } }, params)) as Error;
    expect(wrong.message).toContain('"choice-9" and 4990 more');
    expect(wrong.message.length).toBeLessThan(400);
  });

  it('refuses URLs with credentials or characters that would display differently from what opens', () => {
    const cases: [string, string][] = [
      ['https://bank.example@evil.example/login', 'must not carry credentials'],
      ['https://user:secret@mcp.example.com/', 'must not carry credentials'],
      ['https://mcp.example.com/a b', 'is not a valid absolute URL'],
      ['https://mcp.example.com/\nhttps://evil.example', 'is not a valid absolute URL'],
      [' https://mcp.example.com/', 'is not a valid absolute URL'],
      ['https://bücher.example/', 'is not a valid absolute URL'],
    ];
    for (const [url, fragment] of cases) {
      expectInvalidParams(() => parseElicitParams(urlParams(url), URL_ONLY), 'url', fragment);
    }
    // The official schema (format: uri) agrees on the ones that are not URIs at all.
    expect(specAccepts('ElicitRequestURLParams', urlParams('https://mcp.example.com/a b'))).toBe(false);
    expect(specAccepts('ElicitRequestURLParams', urlParams('/connect'))).toBe(false);
  });
});

describe('parseElicitParams: the restricted form schema', () => {
  it('accepts every primitive kind, each of which the official schema accepts too', () => {
    for (const [name, property] of Object.entries(KINDS))
      expect(specAccepts('PrimitiveSchemaDefinition', property), name).toBe(true);
    const params = form(KINDS, { required: ['name', 'age'], $schema: 'https://json-schema.org/draft/2020-12/schema' });
    expect(specAccepts('ElicitRequestFormParams', params)).toBe(true);
    expect(parseElicitParams(params, FORM)).toBe(params);
  });

  it('tolerates annotation keywords it does not enforce, such as pattern', () => {
    const params = form({ code: { type: 'string', pattern: '^[A-Z]+$', examples: ['ABC'] } });
    expect(parseElicitParams(params, FORM)).toBe(params);
  });

  it('refuses a requestedSchema that is not a flat object schema', () => {
    const cases: [unknown, string][] = [
      [undefined, 'requestedSchema must be an object'],
      [{ type: 'array', properties: {} }, 'requestedSchema.type must be "object"'],
      [{ type: 'object' }, 'requestedSchema.properties must be an object'],
      [{ type: 'object', properties: {}, allOf: [{}] }, 'requestedSchema uses allOf'],
      [{ type: 'object', properties: {}, $ref: '#/$defs/x' }, 'requestedSchema uses $ref'],
    ];
    for (const [requestedSchema, fragment] of cases)
      expectInvalidParams(() => parseElicitParams({ message: 'm', requestedSchema }, FORM), fragment);
    expect(specAccepts('ElicitRequestFormParams', { message: 'm', requestedSchema: { type: 'object' } })).toBe(false);
  });

  it('names the property that leaves the restricted subset', () => {
    const cases: [unknown, string][] = [
      [{ type: 'object', properties: { street: { type: 'string' } } }, 'is a nested object'],
      [{ type: 'array', items: { type: 'object', properties: {} } }, 'is an array of objects'],
      [{ type: 'array', items: { type: 'string' } }, 'items must be {type: "string", enum: [...]}'],
      [{ type: 'array', items: { type: 'string', enum: [] } }, 'items.enum must be a non-empty array of strings'],
      [{ type: 'array' }, 'items must be an object'],
      [{ $ref: '#/$defs/Address' }, 'uses $ref'],
      [{ type: 'string', anyOf: [{ const: 'a' }] }, 'uses anyOf'],
      [{ type: 'string', format: 'password' }, 'has unsupported format "password"'],
      [{ type: 'null' }, 'has unsupported type "null"'],
      [{ type: ['string', 'null'] }, 'has unsupported type an array'],
      ['string', 'must be a schema object'],
      [{ type: 'number', enum: [1, 2] }, 'uses enum, which a number property cannot have'],
      [{ type: 'boolean', minLength: 1 }, 'uses minLength, which a boolean property cannot have'],
      [{ type: 'string', minimum: 1 }, 'uses minimum, which a string property cannot have'],
      [{ type: 'string', minLength: -1 }, 'minLength must be a non-negative integer'],
      [{ type: 'string', minLength: 5, maxLength: 2 }, 'minLength exceeds maxLength'],
      [{ type: 'number', minimum: 'zero' }, 'minimum must be a finite number'],
      [{ type: 'integer', minimum: 10, maximum: 1 }, 'minimum exceeds maximum'],
      [{ type: 'array', items: { type: 'string', enum: ['a'] }, minItems: 1.5 }, 'minItems must be a non-negative'],
      [{ type: 'string', enum: [] }, 'enum must be a non-empty array of strings'],
      [{ type: 'string', enum: ['a', 1] }, 'enum must be a non-empty array of strings'],
      [{ type: 'string', enum: ['a', 'b'], enumNames: ['A'] }, 'enumNames must name every enum value'],
      [{ type: 'string', enumNames: ['A'] }, 'has enumNames without enum'],
      [{ type: 'string', enum: ['a'], oneOf: [{ const: 'a', title: 'A' }] }, 'has both enum and oneOf'],
      [{ type: 'string', oneOf: [{ const: 'a' }] }, 'oneOf[0] must be an object with string const and title'],
      [{ type: 'array', items: { anyOf: [] } }, 'items.anyOf must be a non-empty array'],
      [{ type: 'string', title: 3 }, 'title must be a string'],
      [{ type: 'boolean', default: 'yes' }, 'has a default that must be a boolean'],
      [{ type: 'string', enum: ['a', 'b'], default: 'c' }, 'has a default that must be one of "a", "b"'],
      [{ type: 'integer', minimum: 5, default: 1 }, 'has a default that must be at least 5'],
      [{ type: 'string', format: 'email', default: 'nope' }, 'has a default that must be an email address'],
      [{ type: 'array', items: { type: 'string', enum: ['a'] }, default: ['z'] }, 'has a default that contains "z"'],
    ];
    for (const [property, fragment] of cases)
      expectInvalidParams(
        () => parseElicitParams(form({ ok: { type: 'string' }, bad: property }), FORM),
        'requestedSchema property "bad"',
        fragment,
      );
  });

  it('refuses required entries that name no property', () => {
    expectInvalidParams(
      () => parseElicitParams(form({ name: { type: 'string' } }, { required: ['name', 'email'] }), FORM),
      'requestedSchema.required names "email", which is not a property',
    );
    expectInvalidParams(
      () => parseElicitParams(form({ name: { type: 'string' } }, { required: 'name' }), FORM),
      'requestedSchema.required must be an array',
    );
    expect(specAccepts('ElicitRequestFormParams', form({}, { required: 'name' }))).toBe(false);
  });
});

describe('applyDefaults', () => {
  const schema = allKinds().requestedSchema;

  it('fills the default of every primitive kind the user left out', () => {
    expect(applyDefaults(schema, undefined)).toEqual({
      name: 'Ann',
      email: 'user@example.com',
      age: 30,
      ratio: 0.5,
      subscribe: false,
      color: 'Red',
      hex: '#FF0000',
      legacy: 'm',
      tags: ['a'],
      hexes: ['#00FF00'],
    });
  });

  it('keeps what the user gave, including falsy values, and changes neither argument', () => {
    const content = Object.freeze({ name: 'Bo', subscribe: true, ratio: 0, tags: [] as string[] });
    const filled = applyDefaults(schema, content);
    expect(filled).toMatchObject({ name: 'Bo', subscribe: true, ratio: 0, tags: [], age: 30 });
    expect(filled).not.toBe(content);
    expect(Object.keys(content)).toEqual(['name', 'subscribe', 'ratio', 'tags']);
    expect(filled.hexes).not.toBe(schema.properties.hexes?.default);
  });

  it('fills nothing for properties without a default', () => {
    const plain: RequestedSchema = { type: 'object', properties: { note: { type: 'string' } } };
    expect(applyDefaults(plain, undefined)).toEqual({});
    expect(applyDefaults(plain, { note: 'x' })).toEqual({ note: 'x' });
  });

  it('keeps a property named __proto__ a plain key', () => {
    const odd = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string","default":"d"}}}');
    const filled = applyDefaults(odd, undefined);
    expect(Object.getPrototypeOf(filled)).toBe(Object.prototype);
    expect(Object.hasOwn(filled, '__proto__')).toBe(true);
  });
});

describe('checkElicitResult', () => {
  const params = allKinds();
  const accept = (content: Record<string, unknown>) => ({
    action: 'accept',
    content: { name: 'Ann', age: 30, ...content },
  });
  const url = parseElicitParams(urlParams('https://mcp.example.com/connect'), URL_ONLY);

  it('accepts a complete valid form answer, which the official schema accepts too', () => {
    const answer = accept({
      email: 'octocat@github.com',
      homepage: 'https://github.com/octocat',
      birthday: '2024-02-29',
      meeting: '2025-11-25T10:30:00.5+01:00',
      ratio: 1,
      subscribe: true,
      color: 'Blue',
      hex: '#00FF00',
      legacy: 'l',
      tags: ['a', 'c'],
      hexes: ['#FF0000', '#00FF00'],
    });
    expect(specAccepts('ElicitResult', answer)).toBe(true);
    expect(checkElicitResult(answer, params)).toBe(answer);
    expect(checkElicitResult(accept({}), params)).toEqual(accept({}));
  });

  it('agrees with JSON Schema validation of the requested schema itself', () => {
    const validate = compileWithAjv(params.requestedSchema);
    const samples: Record<string, unknown>[] = [
      { email: 'a@b' },
      { email: 'not an email' },
      { homepage: 'urn:isbn:0451450523' },
      { homepage: 'example.com' },
      { birthday: '2023-02-29' },
      { birthday: '2023-13-01' },
      { meeting: '2025-01-01T24:00:00Z' },
      { meeting: '2025-01-01T10:00:00' },
      { meeting: '2025-01-01 10:00:00Z' },
      { meeting: '2016-12-31T23:59:60Z' },
      { meeting: '2017-01-01T00:59:60+01:00' },
      { meeting: '2016-12-31T10:59:60Z' },
      { meeting: '2025-01-01T10:00:00+25:00' },
      { age: 17 },
      { age: 30.5 },
      { ratio: 1.01 },
      { name: 'A' },
      { name: 'Ann-Marie' },
      { name: '😀😀' },
      { color: 'red' },
      { hex: 'Red' },
      { tags: [] },
      { tags: ['a', 'b', 'c'] },
      { tags: ['d'] },
      { hexes: ['#0000FF'] },
      { subscribe: 'true' },
    ];
    for (const sample of samples) {
      const answer = accept(sample);
      let ours = true;
      try {
        checkElicitResult(answer, params);
      } catch {
        ours = false;
      }
      expect(ours, JSON.stringify(sample)).toBe(validate(answer.content));
    }
  });

  it('accepts decline and cancel without content, and refuses them with content', () => {
    for (const action of ['decline', 'cancel']) {
      expect(specAccepts('ElicitResult', { action })).toBe(true);
      expect(checkElicitResult({ action }, params)).toEqual({ action });
      expectTypeError(
        () => checkElicitResult({ action, content: {} }, params),
        `a "${action}" result must not carry content`,
      );
    }
  });

  it('accepts a URL-mode answer without content, and refuses content', () => {
    for (const action of ['accept', 'decline', 'cancel'])
      expect(checkElicitResult({ action }, url)).toEqual({ action });
    expectTypeError(
      () => checkElicitResult({ action: 'accept', content: { token: 'x' } }, url),
      'a URL-mode result must not carry content',
    );
  });

  it('refuses an unknown action or a non-object answer', () => {
    expect(specAccepts('ElicitResult', { action: 'ok' })).toBe(false);
    expectTypeError(() => checkElicitResult({ action: 'ok' }, params), 'elicitation/create result', 'action must be');
    expectTypeError(() => checkElicitResult(null, params), 'the handler must return an object');
  });

  it('needs content for an accepted form', () => {
    expectTypeError(() => checkElicitResult({ action: 'accept' }, params), 'an accepted form needs a content object');
    expectTypeError(() => checkElicitResult({ action: 'accept', content: [] }, params), 'needs a content object');
  });

  it('names a missing required field and a field the schema did not ask for', () => {
    expectTypeError(
      () => checkElicitResult({ action: 'accept', content: { name: 'Ann' } }, params),
      'content.age is required',
    );
    expectTypeError(
      () => checkElicitResult(accept({ password: 'hunter2' }), params),
      'content.password is not a property',
    );
  });

  it('names the field whose value is wrong', () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ name: 7 }, 'content.name must be a string, got 7'],
      [{ name: 'A' }, 'content.name must be at least 2 characters long'],
      [{ name: 'Annabel' }, 'content.name must be at most 5 characters long'],
      [{ email: 'octocat' }, 'content.email must be an email address'],
      [{ homepage: 'github.com/octocat' }, 'content.homepage must be an absolute URI'],
      [{ birthday: '2023-02-29' }, 'content.birthday must be a date'],
      [{ birthday: '29/02/2024' }, 'content.birthday must be a date'],
      [{ meeting: '2025-11-25T10:30:00' }, 'content.meeting must be a date-time'],
      [{ meeting: '2025-11-25T25:00:00Z' }, 'content.meeting must be a date-time'],
      [{ age: '30' }, 'content.age must be a number'],
      [{ age: 30.5 }, 'content.age must be an integer'],
      [{ age: 17 }, 'content.age must be at least 18'],
      [{ age: 131 }, 'content.age must be at most 130'],
      [{ ratio: Number.NaN }, 'content.ratio must be a number, got NaN'],
      [{ subscribe: 'yes' }, 'content.subscribe must be a boolean'],
      [{ color: 'Purple' }, 'content.color must be one of "Red", "Green", "Blue"'],
      [{ hex: 'Red' }, 'content.hex must be one of "#FF0000", "#00FF00"'],
      [{ legacy: 'Small' }, 'content.legacy must be one of "s", "m", "l"'],
      [{ tags: 'a' }, 'content.tags must be an array of strings'],
      [{ tags: [] }, 'content.tags must have at least 1 items'],
      [{ tags: ['a', 'b', 'c'] }, 'content.tags must have at most 2 items'],
      [{ tags: ['z'] }, 'content.tags contains "z", which is not one of "a", "b", "c"'],
      [{ tags: ['a', 'a'] }, 'content.tags contains "a" more than once'],
      [{ hexes: ['#0000FF'] }, 'content.hexes contains "#0000FF"'],
      [{ name: null }, 'content.name must be a string, got null'],
    ];
    for (const [content, fragment] of cases)
      expectTypeError(() => checkElicitResult(accept(content), params), fragment);
  });

  it('counts string length in code points, as JSON Schema does', () => {
    expect(checkElicitResult(accept({ name: '😀😀' }), params)).toBeDefined();
    expectTypeError(() => checkElicitResult(accept({ name: '😀' }), params), 'at least 2 characters');
  });
});

describe('URL elicitation required (-32042)', () => {
  const elicitation: ElicitUrlParams = {
    mode: 'url',
    elicitationId: '550e8400-e29b-41d4-a716-446655440000',
    url: 'https://mcp.example.com/connect?elicitationId=550e8400-e29b-41d4-a716-446655440000',
    message: 'Authorization is required to access your Example Co files.',
  };

  it('builds data that the official error schema accepts and reads it back', () => {
    const data = urlElicitationRequiredData([elicitation]);
    expect(data).toEqual({ elicitations: [elicitation] });
    const error = new McpError(ErrorCode.UrlElicitationRequired, 'This request requires more information.', data);
    expect(specAccepts('URLElicitationRequiredError', { jsonrpc: '2.0', id: 2, error: error.toJSON() })).toBe(true);
    expect(readUrlElicitations(error)).toEqual([elicitation]);
  });

  it('refuses to build data from no or invalid elicitations', () => {
    expectTypeError(() => urlElicitationRequiredData([]), 'at least one elicitation');
    expectTypeError(
      () => urlElicitationRequiredData([elicitation, { ...elicitation, url: 'javascript:alert(1)' }]),
      'elicitations[1].url',
      'must use http or https',
    );
    expectTypeError(
      () => urlElicitationRequiredData([{ ...elicitation, elicitationId: '' }]),
      'elicitations[0].elicitationId',
    );
    expectTypeError(() => urlElicitationRequiredData([null as never]), 'elicitations[0] must be an object');
  });

  it('reads nothing from other errors or malformed data', () => {
    const error = (data: unknown, code: number = ErrorCode.UrlElicitationRequired) => new McpError(code, 'm', data);
    expect(readUrlElicitations(new Error('x'))).toBeUndefined();
    expect(readUrlElicitations({ code: -32042, data: { elicitations: [elicitation] } })).toBeUndefined();
    expect(readUrlElicitations(error({ elicitations: [elicitation] }, ErrorCode.InvalidParams))).toBeUndefined();
    expect(readUrlElicitations(error(undefined))).toBeUndefined();
    expect(readUrlElicitations(error({ elicitations: [] }))).toBeUndefined();
    expect(readUrlElicitations(error({ elicitations: elicitation }))).toBeUndefined();
    expect(readUrlElicitations(error({ elicitations: [{ ...elicitation, mode: undefined }] }))).toBeUndefined();
    expect(
      readUrlElicitations(error({ elicitations: [elicitation, { ...elicitation, url: 'data:,x' }] })),
    ).toBeUndefined();
    expect(readUrlElicitations(error({ elicitations: [{ ...elicitation, message: 1 }] }))).toBeUndefined();
  });

  it('gives URL-mode params that checkElicitResult accepts', () => {
    const [first] = readUrlElicitations(new McpError(-32042, 'm', urlElicitationRequiredData([elicitation])))!;
    const asParams: ElicitParams = first!;
    expect(checkElicitResult({ action: 'accept' }, asParams)).toEqual({ action: 'accept' });
  });
});
