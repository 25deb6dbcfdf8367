/**
 * The layering rule (issue 13), checked by test/package/layering.test.ts inside `npm test`, or by hand:
 *   npx depcruise lib machines transports --config .dependency-cruiser.cjs
 *
 * LAYERS is the layer order of docs/design.md, lowest first. A module may import from its
 * own layer or from a layer below it, never from one above. No import cycles at all: type-only imports
 * count (`tsPreCompilationDeps: true`), because a type cycle is still two modules that cannot be read,
 * tested or moved apart.
 */

/** Lowest first. `path` is a regular expression over paths relative to the cruise's base directory. */
const LAYERS = [
  { name: 'machines', path: '^machines/' },
  { name: 'jsonrpc', path: '^lib/jsonrpc/' },
  { name: 'protocol', path: '^lib/(protocol|validation)/' },
  { name: 'trace', path: '^lib/trace/' },
  { name: 'core', path: '^lib/core/' },
  { name: 'tasks', path: '^lib/tasks/' },
  { name: 'auth', path: '^lib/auth/' },
  { name: 'transports', path: '^transports/' },
  { name: 'server', path: '^lib/server/' },
  { name: 'client', path: '^lib/client/' },
  { name: 'compose', path: '^lib/compose/' },
  { name: 'cli', path: '^lib/cli/' },
  { name: 'entry', path: '^lib/index\\.ts$' },
];

const anyOf = (paths) => paths.map((path) => `(${path})`).join('|');

/** One rule per layer that has layers above it: `<layer>-imports-upward`. */
const upwardRules = LAYERS.slice(0, -1).map((layer, index) => ({
  name: `${layer.name}-imports-upward`,
  comment: `${layer.name} may import only from itself and the layers below it: not ${LAYERS.slice(index + 1)
    .map((above) => above.name)
    .join(', ')}`,
  severity: 'error',
  from: { path: layer.path },
  to: { path: anyOf(LAYERS.slice(index + 1).map((above) => above.path)) },
}));

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import cycles, type-only imports included.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'machines-imports-only-xstate',
      comment: 'The machines are pure tables: they import each other and xstate, nothing else.',
      severity: 'error',
      from: { path: '^machines/' },
      to: { pathNot: '^machines/|(^|/)node_modules/xstate/' },
    },
    {
      name: 'not-in-a-layer',
      comment: 'Every source folder belongs to a layer: add a new one to LAYERS in .dependency-cruiser.cjs.',
      severity: 'error',
      from: { path: '^(lib|machines|transports)/', pathNot: anyOf(LAYERS.map((layer) => layer.path)) },
      to: {},
    },
    ...upwardRules,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'] },
  },
};
