/**
 * Bundles the trace viewer (lib/trace/viewer/, browser TypeScript) with esbuild into one self-contained HTML
 * page. The build (tsup.config.ts) inlines the page into the command line's bundle, so the published package
 * carries it; run from sources, `trace view` calls this on the first use. `tsx scripts/build-viewer.ts <file>`
 * writes the empty page (no trace: it takes one by file input or drag and drop) to `<file>`.
 */
import { buildSync } from 'esbuild';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { VIEWER_CSS } from '../lib/trace/viewer/styles';
import { viewerPage } from '../lib/trace/viewer/page';

const ENTRY = fileURLToPath(new URL('../lib/trace/viewer/main.ts', import.meta.url));

/** The viewer page, without a trace. */
export function buildViewerPage(): string {
  const { outputFiles } = buildSync({
    entryPoints: [ENTRY],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'es2020',
    minify: true,
    legalComments: 'none',
    // `</script` in a string of the bundle would end the page's script element: esbuild escapes it.
    supported: { 'inline-script': false },
  });
  return viewerPage(outputFiles[0]!.text.trim(), VIEWER_CSS);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const out = process.argv[2];
  if (!out) throw new Error('usage: tsx scripts/build-viewer.ts <page.html>');
  writeFileSync(out, buildViewerPage());
}
