/**
 * The client the official conformance suite spawns (`conformance client --command "<this>"`): our `Client`
 * over our `StreamableHttpClientTransport`. The suite appends its mock server's URL as the last argument
 * and names the scenario in `MCP_CONFORMANCE_SCENARIO`; what each scenario does is in `SCENARIOS` below
 * (the suite itself checks what reached its server). Every message the client sends is also checked against
 * the official schema of its era (2026-07-28 once the probe found the server modern, else the negotiated
 * handshake revision). Exit 0 on success; otherwise a message on stderr and exit 1
 * (2 for a usage error).
 *
 * By hand: `npm run conformance-client -- <url>`; without a scenario it connects, lists the tools and
 * prints their names.
 */
import { Client } from '../../lib/client/client';
import type { JsonObject } from '../../lib/jsonrpc/types';
import { isPlainObject } from '../../lib/jsonrpc/classify';
import { VERSION } from '../../lib/cli/version';
import { StreamableHttpClientTransport } from '../../transports/http/streamable-client';
import { OAuthClient } from '../../lib/auth/client/oauth-client';
import type { MachineGrant } from '../../lib/auth/client/machine-grants';
import { headlessInteraction } from '../../lib/auth/client/authorization-code';
import { recordEmittedEitherEra } from '../helpers/schema-modern';

/** Below the suite's own 30 s limit, so a stuck request is reported by us rather than killed by it. */
const REQUEST_TIMEOUT_MS = 20_000;

type Scenario = (client: Client) => Promise<void>;

/** What the suite tells a scenario in `MCP_CONFORMANCE_CONTEXT` (the calls to make, for some scenarios). */
interface ScenarioContext {
  readonly toolCalls?: readonly { readonly name: string; readonly arguments?: JsonObject }[];
}

function scenarioContext(): ScenarioContext {
  const text = process.env.MCP_CONFORMANCE_CONTEXT;
  return text ? (JSON.parse(text) as ScenarioContext) : {};
}

/** A tool's own failure is a result, not a rejection: for the scenario it is a failure all the same. */
async function callTool(client: Client, name: string, args: JsonObject = {}): Promise<void> {
  const result = await client.callTool(name, args);
  if (result.isError) throw new Error(`Tool ${name} failed: ${JSON.stringify(result.content)}`);
}

async function listToolNames(client: Client): Promise<string[]> {
  return (await client.listTools()).map((tool) => tool.name);
}

/** Calls every tool the client keeps in its list (a tool with invalid `x-mcp-header` annotations is dropped). */
async function callEveryTool(client: Client): Promise<void> {
  for (const name of await listToolNames(client)) await callTool(client, name);
}

/**
 * One request of every method that carries standard headers (`Mcp-Method`, and `Mcp-Name` for the named
 * ones): the suite skips the methods it never saw. The results are not the point: a tool's error is fine.
 */
async function everyStandardMethod(client: Client): Promise<void> {
  const [tool] = await client.listTools();
  if (tool) await client.callTool(tool.name, {});
  const [resource] = await client.listResources();
  if (resource) await client.readResource(resource.uri);
  const [prompt] = await client.listPrompts();
  if (prompt) await client.getPrompt(prompt.name, {});
}

const SCENARIOS: Readonly<Record<string, Scenario>> = {
  // The handshake is the whole scenario.
  initialize: async () => undefined,
  tools_call: async (client) => {
    const names = await listToolNames(client);
    if (!names.includes('add_numbers')) throw new Error(`The server offers no add_numbers tool (${names.join(', ')})`);
    await callTool(client, 'add_numbers', { a: 5, b: 3 });
  },
  // The tool elicits a form whose fields all have defaults; our handler accepts it empty and the client
  // library fills in the defaults (`elicitation.applyDefaults`, on by default).
  'elicitation-sep1034-client-defaults': async (client) => {
    await callTool(client, 'test_client_elicitation_defaults');
  },
  // The server closes the call's SSE stream after a priming event with `retry: 500`; the transport resumes
  // it with GET and Last-Event-ID after that delay, and the result arrives on the new stream.
  'sse-retry': async (client) => {
    await callTool(client, 'test_reconnection');
  },
  // 2026-07-28: the first request (the era probe) is refused with -32022 naming 2026-07-28 and probed again;
  // every request carries the envelope and the version header. The mock declares no capability, so the
  // request after the probe is a ping (server/discover in this revision).
  'request-metadata': async (client) => {
    await client.ping();
  },
  'http-standard-headers': everyStandardMethod,
  // The context names the calls (and their arguments, chosen to exercise the header encodings).
  'http-custom-headers': async (client) => {
    await client.listTools();
    for (const call of scenarioContext().toolCalls ?? []) await client.callTool(call.name, call.arguments ?? {});
  },
  // The tools with invalid annotations are left out of the list, so only valid_tool is called.
  'http-invalid-tool-headers': callEveryTool,
  // The tool list carries a schema with a network $ref: listing it must never fetch it.
  'json-schema-ref-no-deref': async (client) => {
    await client.listTools();
  },
  // The echo tool takes back the input schema we saw for json_schema_2020_12_tool: it must be verbatim.
  'json-schema-2020-12-preservation': async (client) => {
    const tools = await client.listTools();
    const target = tools.find((tool) => tool.name === 'json_schema_2020_12_tool');
    const echo = tools.find(
      (tool) =>
        tool !== target && isPlainObject((tool.inputSchema.properties as Record<string, unknown> | undefined)?.schema),
    );
    if (!target || !echo)
      throw new Error(`The server offers no schema and echo tools (${tools.map((t) => t.name).join(', ')})`);
    await callTool(client, echo.name, { schema: target.inputSchema as unknown as JsonObject });
  },
  // Needs the multi round-trip driver (lib/client/input-required.ts, another part of issue 14).
  'sep-2322-client-request-state': async (client) => {
    for (const name of [
      'test_mrtr_echo_state',
      'test_mrtr_no_state',
      'test_mrtr_unrelated',
      'test_mrtr_no_result_type',
    ])
      await client.callTool(name, {});
  },
};

