/**
 * The contenders of the validation rows (bench/validation.ts): one `forecast` tool whose arguments are
 * `{ city: string (min 1), days: integer 1..14, default 3 }`, served
 * - by ours with a zod 4 schema (validated through Standard Schema) or the equivalent JSON Schema (Ajv);
 * - by SDK v1's `McpServer.registerTool` with the same zod schema (its own zod path: `await safeParseAsync`);
 * - by SDK v2's `McpServer.registerTool` (`@modelcontextprotocol/server` 2.4, validating any Standard Schema);
 * and the validation step alone of each of those paths.
 */
import { Client as SdkV2Client, InMemoryTransport as SdkV2MemoryTransport } from '@modelcontextprotocol/client';
import { Client as SdkV1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport as SdkV1MemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer as SdkV1Server } from '@modelcontextprotocol/sdk/server/mcp.js';
import { normalizeObjectSchema, safeParseAsync } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import { McpServer as SdkV2Server } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { Client } from '../lib/client/client';
import { defineServer } from '../lib/server/definition';
import { Server } from '../lib/server/server';
import { defineTool, type ToolDefinition } from '../lib/server/tools';
import { defaultValidator } from '../lib/validation/json-schema';
import { runStandardSchema } from '../lib/validation/standard-schema';
import { createMemoryPair } from '../transports/memory';
import { HANDSHAKE_ERA } from './config';
import type { Operation } from './harness';

const CLIENT_INFO = { name: 'bench-client', version: '1.0.0' };
const TOOL = 'forecast';

export const FORECAST_ZOD = z.object({
  city: z.string().min(1),
  days: z.number().int().min(1).max(14).default(3),
});

/** What zod's converter publishes for `FORECAST_ZOD` (input side), less `$schema`. */
export const FORECAST_JSON = {
  type: 'object',
  properties: {
    city: { type: 'string', minLength: 1 },
    days: { type: 'integer', minimum: 1, maximum: 14, default: 3 },
  },
  required: ['city'],
} as const;

/** Every field given, so the JSON Schema path (Ajv fills no defaults) does the same work as the zod paths. */
export const ARGUMENTS = { city: 'Lisbon', days: 5 };
const EXPECTED_TEXT = 'Lisbon: 5 days';
const INVALID_ARGUMENTS = { city: '', days: 20 };

/** Defined once, for every server (see bench/ours.ts on functions created in object literals under tsx). */
function forecast({ city, days }: { city: string; days?: number }) {
  return { content: [{ type: 'text' as const, text: `${city}: ${days} days` }] };
}

/** A connected pair: one `tools/call` of `forecast` with `ARGUMENTS`, and the way out. */
export interface ForecastPair {
  readonly call: Operation;
  close(): Promise<void>;
}

export type OpenForecastPair = () => Promise<ForecastPair>;

interface CallResult {
  readonly content?: readonly { readonly type: string; readonly text?: string }[];
  readonly isError?: boolean;
}

/**
 * Before a pair is timed: valid arguments get the expected text and invalid ones a refusal (an error result
 * or a rejection), so every entrant is shown to validate.
 */
async function checked(call: (args: Record<string, unknown>) => Promise<unknown>): Promise<Operation> {
  const answer = (await call(ARGUMENTS)) as CallResult;
  const text = answer.content?.[0]?.text;
  if (answer.isError || text !== EXPECTED_TEXT) throw new Error(`forecast answered ${JSON.stringify(answer)}`);
  const refusal = (await call(INVALID_ARGUMENTS).catch(() => ({ isError: true }))) as CallResult;
  if (!refusal.isError) throw new Error(`forecast accepted ${JSON.stringify(INVALID_ARGUMENTS)}`);
  return () => call(ARGUMENTS);
}

/**
 * Our `Client` (handshake era, like both SDKs) on an unfrozen memory pair to a connection of one `Server`
 * serving `tool`, built on first use and shared by every pair (our definitions are immutable).
 */
