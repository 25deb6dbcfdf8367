/**
 * The page's side of the browser CORS test (served as it is, no build step): MCP over fetch as a browser
 * client speaks it, from another origin than the endpoint's. `runMcpExchanges(endpoint)` runs a handshake-era
 * exchange (initialize, reading the session id from the answer; initialized; tools/call; DELETE) and a
 * 2026-07-28 stateless tools/call, and reports each one's outcome, or the error it met.
 */
const JSON_AND_SSE = 'application/json, text/event-stream';
const HANDSHAKE_VERSION = '2025-11-25';
const STATELESS_VERSION = '2026-07-28';
const CLIENT_INFO = { name: 'browser-page', version: '1' };
/** Every fetch gives up after this long, so a test never waits on the page for ever. */
const FETCH_TIMEOUT_MS = 10_000;

function post(endpoint, body, headers = {}) {
  return fetch(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: JSON_AND_SSE, ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
  });
}

/** The JSON-RPC response an answer carries, as JSON or as the SSE stream of one POST (which ends after it). */
async function responseOf(answer) {
  const body = await answer.text();
  if (!answer.ok) throw new Error(`HTTP ${answer.status}: ${body}`);
  if ((answer.headers.get('content-type') ?? '').startsWith('application/json')) return JSON.parse(body);
  const messages = body
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).trim())
    .filter((data) => data !== '') // the priming event carries no message
    .map((data) => JSON.parse(data));
  const response = messages.find((message) => 'result' in message || 'error' in message);
  if (!response) throw new Error(`no response in the stream: ${body}`);
  return response;
}

async function handshake(endpoint) {
  const opened = await post(endpoint, {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: HANDSHAKE_VERSION, capabilities: {}, clientInfo: CLIENT_INFO },
  });
  // Readable only when the endpoint exposes it (Access-Control-Expose-Headers).
  const session = opened.headers.get('mcp-session-id');
  const { result } = await responseOf(opened);
  const headers = { 'mcp-session-id': session ?? '', 'mcp-protocol-version': result.protocolVersion };
  const initialized = await post(endpoint, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
  if (initialized.status !== 202) throw new Error(`initialized: HTTP ${initialized.status}`);
  const called = await responseOf(
    await post(
      endpoint,
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: {} } },
      headers,
    ),
  );
  const deleted = await fetch(endpoint, { method: 'DELETE', headers, signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
  return {
    session,
    protocolVersion: result.protocolVersion,
    text: called.result.content[0].text,
    deleted: deleted.status,
  };
}

async function stateless(endpoint) {
  const _meta = {
    'io.modelcontextprotocol/protocolVersion': STATELESS_VERSION,
    'io.modelcontextprotocol/clientCapabilities': {},
    'io.modelcontextprotocol/clientInfo': CLIENT_INFO,
  };
  const params = { name: 'regional', arguments: { region: 'eu' }, _meta };
  const called = await responseOf(
    await post(
      endpoint,
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params },
      {
        'mcp-protocol-version': STATELESS_VERSION,
        'mcp-method': 'tools/call',
        'mcp-name': 'regional',
        'mcp-param-region': 'eu',
      },
    ),
  );
  return { text: called.result.content[0].text, resultType: called.result.resultType };
}

window.runMcpExchanges = async (endpoint) => {
  const outcome = {};
  for (const [name, exchange] of [
    ['handshake', handshake],
    ['stateless', stateless],
  ]) {
    try {
      outcome[name] = await exchange(endpoint);
    } catch (error) {
      outcome[name] = { error: `${error.name}: ${error.message}` };
    }
  }
  return outcome;
};
