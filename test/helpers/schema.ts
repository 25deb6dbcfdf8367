/**
 * Validates what the runtime emits against the official JSON schema of the negotiated revision
 * (copies in test/schemas, from ../shared/spec/schemas).
 */
import type { ValidateFunction } from 'ajv';
import type { Connection } from '../../lib/core/connection';
import type { TraceEvent } from '../../lib/trace/types';
import { SUPPORTED_PROTOCOL_VERSIONS } from '../../lib/protocol/versions';
import { createAjv, definitionsSection, officialSchema } from './ajv';
import { modernWireValidator } from './modern-wire';
import { modernProblemsOf } from './schema-modern';

type Version = (typeof SUPPORTED_PROTOCOL_VERSIONS)[number];

const REQUESTS: Record<string, [request: string, result: string]> = {
  initialize: ['InitializeRequest', 'InitializeResult'],
  ping: ['PingRequest', 'EmptyResult'],
  'tools/list': ['ListToolsRequest', 'ListToolsResult'],
  'tools/call': ['CallToolRequest', 'CallToolResult'],
  'resources/list': ['ListResourcesRequest', 'ListResourcesResult'],
  'resources/templates/list': ['ListResourceTemplatesRequest', 'ListResourceTemplatesResult'],
  'resources/read': ['ReadResourceRequest', 'ReadResourceResult'],
  'resources/subscribe': ['SubscribeRequest', 'EmptyResult'],
  'resources/unsubscribe': ['UnsubscribeRequest', 'EmptyResult'],
  'prompts/list': ['ListPromptsRequest', 'ListPromptsResult'],
  'prompts/get': ['GetPromptRequest', 'GetPromptResult'],
  'completion/complete': ['CompleteRequest', 'CompleteResult'],
  'logging/setLevel': ['SetLevelRequest', 'EmptyResult'],
  'sampling/createMessage': ['CreateMessageRequest', 'CreateMessageResult'],
  'roots/list': ['ListRootsRequest', 'ListRootsResult'],
  'elicitation/create': ['ElicitRequest', 'ElicitResult'],
  'tasks/get': ['GetTaskRequest', 'GetTaskResult'],
  'tasks/result': ['GetTaskPayloadRequest', 'GetTaskPayloadResult'],
  'tasks/list': ['ListTasksRequest', 'ListTasksResult'],
  'tasks/cancel': ['CancelTaskRequest', 'CancelTaskResult'],
};

const NOTIFICATIONS: Record<string, string> = {
  'notifications/initialized': 'InitializedNotification',
  'notifications/cancelled': 'CancelledNotification',
  'notifications/progress': 'ProgressNotification',
  'notifications/message': 'LoggingMessageNotification',
  'notifications/resources/list_changed': 'ResourceListChangedNotification',
  'notifications/resources/updated': 'ResourceUpdatedNotification',
  'notifications/prompts/list_changed': 'PromptListChangedNotification',
  'notifications/tools/list_changed': 'ToolListChangedNotification',
  'notifications/roots/list_changed': 'RootsListChangedNotification',
  'notifications/elicitation/complete': 'ElicitationCompleteNotification',
  'notifications/tasks/status': 'TaskStatusNotification',
};

/**
 * Types we shape per revision. The official schemas leave them open (no `additionalProperties: false`), so
 * a field a revision does not define would pass; here it fails, which checks the shaping on every message.
 */
const CLOSED_TYPES = [
  'Tool',
  'Resource',
  'ResourceTemplate',
  'Prompt',
  'PromptArgument',
  'TextContent',
  'ImageContent',
  'AudioContent',
  'EmbeddedResource',
  'ResourceLink',
  'TextResourceContents',
  'BlobResourceContents',
  'Annotations',
  'Implementation',
  'Root',
];

function closeTypes(definitions: Record<string, { properties?: object; additionalProperties?: boolean }>): void {
  for (const name of CLOSED_TYPES) {
    const definition = definitions[name];
    if (definition?.properties) definition.additionalProperties = false;
  }
}

/**
 * The generated JSON schemas type elicitation answers' numbers as `integer` where the normative
 * `schema.ts` says `number` (../shared/spec/CHECKLIST.md, section 12, item 4): a form may ask for a
 * `type: "number"` field, so a fractional answer is valid. We follow the normative source here.
 */
function allowFractionalElicitAnswers(definitions: Record<string, any>): void {
  const values = definitions.ElicitResult?.properties?.content?.additionalProperties;
  if (!values) return;
  const scalar = values.anyOf ? values.anyOf.find((option: any) => Array.isArray(option.type)) : values;
  scalar.type = scalar.type.map((type: string) => (type === 'integer' ? 'number' : type));
}

interface Revision {
  validator(definition: string): ValidateFunction;
}

const revisions = new Map<Version, Revision>();

