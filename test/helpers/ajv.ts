/**
 * The one Ajv set-up of the tests: the dialect each official schema is written in (2020-12 for 2025-11-25,
 * draft-07 before), formats on, every error collected, unknown keywords tolerated.
 */
import { readFileSync } from 'node:fs';
import Ajv from 'ajv';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { ProtocolVersion } from '../../lib/protocol/versions';

/** An Ajv for `version`'s schema dialect (any JSON Schema may be compiled with it too). */
export function createAjv(version: ProtocolVersion = '2025-11-25'): Ajv {
  const ajv =
    version === '2025-11-25'
      ? new Ajv2020({ strict: false, allErrors: true })
      : new Ajv({ strict: false, allErrors: true });
  addFormats(ajv as never);
  return ajv as Ajv;
}

/** The official schema of `version` (copied into test/schemas from ../shared/spec/schemas), freshly parsed. */
export function officialSchema(version: ProtocolVersion): any {
  return JSON.parse(readFileSync(new URL(`../schemas/schema-${version}.json`, import.meta.url), 'utf8'));
}

/** Where `version`'s schema keeps its definitions: `$defs` from 2025-11-25, `definitions` before. */
export const definitionsSection = (version: ProtocolVersion): '$defs' | 'definitions' =>
  version === '2025-11-25' ? '$defs' : 'definitions';