/** No scenario (run by hand): the handshake and the tool list. */
const byHand: Scenario = async (client) => {
  for (const name of await listToolNames(client)) process.stdout.write(`${name}\n`);
};

/** `auth/*` scenarios: the OAuth client does its part inside the transport; the calls are what it authorizes. */
const authorizedCalls: Scenario = async (client) => {
  await callEveryTool(client);
};

/** The client metadata document URL the `auth/basic-cimd` scenario expects as `client_id`. */
const CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json';
/** Never listened on: the mock authorization server approves at once and the redirect is read, not followed. */
const REDIRECT_URI = 'http://127.0.0.1:3000/callback';

/** What `MCP_CONFORMANCE_CONTEXT` carries for the auth scenarios that give credentials. */
interface AuthContext {
  readonly client_id?: string;
  readonly client_secret?: string;
  readonly private_key_pem?: string;
  readonly signing_algorithm?: string;
  /** Workload identity federation: the workload's JWT. */
  readonly valid_jwt?: string;
  /** Enterprise-managed authorization: the identity provider and the user's ID token. */
  readonly idp_client_id?: string;
  readonly idp_id_token?: string;
  readonly idp_issuer?: string;
  readonly idp_token_endpoint?: string;
}

/** The grant without a user that a scenario's context calls for, if any. */
function machineGrantOf(scenarioName: string, context: AuthContext): MachineGrant | undefined {
  const clientId = context.client_id;
  if (clientId === undefined) return undefined;
  const secret = context.client_secret === undefined ? {} : { clientSecret: context.client_secret };
  if (scenarioName.startsWith('auth/client-credentials')) {
    return {
      type: 'client_credentials',
      clientId,
      ...secret,
      ...(context.private_key_pem !== undefined && { privateKeyPem: context.private_key_pem }),
      ...(context.signing_algorithm !== undefined && { signingAlgorithm: context.signing_algorithm }),
    };
  }
  if (context.valid_jwt !== undefined) return { type: 'jwt_bearer', clientId, ...secret, assertion: context.valid_jwt };
  if (
    context.idp_token_endpoint !== undefined &&
    context.idp_id_token !== undefined &&
    context.idp_client_id !== undefined
  ) {
    return {
      type: 'enterprise',
      clientId,
      ...secret,
      identityProvider: {
        tokenEndpoint: context.idp_token_endpoint,
        clientId: context.idp_client_id,
        ...(context.idp_issuer !== undefined && { issuer: context.idp_issuer }),
      },
      idToken: context.idp_id_token,
    };
  }
  return undefined;
}

/** The OAuth client of an `auth/*` scenario: headless, with the credentials the scenario's context gives. */
function authorizationFor(url: string, scenarioName: string | undefined): OAuthClient | undefined {
  if (!scenarioName?.startsWith('auth/')) return undefined;
  const context = scenarioContext() as AuthContext;
  const grant = machineGrantOf(scenarioName, context);
  return new OAuthClient(url, {
    clientName: 'mcp-switchboard-conformance-client',
    interaction: headlessInteraction(REDIRECT_URI),
    clientMetadataUrl: CLIENT_METADATA_URL,
    ...(grant && { grant }),
    ...(!grant &&
      context.client_id !== undefined && {
        client: {
          clientId: context.client_id,
          ...(context.client_secret !== undefined && { clientSecret: context.client_secret }),
        },
      }),
  });
}

function scenarioFor(name: string | undefined): Scenario | undefined {
  if (name === undefined || name === '') return byHand;
  if (name.startsWith('auth/')) return authorizedCalls;
  return SCENARIOS[name];
}

function newClient(): Client {
  return new Client(
    { name: 'mcp-switchboard-conformance-client', version: VERSION },
    {
      defaultTimeout: REQUEST_TIMEOUT_MS,
      elicitation: { form: async () => ({ action: 'accept', content: {} }) },
    },
  );
}

async function run(url: string, scenarioName: string | undefined, scenario: Scenario): Promise<void> {
  const client = newClient();
  const emitted = recordEmittedEitherEra(client);
  try {
    const authorization = authorizationFor(url, scenarioName);
    await client.connect(new StreamableHttpClientTransport(url, authorization && { authorization }), {
      timeout: REQUEST_TIMEOUT_MS,
    });
    await scenario(client);
  } finally {
    await client.close();
  }
  emitted.assertValid();
}

async function main(argv: readonly string[]): Promise<number> {
  const url = argv.at(-1);
  const scenarioName = process.env.MCP_CONFORMANCE_SCENARIO;
  if (url === undefined || !/^https?:\/\//.test(url)) {
    process.stderr.write('usage: conformance-client <http(s) URL of the MCP endpoint>\n');
    return 2;
  }
  const scenario = scenarioFor(scenarioName);
  if (!scenario) {
    const known = Object.keys(SCENARIOS).join(', ');
    process.stderr.write(`Unknown scenario ${JSON.stringify(scenarioName)}: this client knows ${known} and auth/*\n`);
    return 2;
  }
  try {
    await run(url, scenarioName, scenario);
    return 0;
  } catch (error) {
    process.stderr.write(`conformance client (${scenarioName ?? 'no scenario'}): ${(error as Error).message}\n`);
    return 1;
  }
}

// Explicit exit: the suite waits for the process, and nothing should keep it alive once the scenario is over.
process.exit(await main(process.argv.slice(2)));