function ours(tool: ToolDefinition<any, any, any>): OpenForecastPair {
  let server: Server | undefined;
  return async () => {
    server ??= new Server(defineServer({ name: 'bench-switchboard', version: '1.0.0', tools: [tool] }));
    const [clientSide, serverSide] = createMemoryPair({ freeze: false });
    const connection = server.connect(serverSide);
    const client = await new Client(CLIENT_INFO, HANDSHAKE_ERA).connect(clientSide);
    return {
      call: await checked((args) => client.callTool(TOOL, args)),
      close: async () => {
        await client.close();
        await connection.closed;
      },
    };
  };
}

/** What an SDK entrant is built from: its `McpServer`, `Client` and linked in-memory transports. */
interface SdkKit {
  readonly Server: new (info: { name: string; version: string }) => {
    registerTool(name: string, config: object, handler: typeof forecast): unknown;
    connect(transport: unknown): Promise<void>;
    close(): Promise<void>;
  };
  readonly Client: new (info: typeof CLIENT_INFO) => {
    connect(transport: unknown): Promise<void>;
    callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
    close(): Promise<void>;
  };
  readonly MemoryTransport: { createLinkedPair(): [unknown, unknown] };
}

/**
 * A new SDK `McpServer` per pair (an SDK server takes one transport), `forecast` registered with the zod
 * schema (SDK v1 parses it with zod, SDK v2 through Standard Schema).
 */
function sdkEntrant(sdk: SdkKit, serverName: string): OpenForecastPair {
  return async () => {
    const server = new sdk.Server({ name: serverName, version: '1.0.0' });
    server.registerTool(TOOL, { inputSchema: FORECAST_ZOD }, forecast);
    const [clientSide, serverSide] = sdk.MemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new sdk.Client(CLIENT_INFO);
    await client.connect(clientSide);
    return {
      call: await checked((args) => client.callTool({ name: TOOL, arguments: args }) as never),
      close: async () => {
        await client.close();
        await server.close();
      },
    };
  };
}

const sdkV1 = sdkEntrant(
  { Server: SdkV1Server, Client: SdkV1Client, MemoryTransport: SdkV1MemoryTransport } as unknown as SdkKit,
  'bench-sdk',
);
const sdkV2 = sdkEntrant(
  { Server: SdkV2Server, Client: SdkV2Client, MemoryTransport: SdkV2MemoryTransport } as unknown as SdkKit,
  'bench-sdk-v2',
);

/** The round-trip entrants, by name. */
export const FORECAST_PAIRS: Readonly<Record<string, OpenForecastPair>> = {
  'ours-zod': ours(defineTool({ name: TOOL, inputSchema: FORECAST_ZOD, handler: forecast })),
  'ours-json': ours(defineTool({ name: TOOL, inputSchema: FORECAST_JSON, handler: forecast })),
  'sdk-v1': sdkV1,
  'sdk-v2': sdkV2,
};

/** Validates `ARGUMENTS` once, throwing if refused; a promise only where the path awaits. */
export type ValidationStep = () => unknown;

function refused(problems: unknown): never {
  throw new Error(`ARGUMENTS refused: ${JSON.stringify(problems)}`);
}

const ajvCheck = defaultValidator().compile(FORECAST_JSON);

/** The validation step of each path, as its server runs it on a call. */
export const VALIDATION_STEPS: Readonly<Record<string, ValidationStep>> = {
  // Synchronous for a synchronous schema: our server does not await it.
  'ours-zod': () => {
    const verdict = runStandardSchema(FORECAST_ZOD, ARGUMENTS);
    if ('then' in verdict || verdict.problems) refused(verdict);
  },
  'ours-json': () => {
    const problems = ajvCheck(ARGUMENTS);
    if (problems) refused(problems);
  },
  // As McpServer.validateToolInput runs it (zod-compat: zod/v4-mini's safeParseAsync for a zod 4 schema).
  'sdk-v1': async () => {
    const result = await safeParseAsync(normalizeObjectSchema(FORECAST_ZOD) ?? FORECAST_ZOD, ARGUMENTS);
    if (!result.success) refused(result.error);
  },
  // As SDK v2's validateStandardSchema awaits it.
  'sdk-v2': async () => {
    const result = await FORECAST_ZOD['~standard'].validate(ARGUMENTS);
    if (result.issues) refused(result.issues);
  },
};
