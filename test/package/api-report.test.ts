/**
 * The committed API reports (`api/*.api.md`, one per package entry, written by API Extractor) are the public
 * surface as it is: regenerated here into a temporary folder, each must equal its committed copy. A change of
 * an entry's exports, or of a signature they reach, fails this test until `npm run api` rewrites the reports,
 * so the change is a visible diff in review.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_DIR, apiEntries, reportFile, writeApiReports } from '../../scripts/api-report';

// Declarations of every entry, then one API Extractor analysis: about 20 s alone on two cores, more when busy.
const GENERATE_TIMEOUT_MS = 180_000;

let fresh: string;

beforeAll(() => {
  fresh = mkdtempSync(join(tmpdir(), 'api-report-test-'));
  writeApiReports(fresh);
}, GENERATE_TIMEOUT_MS);

afterAll(() => rmSync(fresh, { recursive: true, force: true }));

describe('the API reports in api/', () => {
  it('are one per entry of package.json exports, and no more', () => {
    const committed = readdirSync(API_DIR).filter((file) => file.endsWith('.api.md'));
    expect(committed.sort(), 'run npm run api').toEqual(apiEntries().map(reportFile).sort());
  });

  it.each(apiEntries().map((entry) => [entry.subpath, reportFile(entry)]))(
    '%s: %s matches the entry (else run npm run api)',
    (_subpath, file) => {
      const committed = readFileSync(join(API_DIR, file), 'utf8');
      expect(readFileSync(join(fresh, file), 'utf8'), `api/${file} is out of date: run npm run api`).toBe(committed);
    },
  );
});
