/**
 * Marks the ES-only dependencies' imports in the CommonJS declarations (`dist/**\/*.d.cts`) as type-only ES
 * imports: `import type { JWTVerifyGetKey } from 'jose' with { 'resolution-mode': 'import' }`. A `.d.cts` is read
 * as CommonJS, and under `module: node16` a plain import of an ES-only package there is TS1479 (TS1541 for
 * `import type` without the attribute). Declarations import only types, so nothing else changes.
 *
 * `npm run build` runs it after tsup; test/package/published-types.test.ts runs it on its own build.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { esmOnlyDependencies } from '../tsup.config';

const ATTRIBUTES = `{ 'resolution-mode': 'import' }`;
const packages = esmOnlyDependencies.map((name) => name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|');
/** `import … from 'jose';` and `export … from 'jose';` (and subpaths), not yet type-only. */
const STATEMENT = new RegExp(`^(import|export) (?!type )(.+) from '((?:${packages})(?:/[^']*)?)';$`, 'gm');
/** `import("jose")` in a type position. */
const IMPORT_TYPE = new RegExp(`import\\("((?:${packages})(?:/[^"]*)?)"\\)`, 'g');

/** One declaration file's text, with its imports of the ES-only dependencies marked. */
export function markEsmImports(source: string): string {
  return source
    .replace(STATEMENT, (_, keyword: string, clause: string, specifier: string) => {
      return `${keyword} type ${clause} from '${specifier}' with ${ATTRIBUTES};`;
    })
    .replace(IMPORT_TYPE, (_, specifier: string) => `import("${specifier}", { with: ${ATTRIBUTES} })`);
}

/** Rewrites every `.d.cts` under `dir` in place; returns the files it changed. */
export function markEsmImportsIn(dir: string): string[] {
  const changed: string[] = [];
  for (const file of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    if (!file.endsWith('.d.cts')) continue;
    const path = join(dir, file);
    const source = readFileSync(path, 'utf8');
    const marked = markEsmImports(source);
    if (marked === source) continue;
    writeFileSync(path, marked);
    changed.push(file);
  }
  return changed;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) markEsmImportsIn(process.argv[2] ?? 'dist');
