/**
 * The method table (lib/protocol/method-table.ts) against the official JSON schemas of every revision
 * (test/schemas, copies of ../shared/spec/schemas): each revision's requests and notifications, by sender,
 * are exactly the table's column for that revision; what 2026-07-28 dropped is marked removed or moved to
 * an extension; every gating capability exists in the revision's capability schema; the list changes and
 * the listen filter match the schema; every request has its result rule.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LIST_CHANGES, listChangeOf } from '../../lib/protocol/list-changes';
import {
  METHOD_TABLE,
  RESOURCE_SEARCH_EXTENSION,
  type MethodSpec,
  type Revision,
} from '../../lib/protocol/method-table';
import { declares, HANDSHAKE_METHODS, maySend, methodSpec, STATELESS_METHODS } from '../../lib/protocol/methods';
import { resultRules } from '../../lib/protocol/result-rules';
import { resultChecks } from '../../lib/protocol/results';
import { isAtLeast, SUPPORTED_PROTOCOL_VERSIONS, type ProtocolVersion } from '../../lib/protocol/versions';
import { RESOURCE_SEARCH_EXTENSION as SERVER_RESOURCE_SEARCH_EXTENSION } from '../../lib/server/definition';

const HANDSHAKE_REVISIONS = [...SUPPORTED_PROTOCOL_VERSIONS].reverse();
const STATELESS_REVISION = '2026-07-28';

/** What a revision's schema names, by message kind and sender. */
interface SchemaMessages {
  readonly clientRequests: string[];
  readonly serverRequests: string[];
  readonly clientNotifications: string[];
  readonly serverNotifications: string[];
  /** 2026-07-28: the requests a server sends inside an `input_required` result. */
  readonly inputRequests: string[];
  readonly definitions: Record<string, any>;
}

function schemaOf(revision: Revision): SchemaMessages {
  const schema = JSON.parse(readFileSync(new URL(`../schemas/schema-${revision}.json`, import.meta.url), 'utf8'));
  const definitions: Record<string, any> = schema.$defs ?? schema.definitions;
  // A union names its members; 2026-07-28's ClientNotification is a single notification, not a union.
  const methods = (name: string): string[] => {
    const definition = definitions[name];
    if (definition === undefined) return [];
    const constant = definition.properties?.method?.const;
    if (constant !== undefined) return [constant];
    return (definition.anyOf ?? definition.oneOf).flatMap((member: { $ref: string }) =>
      methods(member.$ref.split('/').pop()!),
    );
  };
  return {
    clientRequests: methods('ClientRequest').sort(),
    serverRequests: methods('ServerRequest').sort(),
    clientNotifications: methods('ClientNotification').sort(),
    serverNotifications: methods('ServerNotification').sort(),
    inputRequests: methods('InputRequest').sort(),
    definitions,
  };
}

type Column = 'handshake' | 'stateless';

/** The table's MCP methods (not our extensions) whose `column` exists at `revision` and passes `keep`. */
function tableMethods(column: Column, revision: Revision, keep: (spec: MethodSpec) => boolean): string[] {
  return METHOD_TABLE.filter((row) => {
    const spec = row[column];
    return spec !== undefined && !row.extension && isAtLeast(revision, spec.since) && keep(spec);
  })
    .map((row) => row.method)
    .sort();
}

const sentBy =
  (role: 'client' | 'server', kind: MethodSpec['kind'], input = false) =>
  (spec: MethodSpec) =>
    spec.kind === kind && maySend(spec, role) && (spec.inputRequest === true) === input;

