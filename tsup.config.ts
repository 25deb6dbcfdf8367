import type { Options } from 'tsup';
import { buildViewerPage } from './scripts/build-viewer';

/** The build's entry points: `dist/<key>.{js,cjs,d.ts,d.cts}`. Each subpath export of package.json names one. */
const entry: Record<string, string> = {
  index: 'lib/index.ts',
  protocol: 'lib/protocol/public.ts',
  'transports/memory': 'transports/memory.ts',
  'transports/sdk-adapter': 'transports/sdk-adapter.ts',
  'transports/websocket': 'transports/websocket.ts',
  'transports/stdio': 'transports/stdio.ts',
  'transports/framed': 'transports/framed.ts',
  'transports/message-port': 'transports/message-port.ts',
  'transports/http': 'transports/http/index.ts',
  'transports/fetch': 'transports/fetch.ts',
  auth: 'lib/auth/index.ts',
  'auth/node': 'lib/auth/node/index.ts',
  'client/node': 'lib/client/node/index.ts',
  cli: 'lib/cli/main.ts',
  'trace/otel': 'lib/trace/otel.ts',
  'trace/file': 'lib/trace/sinks/file.ts',
  'tasks/lmdb': 'lib/tasks/lmdb.ts',
};

/**
 * Runtime dependencies published as ES modules only. Node before 20.19 cannot `require()` them
 * (`ERR_REQUIRE_ESM`), so the CommonJS build bundles them (LICENSE carries their notices) and the ES build
 * imports them. Their types stay imports in the declarations; scripts/cjs-declarations.ts marks those of the
 * `.d.cts` files as ES imports (`resolution-mode`), which a CommonJS consumer may then read.
 */
export const esmOnlyDependencies = ['jose', 'oauth4webapi'];

/** The trace viewer page, built once per build. */
let viewerPage: string | undefined;

export default {
  entry,
  format: ['esm', 'cjs'],
  // `@internal` members are public only for wiring between the package's own modules: keep them out of the
  // published declarations (test/package/published-types.test.ts checks the result in a strict consumer).
  // The command line (`cli`, the bin) is run, never imported: it has no declarations.
  dts: {
    entry: Object.fromEntries(Object.entries(entry).filter(([name]) => name !== 'cli')),
    compilerOptions: { stripInternal: true },
  },
  // No source maps: the output is not minified, so a stack trace already points at readable code, and maps
  // without the sources (which the package does not ship) would point at files a user does not have.
  sourcemap: false,
  clean: true,
  target: 'node20',
  splitting: true,
  noExternal: esmOnlyDependencies,
  esbuildOptions(options, { format }) {
    // `trace view` writes the trace viewer page: built here (esbuild, a dev dependency) and inlined, so the
    // published package carries it (lib/cli/trace-view.ts bundles it from sources when run without a build).
    options.define = {
      ...options.define,
      __SWITCHBOARD_TRACE_VIEWER__: JSON.stringify((viewerPage ??= buildViewerPage())),
    };
    if (format === 'esm') options.external = [...(options.external ?? []), ...esmOnlyDependencies];
    // tsup turns the split CommonJS chunks into CommonJS with sucrase, which moves class fields into the
    // constructor after `super(…)` and breaks a constructor written `super(a), this.x = …` (jose's errors):
    // esbuild lowers the fields first, so sucrase finds none.
    if (format === 'cjs')
      options.supported = { ...options.supported, 'class-field': false, 'class-static-field': false };
  },
} satisfies Options;
