/**
 * The client the official conformance suite spawns (`conformance client --command "<this>"`): our `Client`
 * over our `StreamableHttpClientTransport`. The suite appends its mock server's URL as the last argument
 * and names the scenario in `MCP_CONFORMANCE_SCENARIO`; what each scenario does is in `SCENARIOS` below
 * (the suite itself checks what reached its server). Every message the client sends is also checked against
 * the official schema of the negotiated revision. Exit 0 on success; otherwise a message on stderr and exit 1
 * (2 for a usage error).
 *
 * By hand: `npm run conformance-client -- <url>`; without a scenario it connects, lists the tools and
 * prints their names.
 */
import { Client } from '../../lib/client/client';
import { VERSION } from '../../lib/cli/version';
import { StreamableHttpClientTransport } from '../../transports/http/streamable-client';
import { recordEmitted } from '../helpers/schema';

/** Below the suite's own 30 s limit, so a stuck request is reported by us rather than killed by it. */
const REQUEST_TIMEOUT_MS = 20_000;

type Scenario = (client: Client) => Promise<void>;

/** A tool's own failure is a result, not a rejection: for the scenario it is a failure all the same. */
async function callTool(client: Client, name: string, args: Record<string, number> = {}): Promise<void> {
  const result = await client.callTool(name, args);
  if (result.isError) throw new Error(`Tool ${name} failed: ${JSON.stringify(result.content)}`);
}

async function listToolNames(client: Client): Promise<string[]> {
  return (await client.listTools()).map((tool) => tool.name);
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
};

/** No scenario (run by hand): the handshake and the tool list. */
const byHand: Scenario = async (client) => {
  for (const name of await listToolNames(client)) process.stdout.write(`${name}\n`);
};

/** `auth/*` scenarios need an OAuth client, which we do not have yet: the plain flow is tried and fails. */
const plainFlow: Scenario = async (client) => {
  await listToolNames(client);
};

function scenarioFor(name: string | undefined): Scenario | undefined {
  if (name === undefined || name === '') return byHand;
  if (name.startsWith('auth/')) return plainFlow;
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
  const emitted = recordEmitted(client);
  try {
    await client.connect(new StreamableHttpClientTransport(url), { timeout: REQUEST_TIMEOUT_MS });
    await scenario(client);
  } catch (error) {
    if (scenarioName?.startsWith('auth/')) {
      throw new Error(`OAuth is not supported yet (scenario ${scenarioName}): ${(error as Error).message}`, {
        cause: error,
      });
    }
    throw error;
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
