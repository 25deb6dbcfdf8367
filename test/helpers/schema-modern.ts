/**
 * Validates what a client emits in the stateless revision (2026-07-28) against its official JSON schema
 * (test/schemas/schema-2026-07-28.json, draft 2020-12): every request as a `JSONRPCRequest` and as the
 * `ClientRequest` union (which holds the per-method definitions, `_meta` envelope included), every
 * notification as a `JSONRPCNotification`. Handshake-era messages are left to `recordEmitted`.
 */
import { readFileSync } from 'node:fs';
import type { ValidateFunction } from 'ajv';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { Connection } from '../../lib/core/connection';
import { SUPPORTED_PROTOCOL_VERSIONS, type ProtocolVersion } from '../../lib/protocol/versions';
import { problemsOf } from './schema';

/** The handshake revision a legacy message is checked against (as `recordEmitted` picks it). */
function legacyVersionOf(connection: Connection, message: Record<string, any>): ProtocolVersion {
  const negotiated = connection.protocolVersion as ProtocolVersion | undefined;
  if (negotiated) return negotiated;
  const requested = message.params?.protocolVersion;
  return (SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(requested) ? requested : '2025-11-25';
}

const VERSION = '2026-07-28';

let validators:
  { request: ValidateFunction; clientRequest: ValidateFunction; notification: ValidateFunction } | undefined;

function modernValidators() {
  if (validators) return validators;
  const schema = JSON.parse(readFileSync(new URL(`../schemas/schema-${VERSION}.json`, import.meta.url), 'utf8'));
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv as never);
  ajv.addSchema(schema, VERSION);
  const get = (name: string) => {
    const validate = ajv.getSchema(`${VERSION}#/$defs/${name}`);
    if (!validate) throw new Error(`Schema ${VERSION} has no definition ${name}`);
    return validate;
  };
  return (validators = {
    request: get('JSONRPCRequest'),
    clientRequest: get('ClientRequest'),
    notification: get('JSONRPCNotification'),
  });
}

/** The schema problems of one message a modern client sent (empty when it is valid). */
export function modernProblemsOf(message: Record<string, unknown>): string[] {
  const { request, clientRequest, notification } = modernValidators();
  const problems: string[] = [];
  const run = (name: string, validate: ValidateFunction, value: unknown) => {
    if (!validate(value)) problems.push(`${name}: ${JSON.stringify(validate.errors?.slice(0, 3))}`);
  };
  if ('id' in message) {
    run('JSONRPCRequest', request, message);
    run('ClientRequest', clientRequest, message);
  } else {
    run('JSONRPCNotification', notification, message);
  }
  return problems;
}

/**
 * Records what `connection` sends and validates each message against the schema of its era: the 2026-07-28
 * schema while the connection is `modern`, else the negotiated (or requested) handshake revision's, as
 * `recordEmitted` does. `assertValid()` at the end.
 */
export function recordEmittedEitherEra(connection: Connection): { readonly count: number; assertValid(): void } {
  const failures: string[] = [];
  let count = 0;
  connection.trace$.subscribe((event) => {
    if (event.direction !== 'out' || event.message === undefined || event.kind === 'ignored') return;
    const modern = connection.state === 'modern';
    const messages = Array.isArray(event.message) ? event.message : [event.message];
    for (const message of messages) {
      count++;
      const record = message as Record<string, any>;
      const problems = modern
        ? modernProblemsOf(record)
        : problemsOf(record, legacyVersionOf(connection, record), event.method);
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