describe.each(HANDSHAKE_REVISIONS)('the handshake-era column at %s', (revision) => {
  const schema = schemaOf(revision);
  const column = (role: 'client' | 'server', kind: MethodSpec['kind']) =>
    tableMethods('handshake', revision, sentBy(role, kind));

  it('has exactly the client requests of the schema', () => {
    expect(column('client', 'request')).toEqual(schema.clientRequests);
  });
  it('has exactly the server requests of the schema', () => {
    expect(column('server', 'request')).toEqual(schema.serverRequests);
  });
  it('has exactly the client notifications of the schema', () => {
    expect(column('client', 'notification')).toEqual(schema.clientNotifications);
  });
  it('has exactly the server notifications of the schema', () => {
    expect(column('server', 'notification')).toEqual(schema.serverNotifications);
  });
  it('names only capabilities the schema defines, on the side that declares them', () => {
    for (const [method, spec] of Object.entries(HANDSHAKE_METHODS.specs)) {
      if (!spec.capability || !isAtLeast(revision, spec.since)) continue;
      if (spec.capabilitySince && !isAtLeast(revision, spec.capabilitySince)) continue;
      expect(declaringSides(spec), method).toSatisfy((sides: string[]) =>
        sides.some((side) => capabilityDefined(schema, side, spec.capability!)),
      );
    }
  });
  it('has a result rule for every request but the experimental tasks ones (tasks are not implemented)', () => {
    const rules = resultRules(revision as ProtocolVersion);
    const missing = tableMethods('handshake', revision, (spec) => spec.kind === 'request').filter(
      (method) => rules[method] === undefined,
    );
    const tasks = revision === '2025-11-25' ? ['tasks/cancel', 'tasks/get', 'tasks/list', 'tasks/result'] : [];
    expect(missing).toEqual(tasks);
  });
});

describe('the stateless column (2026-07-28)', () => {
  const schema = schemaOf(STATELESS_REVISION);
  const column = (role: 'client' | 'server', kind: MethodSpec['kind'], input = false) =>
    tableMethods('stateless', STATELESS_REVISION, sentBy(role, kind, input));

  it('has exactly the client requests of the schema', () => {
    expect(column('client', 'request')).toEqual(schema.clientRequests);
    expect(Object.keys(STATELESS_METHODS.clientRequests).sort()).toEqual(schema.clientRequests);
  });
  it('has no server request: what a server asks for travels as an input request', () => {
    expect(schema.serverRequests).toEqual([]);
    expect(column('server', 'request')).toEqual([]);
    expect(column('server', 'request', true)).toEqual(schema.inputRequests);
  });
  it('has exactly the notifications of the schema, by sender', () => {
    expect(column('client', 'notification')).toEqual(schema.clientNotifications);
    expect(column('server', 'notification')).toEqual(schema.serverNotifications);
  });
  it('says what became of every method of 2025-11-25 it does not have: removed, or moved to an extension', () => {
    const latest = schemaOf('2025-11-25');
    const before = new Set([
      ...latest.clientRequests,
      ...latest.serverRequests,
      ...latest.clientNotifications,
      ...latest.serverNotifications,
    ]);
    const now = new Set([
      ...schema.clientRequests,
      ...schema.inputRequests,
      ...schema.clientNotifications,
      ...schema.serverNotifications,
    ]);
    for (const method of before) {
      const row = METHOD_TABLE.find((entry) => entry.method === method)!;
      if (now.has(method)) {
        expect(row.stateless, method).toBeDefined();
        expect(row.removed ?? row.movedTo, method).toBeUndefined();
      } else {
        expect(row.stateless, method).toBeUndefined();
        expect((row.removed !== undefined) !== (row.movedTo !== undefined), method).toBe(true);
      }
    }
    expect(Object.keys(STATELESS_METHODS.removed).sort()).toEqual(
      [
        'initialize',
        'logging/setLevel',
        'notifications/elicitation/complete',
        'notifications/initialized',
        'notifications/roots/list_changed',
        'ping',
        'resources/subscribe',
        'resources/unsubscribe',
        'tasks/list',
        'tasks/result',
      ].sort(),
    );
    for (const removal of Object.values(STATELESS_METHODS.removed)) {
      expect(removal.revision).toBe(STATELESS_REVISION);
      expect(removal.replacement).not.toBe('');
    }
  });
  it('names only capabilities the schema defines, on the side that declares them', () => {
    for (const [method, spec] of Object.entries(STATELESS_METHODS.specs)) {
      for (const path of spec.capability ? [spec.capability] : (spec.declaredByAny ?? [])) {
        expect(declaringSides(spec), method).toSatisfy((sides: string[]) =>
          sides.some((side) => capabilityDefined(schema, side, path)),
        );
      }
    }
  });
  it('lets exactly tools/call, prompts/get and resources/read answer input_required (schema InputRequiredResult)', () => {
    const allowed = Object.keys(STATELESS_METHODS.specs).filter(
      (method) => STATELESS_METHODS.specs[method]!.mayRequireInput,
    );
    expect(allowed.sort()).toEqual(['prompts/get', 'resources/read', 'tools/call']);
  });
  it('has a result check for every client request', () => {
    const checks = resultChecks(STATELESS_REVISION);
    const missing = Object.keys(STATELESS_METHODS.clientRequests).filter(
      (method) => method !== 'subscriptions/listen' && !checks.has(method),
    );
    expect(missing).toEqual([]);
  });
});

