/**
 * What validating a tool's arguments costs (issue 25): one tool, `{ city: string (min 1), days: integer 1..14,
 * default 3 }`, with a zod 4 schema (ours through Standard Schema, SDK v1's zod path, SDK v2's Standard
 * Schema path) or the equivalent JSON Schema (ours, Ajv); bench/validation-entrants.ts builds them.
 * - `toolValidation`: in-process `tools/call` round trips, 1 in flight, timed call by call.
 * - `toolValidationStep`: the validation step alone, validations per second.
 *
 * Standalone: `node --expose-gc --import tsx bench/validation.ts [--quick]`. For bench/run.ts:
 * `VALIDATION_SCENARIOS` and `TOOL_VALIDATION` (a ComparisonTable).
 */
import { atLeast, entrantRow, type ComparisonTable } from './comparisons';
import type { BenchSettings } from './config';
import { measureLatency, measureThroughput } from './harness';
import type { Figures, Scenario } from './scenarios';
import { runWhenMain } from './standalone';
import { FORECAST_PAIRS, VALIDATION_STEPS, type OpenForecastPair, type ValidationStep } from './validation-entrants';

/** Validations per timed operation: keeps the harness's own await out of a sub-microsecond figure. */
const STEPS_PER_OPERATION = 100;

async function roundTrips(open: OpenForecastPair, settings: BenchSettings): Promise<Figures> {
  const pair = await open();
  try {
    const { perSecond, p50Us, p99Us } = await measureLatency(pair.call, settings.window);
    return { perSecond, p50Us, p99Us };
  } finally {
    await pair.close();
  }
}

/** The step back to back; awaited only where the path awaits it (a promise), as its server does. */
async function validationsPerSecond(step: ValidationStep, settings: BenchSettings): Promise<Figures> {
  const steps = async () => {
    for (let i = 0; i < STEPS_PER_OPERATION; i++) {
      const pending = step();
      if (pending instanceof Promise) await pending;
    }
  };
  return { perSecond: (await measureThroughput(steps, 1, settings.window)) * STEPS_PER_OPERATION };
}

function scenario<T>(
  id: string,
  entrants: Readonly<Record<string, T>>,
  measure: (entrant: T, settings: BenchSettings) => Promise<Figures>,
): Scenario {
  return {
    id,
    entrants: Object.entries(entrants).map(([name, entrant]) => ({
      name,
      measure: (settings) => measure(entrant, settings),
    })),
  };
}

export const VALIDATION_SCENARIOS: readonly Scenario[] = [
  scenario('toolValidation', FORECAST_PAIRS, roundTrips),
  scenario('toolValidationStep', VALIDATION_STEPS, validationsPerSecond),
];

const ROUND_TRIP_NOTE =
  "One tool, forecast, arguments { city: 'Lisbon', days: 5 } (every field given: Ajv fills no defaults). ours-zod = our Client (handshake era) on an unfrozen memory pair to one shared Server, the tool defined with z.object({ city: z.string().min(1), days: z.number().int().min(1).max(14).default(3) }) and validated through ~standard.validate; ours-json = the same with the JSON Schema zod's converter writes for it, validated by Ajv (compiled once); SDK v1 = @modelcontextprotocol/sdk Client + a new McpServer per pair (InMemoryTransport), registerTool with the same zod schema (validateToolInput: await safeParseAsync); SDK v2 = @modelcontextprotocol/client 2.4.0 Client + a new @modelcontextprotocol/server McpServer per pair, registerTool with the same zod schema as a Standard Schema. Before timing, each pair is checked to answer the call and to refuse { city: '', days: 20 }. Timed call by call: calls/s = calls / summed latency.";
const STEP_NOTE =
  "The validation step alone on the same arguments, 100 back to back per timed operation, 1 in flight: ours-zod = runStandardSchema (synchronous for a synchronous schema, not awaited, as our server runs it); ours-json = the Ajv check our server compiles for the JSON Schema; SDK v1 = await safeParseAsync(normalizeObjectSchema(schema)) from its zod-compat (zod/v4-mini), as McpServer.validateToolInput; SDK v2 = await schema['~standard'].validate(arguments), as its validateStandardSchema. validations/s = validations / wall time.";

const COSTS_NO_MORE = { target: atLeast(1) };

export const TOOL_VALIDATION: ComparisonTable = {
  title:
    "Tool input validation in process: a zod 4 schema through Standard Schema vs SDK v1's and SDK v2's zod paths (target: ours >= 1x SDK v1), and our JSON Schema (Ajv) path vs our zod path",
  subjectName: 'subject',
  baselineName: 'baseline',
  comparisons: [
    entrantRow(
      'toolValidation',
      'perSecond',
      'tools/call, zod, ours vs SDK v1',
      'calls/s',
      'higher',
      'ours-zod',
      'sdk-v1',
      {
        ...COSTS_NO_MORE,
        note: ROUND_TRIP_NOTE,
      },
    ),
    entrantRow('toolValidation', 'p50Us', 'tools/call p50, zod, ours vs SDK v1', 'us', 'lower', 'ours-zod', 'sdk-v1'),
    entrantRow(
      'toolValidation',
      'perSecond',
      'tools/call, zod, ours vs SDK v2',
      'calls/s',
      'higher',
      'ours-zod',
      'sdk-v2',
    ),
    entrantRow(
      'toolValidation',
      'perSecond',
      'tools/call, ours, JSON Schema vs zod',
      'calls/s',
      'higher',
      'ours-json',
      'ours-zod',
    ),
    entrantRow(
      'toolValidationStep',
      'perSecond',
      'validation step, zod, ours vs SDK v1',
      'validations/s',
      'higher',
      'ours-zod',
      'sdk-v1',
      {
        ...COSTS_NO_MORE,
        note: STEP_NOTE,
      },
    ),
    entrantRow(
      'toolValidationStep',
      'perSecond',
      'validation step, zod, ours vs SDK v2',
      'validations/s',
      'higher',
      'ours-zod',
      'sdk-v2',
    ),
    entrantRow(
      'toolValidationStep',
      'perSecond',
      'validation step, ours, JSON Schema vs zod',
      'validations/s',
      'higher',
      'ours-json',
      'ours-zod',
    ),
  ],
};

runWhenMain(import.meta.url, VALIDATION_SCENARIOS, [TOOL_VALIDATION]);