function revision(version: Version): Revision {
  let known = revisions.get(version);
  if (known) return known;
  const schema = officialSchema(version);
  const section = definitionsSection(version);
  const ajv = createAjv(version);
  closeTypes(schema[section]);
  allowFractionalElicitAnswers(schema[section]);
  ajv.addSchema(schema, version);
  const cache = new Map<string, ValidateFunction>();
  known = {
    validator(definition) {
      let validate = cache.get(definition);
      if (!validate) {
        validate = ajv.getSchema(`${version}#/${section}/${definition}`);
        if (!validate) throw new Error(`Schema ${version} has no definition ${definition}`);
        cache.set(definition, validate);
      }
      return validate;
    },
  };
  revisions.set(version, known);
  return known;
}

/** Why `value` is not a `definition` of revision `version`'s schema, or undefined when it is one. */
export function schemaProblem(version: Version, definition: string, value: unknown): string | undefined {
  let validate: ValidateFunction;
  try {
    validate = revision(version).validator(definition);
  } catch {
    return `${definition} does not exist in ${version}: this message has no place in that revision`;
  }
  if (validate(value)) return undefined;
  return `${definition} (${version}): ${JSON.stringify(validate.errors?.slice(0, 5))}`;
}

/**
 * Problems of one emitted message, or an empty list. `method` names the request a response answers.
 * An error response without an id is checked against 2025-11-25 whatever was negotiated: no earlier
 * revision can express it (they require an id and forbid null), and we never invent one.
 */
export function problemsOf(message: Record<string, any>, version: Version, method: string | undefined): string[] {
  const problems: (string | undefined)[] = [];
  const modern = version === '2025-11-25';
  if ('method' in message) {
    if ('id' in message) {
      problems.push(schemaProblem(version, 'JSONRPCRequest', message));
      const names = REQUESTS[message.method];
      if (names) problems.push(schemaProblem(version, names[0], message));
    } else {
      problems.push(schemaProblem(version, 'JSONRPCNotification', message));
      const name = NOTIFICATIONS[message.method];
      if (name) problems.push(schemaProblem(version, name, message));
    }
  } else if ('result' in message) {
    problems.push(schemaProblem(version, modern ? 'JSONRPCResultResponse' : 'JSONRPCResponse', message));
    const names = method ? REQUESTS[method] : undefined;
    // A task-augmented request is answered with the task (2025-11-25; not in the schema's result unions).
    const created = version === '2025-11-25' && 'task' in message.result;
    if (names) problems.push(schemaProblem(version, created ? 'CreateTaskResult' : names[1], message.result));
  } else if ('error' in message) {
    if (message.id === undefined) problems.push(schemaProblem('2025-11-25', 'JSONRPCErrorResponse', message));
    else problems.push(schemaProblem(version, modern ? 'JSONRPCErrorResponse' : 'JSONRPCError', message));
  } else {
    problems.push('not a JSON-RPC message: ' + JSON.stringify(message));
  }
  return problems.filter((problem): problem is string => problem !== undefined);
}

function versionFor(connection: Connection, event: TraceEvent): Version {
  const negotiated = connection.protocolVersion as Version | undefined;
  if (negotiated) return negotiated;
  const requested = (event.message as any)?.params?.protocolVersion;
  return (SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(requested) ? requested : '2025-11-25';
}

/**
 * Records every message `connection` sends and validates each against the schema of the revision in
 * force when it was sent: the 2026-07-28 schema while the connection is `modern` (a client's requests as
 * `ClientRequest`, a server's answers by their method's result type), else the negotiated (or requested)
 * handshake revision's. Call `assertValid()` at the end of the test; `count` shows it saw traffic.
 */
export function recordEmitted(connection: Connection): { readonly count: number; assertValid(): void } {
  const failures: string[] = [];
  let count = 0;
  let modernServerMessages: ReturnType<typeof modernWireValidator> | undefined;
  const problemsOfEvent = (message: Record<string, any>, event: TraceEvent): string[] => {
    if (connection.state !== 'modern') return problemsOf(message, versionFor(connection, event), event.method);
    if (connection.role === 'client') return modernProblemsOf(message);
    return (modernServerMessages ??= modernWireValidator()).check(event.method ?? '', message as never);
  };
  connection.trace$.subscribe((event) => {
    if (event.direction !== 'out' || event.message === undefined || event.kind === 'ignored') return;
    const messages = Array.isArray(event.message) ? event.message : [event.message];
    for (const message of messages) {
      count++;
      const problems = problemsOfEvent(message as Record<string, any>, event);
      if (problems.length) failures.push(`${JSON.stringify(message).slice(0, 300)}\n  ${problems.join('\n  ')}`);
    }
  });
  return {
    get count() {
      return count;
    },
    assertValid() {
      if (failures.length) throw new Error(`Emitted messages failed schema validation:\n${failures.join('\n')}`);
    },
  };
}
