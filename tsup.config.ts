import type { Options } from 'tsup';

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
  auth: 'lib/auth/index.ts',
  'auth/node': 'lib/auth/node/index.ts',
  'client/node': 'lib/client/node/index.ts',
  cli: 'lib/cli/main.ts',
  'trace/otel': 'lib/trace/otel.ts',
  'trace/file': 'lib/trace/sinks/file.ts',
};

export default {
  entry,
  format: ['esm', 'cjs'],
  // `@internal` members are public only for wiring between the package's own modules: keep them out of the
  // published declarations (test/package/published-types.test.ts checks the result in a strict consumer).
  dts: { compilerOptions: { stripInternal: true } },
  sourcemap: true,
  clean: true,
  target: 'node20',
  splitting: true,
} satisfies Options;