describe('the list changes', () => {
  it('are the list_changed notifications a server sends, in both eras', () => {
    for (const revision of [...HANDSHAKE_REVISIONS, STATELESS_REVISION] as Revision[]) {
      const reported = schemaOf(revision).serverNotifications.filter((method) => method.endsWith('/list_changed'));
      expect(reported.sort(), revision).toEqual(LIST_CHANGES.map((change) => change.method).sort());
    }
    for (const change of LIST_CHANGES) {
      expect(listChangeOf(change.method)).toBe(change);
      expect(methodSpec(change.method, 'handshake')).toMatchObject({
        listChange: change.list,
        capability: change.capability,
      });
      expect(methodSpec(change.method, 'stateless')).toMatchObject({
        listChange: change.list,
        capability: change.capability,
      });
    }
    expect(listChangeOf('notifications/roots/list_changed')).toBeUndefined();
    expect(listChangeOf('constructor')).toBeUndefined();
  });
  it('ask for them with the fields of the schema SubscriptionFilter', () => {
    const filter = Object.keys(schemaOf(STATELESS_REVISION).definitions.SubscriptionFilter.properties);
    expect([...LIST_CHANGES.map((change) => change.filterField), 'resourceSubscriptions'].sort()).toEqual(
      filter.sort(),
    );
  });
});

describe('the per-era lookups', () => {
  it('know no inherited names', () => {
    for (const era of [HANDSHAKE_METHODS, STATELESS_METHODS]) {
      for (const lookup of [era.specs, era.removed, era.clientRequests, era.extensions]) {
        expect(lookup.constructor).toBeUndefined();
        expect(Object.isFrozen(lookup)).toBe(true);
      }
    }
  });
  it('keep our extension out of the MCP columns, and declare it under experimental', () => {
    expect(RESOURCE_SEARCH_EXTENSION).toBe(SERVER_RESOURCE_SEARCH_EXTENSION);
    for (const era of [HANDSHAKE_METHODS, STATELESS_METHODS]) {
      expect(era.specs['resources/search']).toBeUndefined();
      const spec = era.extensions['resources/search']!;
      expect(declares(spec, { experimental: { [RESOURCE_SEARCH_EXTENSION]: {} } })).toBe(true);
      expect(declares(spec, { resources: {} })).toBe(false);
    }
  });
  it('declare subscriptions/listen when there is something to listen to', () => {
    const listen = STATELESS_METHODS.clientRequests['subscriptions/listen']!;
    expect(declares(listen, { tools: {} })).toBe(false);
    expect(declares(listen, { tools: { listChanged: true } })).toBe(true);
    expect(declares(listen, { resources: { subscribe: true } })).toBe(true);
    expect(declares(STATELESS_METHODS.clientRequests['server/discover']!, {})).toBe(true);
  });
});

/** Whose capabilities declare a method: a request's receiver, a notification's sender or receiver. */
function declaringSides(spec: MethodSpec): string[] {
  const receiver = spec.kind === 'request' || spec.capabilityOf === 'receiver';
  if (spec.direction === 'both') return ['ClientCapabilities', 'ServerCapabilities'];
  const toServer = spec.direction === 'toServer';
  return [toServer === receiver ? 'ServerCapabilities' : 'ClientCapabilities'];
}

/** Whether the schema's `side` capabilities define `path` (an object member at each step). */
function capabilityDefined(schema: SchemaMessages, side: string, path: readonly string[]): boolean {
  let node = schema.definitions[side];
  for (const key of path) {
    node = node?.properties?.[key];
    if (node?.$ref) node = schema.definitions[node.$ref.split('/').pop()];
  }
  return node !== undefined;
}
