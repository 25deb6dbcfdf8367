/**
 * The one Ajv set-up of the tests: the dialect each official schema is written in (2020-12 from 2025-11-25,
 * the stateless 2026-07-28 included; draft-07 before), formats on, every error collected, unknown keywords
 * tolerated.
 */
import { readFileSync } from 'node:fs';
import Ajv from 'ajv';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { ModernProtocolVersion } from '../../lib/protocol/modern';
import type { ProtocolVersion } from '../../lib/protocol/versions';

/** A revision with an official schema in test/schemas: either era. */
export type SchemaVersion = ProtocolVersion | ModernProtocolVersion;

/** Whether `version`'s schema is written in JSON Schema 2020-12 (with `$defs`) rather than draft-07. */
const isDraft2020 = (version: SchemaVersion): boolean => version >= '2025-11-25';

/** An Ajv for `version`'s schema dialect (any JSON Schema may be compiled with it too). */
export function createAjv(version: SchemaVersion = '2025-11-25'): Ajv {
  const ajv = isDraft2020(version)
    ? new Ajv2020({ strict: false, allErrors: true })
    : new Ajv({ strict: false, allErrors: true });
  addFormats(ajv as never);
  return ajv as Ajv;
}

/** The official schema of `version` (copied into test/schemas from ../shared/spec/schemas), freshly parsed. */
export function officialSchema(version: SchemaVersion): any {
  return JSON.parse(readFileSync(new URL(`../schemas/schema-${version}.json`, import.meta.url), 'utf8'));
}

/** Where `version`'s schema keeps its definitions: `$defs` from 2025-11-25, `definitions` before. */
export const definitionsSection = (version: SchemaVersion): '$defs' | 'definitions' =>
  isDraft2020(version) ? '$defs' : 'definitions';
