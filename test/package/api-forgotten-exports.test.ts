/**
 * Every entry exports what its public signatures name (as types where a user only needs the type), and
 * members only the package itself calls are `@internal`: so no committed API report carries an
 * `ae-forgotten-export` warning, and each subpath stands alone. test/package/api-report.test.ts checks that
 * the committed reports are the current ones; this test reads them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { API_DIR } from '../../scripts/api-report';

const FORGOTTEN = /\(ae-forgotten-export\) The symbol "([^"]+)"/g;

function forgottenExports(report: string): string[] {
  const text = readFileSync(join(API_DIR, report), 'utf8');
  return [...new Set([...text.matchAll(FORGOTTEN)].map((match) => match[1]!))].sort();
}

const reports = readdirSync(API_DIR).filter((file) => file.endsWith('.api.md'));

describe('the API reports in api/', () => {
  it('are read here (one per entry)', () => {
    expect(reports.length).toBeGreaterThan(10);
  });

  it.each(reports)('%s names no type its entry leaves unexported', (report) => {
    expect(forgottenExports(report), `ae-forgotten-export warnings in api/${report}`).toEqual([]);
  });
});
