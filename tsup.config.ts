import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    index: 'lib/index.ts',
    'transports/memory': 'transports/memory.ts',
    'transports/sdk-adapter': 'transports/sdk-adapter.ts',
  },
  format: ['esm', 'cjs'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
  splitting: true,
});
