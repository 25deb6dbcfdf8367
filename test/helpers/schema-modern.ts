/**
 * Validates what a client emits in the stateless revision (2026-07-28) against its official JSON schema
 * (test/schemas/schema-2026-07-28.json, draft 2020-12): every request as a `JSONRPCRequest` and as the
 * `ClientRequest` union (which holds the per-method definitions, `_meta` envelope included), every
 * notification as a `JSONRPCNotification`. Handshake-era messages are left to `recordEmitted`.
 */
import type { ValidateFunction } from 'ajv';
import { createAjv, officialSchema } from './ajv';

const VERSION = '2026-07-28';

let validators:
  { request: ValidateFunction; clientRequest: ValidateFunction; notification: ValidateFunction } | undefined;

function modernValidators() {
  if (validators) return validators;
  const ajv = createAjv(VERSION);
  ajv.addSchema(officialSchema(VERSION), VERSION);
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
 * `recordEmitted`, which validates each message against its era's schema (kept under this name for the
 * tests written before `recordEmitted` knew the stateless revision).
 */
export { recordEmitted as recordEmittedEitherEra } from './schema';
