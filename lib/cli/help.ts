/** The `--help` texts: one overview and one page per command. */
import { DEFAULT_HTTP_LIMITS as L } from '../../transports/http/limits';
import { DEFAULT_CALL_TIMEOUT_MS, DEFAULT_HOST, type HelpTopic } from './args';
import { CLIENT_SECRET_ENV, DEFAULT_CALLBACK_PORT, DEFAULT_CLIENT_NAME, DEFAULT_LOGIN_TIMEOUT_MS } from './auth-args';

const OVERVIEW = `Usage: switchboard <command> [options]

Commands:
  serve <module or config.json>           serve a server definition, or a hub of the servers a config lists
  call <url> <method> [params]            send one request to an MCP server over HTTP and print the result
  call <method> [params] -- <command...>  the same, with the server run as a stdio child process
  task get|result|cancel|list <url> [id]  ask about a task (a tool call "call --task" made), or list them
  trace check|export|view <trace.ndjson>  check a recorded trace (--trace-file) for what a CI job fails on,
                                          export it as OTLP/JSON or HAR, or view it in a browser
  login <url>                             authorize with an MCP server that requires OAuth; call then
                                          uses (and refreshes) the stored token
  logout <url>                            forget the login stored for the server
  help [serve|call|task|trace|login|logout]
                                          show help for a command

Options:
  -h, --help      show help
  -v, --version   show the version

Exit codes: 0 success, 1 failure (the module, the network, the server), 2 usage error,
130 interrupted (Ctrl-C).`;

const SERVE = `Usage: switchboard serve <module | config.json> [--http <port> [--host <host>] [--path <path>]
                         [--tls-cert <file> --tls-key <file>] [--cors-origin <origin>] [--health]
                         [HTTP options]] [--trace] [--trace-file <path>]
                         [--trace-ui <port> [--trace-ui-host <host>]] [--task-store <dir>]

Loads <module> (.js or .mjs; .ts when run through tsx) and serves its default export, a server
definition (defineServer(...)) or a Server, over stdio: newline-delimited JSON on stdin and stdout.
Stray console.log output goes to stderr. The process ends when stdin closes.
Both protocol eras are served: 2026-07-28 (stateless, server/discover; over HTTP each request stands
alone, no session) and the initialize handshake (2025-11-25 and earlier), chosen by the client's first
request over stdio and per request over HTTP.

A .json file is a hub config: {"mcpServers": {"<name>": {"command", "args", "env", "cwd"} or
{"url", "headers"}, ...}} as Claude Desktop and VS Code write it, plus naming options per server
("prefix", "separator", "maxNameLength", "collision"), "tools"/"prompts"/"resources" filters and "era"
("auto" by default: probe with server/discover and speak 2026-07-28 to a server that answers it, the
handshake to the others; "handshake" always performs the handshake; "modern" speaks 2026-07-28 or
fails; "legacy" is the old name of "handshake"). Every server it lists is started, supervised
(restarted with backoff for as long as it fails), and served behind one. Its "switchboard" section sets
hub-wide options; "switchboard.http" sets the HTTP options below by their API names
("maxSessionsPerClient", "allowedHosts", ..., "cors": {"origins": [...]}, "health": true or a path),
and flags win over it (lists, CORS origins included, add up). SIGTERM, SIGINT or the end of
stdin stop every server it started (stdin closed, SIGTERM, SIGKILL) before the command exits.

Options:
  --http <port>   serve Streamable HTTP at http://<host>:<port>/mcp instead (0 picks a free port),
                  with the legacy HTTP+SSE endpoints /sse and /messages for 2024-11-05 clients
  --host <host>   the address to listen on (default ${DEFAULT_HOST}). Origin and Host headers are
                  checked whatever the address: localhost names are accepted, and on another
                  address that address too; list any other with --allowed-host/--allowed-origin
  --path <path>   serve Streamable HTTP at this path instead of /mcp (the legacy endpoints stay at
                  /sse and /messages)
  --tls-cert <file> --tls-key <file>
                  serve HTTPS with this certificate chain and private key (PEM files); clients must
                  trust the certificate (for a private CA, Node clients: NODE_EXTRA_CA_CERTS=<ca.pem>)
  --cors-origin <origin>
                  let pages of this origin (e.g. https://app.example.com) call the MCP endpoints from
                  a browser: preflights answered, answers readable (Mcp-Session-Id); repeatable. '*'
                  (alone) allows any origin, and only with a hub config's "auth" (a token required)
  --health        answer GET /health with 200 {"status":"ok"}: no token, no session, any origin
  --health-path <path>
                  serve the health endpoint at this path instead (implies --health)
  --trace         print every message and lifecycle change to stderr (for a hub, of its upstreams
                  too, with their names, and each upstream's state changes)
  --trace-file <path>
                  write the same events to <path> as NDJSON, one JSON object per line (the file
                  is replaced, and flushed when serving ends)
  --trace-ui <port>
                  serve the trace viewer live at http://127.0.0.1:<port>/ (0 picks a free port; the
                  URL is printed on stderr): the same events, redacted as in every trace, streamed to
                  the page, which first replays the last 10,000. Above 10,000 events/s the page
                  samples whole requests and says so; a page that cannot keep up loses its oldest
                  unsent events (the page says how many): the server's memory stays bounded
  --trace-ui-host <host>
                  listen on <host> instead of 127.0.0.1: the printed URL then carries a token,
                  required of every request (on loopback, requests must name the listener as Host)
  --task-store <dir>
                  keep the tasks of the module's tools (tool calls made tasks) in <dir>, an LMDB
                  store, created if missing: a finished task's result outlives the process, and one
                  that was running when it ended reads failed after a restart (without it, tasks
                  are kept in memory). One server process at a time per folder; a module that
                  exports a Server gives it its store itself

HTTP options (with --http; times in milliseconds; a client is a remote address):
  --allowed-host <host:port>         also accept this Host header (repeatable)
  --allowed-origin <origin>          also accept this Origin, e.g. https://app.example.com (repeatable)
  --max-sessions <n>                 sessions at once (default ${L.maxSessions}); when full, the least
                                     recently used idle session is evicted for a newcomer
  --max-sessions-per-client <n>      sessions per client (default ${L.maxSessionsPerClient}); one more evicts the
                                     client's oldest idle session, or gets 429 if all are busy
  --max-listen-streams-per-client <n>
                                     subscriptions/listen streams per client (default
                                     ${L.maxListenStreamsPerClient}); one more gets 429
  --session-idle-timeout <ms>        close a session idle this long (default ${L.sessionIdleTimeoutMs})
  --max-connections <n>              open sockets at once (default ${L.maxConnections}; keep it below ulimit -n)
  --max-connections-per-client <n>   open sockets per client (default ${L.maxConnectionsPerClient})
  --headers-timeout <ms>             time to send the request headers (default ${L.headersTimeoutMs})
  --body-timeout <ms>                time to send the request body (default ${L.bodyTimeoutMs})
  --keep-alive-timeout <ms>          close an idle keep-alive socket after (default ${L.keepAliveTimeoutMs})
  --max-body-bytes <n>               largest request body (default ${L.maxBodyBytes}); larger get 413
  --max-depth <n>                    deepest nesting in a request body (default ${L.maxDepth}); deeper get 400
  --standalone-stream-wait <ms>      how long a server-to-client message waits for the client's GET
                                     stream (default ${L.standaloneStreamWaitMs})
  --max-standalone-backlog <n>       messages that may wait for it, per session (default ${L.maxStandaloneBacklog})

Examples:
  switchboard serve ./server.js
  switchboard serve ./server.js --http 3000 --trace
  switchboard serve ./mcp-servers.json --http 3000 --trace-file hub-trace.ndjson
  switchboard serve ./mcp-servers.json --http 3000 --trace-ui 0
  switchboard serve ./server.js --http 8443 --path /rpc --tls-cert cert.pem --tls-key key.pem
  switchboard serve ./server.js --http 3000 --cors-origin https://app.example.com --health
  switchboard serve ./server.js --http 3000 --task-store ./tasks
  npx tsx lib/cli/main.ts serve examples/notes-server.ts --http 3000`;

const CALL = `Usage: switchboard call [options] <url> <method> [params-json]
       switchboard call [options] <method> [params-json] -- <command> [args...]
       switchboard call [options] --task [--ttl <ms>] <url> tools/call '{"name":...,"arguments":...}'

Connects to one MCP server (Streamable HTTP at <url>, or <command> spawned over stdio) in the era it
speaks: it asks server/discover first (2026-07-28, stateless: every request carries its own version and
capabilities) and falls back to the initialize handshake (2025-11-25 and earlier) when the server does
not know it. Then it sends one request and prints its JSON result on stdout. A JSON-RPC error from the server is
printed on stderr and exits 1. A tool's own failure is a result ("isError": true) and exits 0.
List methods return one page, as the server sent it (pass {"cursor": "..."} for the next one), unless
--all is given. A method starting with notifications/ is sent as a notification and prints nothing.
The server's log messages and progress reports (and a stdio server's stderr) are shown on stderr; progress
restarts the timeout. Ctrl-C cancels the request (the server gets notifications/cancelled) and exits 130.
Over HTTP the login stored by "switchboard login <url>" is sent, and refreshed when the server says it
expired. A server that requires authorization with no login stored (or one that can no longer be
refreshed) fails the call with exit 1: run "switchboard login <url>". An Authorization header given with
--header is sent instead of any stored login.
A tool that asks the user for input (form elicitation, in either era) is answered with --answer (one
per question, in order, each checked against the form before it is sent), --decline or --cancel; else,
when stdin is a terminal, each field is asked for on it (checked, and asked again when it does not
fit), and the answer shown to send, decline or cancel. When stdin is not a terminal and no answer is
left, the call stops with exit 1, saying what the form asks; the request is cancelled and nothing is
answered. A tools/call naming a tool the server does not list gets the closest names it does list
("did you mean"), a hub's prefixed names (fs__read) included.
With --task, the tool is called as a task (either era): once the server made it, stderr shows the
task's id, the "switchboard task" commands that follow or cancel it from elsewhere, and its reference;
then each status as it changes ("task working: ..."), and stdout the result at the end, as without
--task. The task's questions are answered as above. Ctrl-C cancels the task and exits 130; a failed or
cancelled task exits 1, saying why. A tool without task support runs at once (stderr says so).

Options:
  -H, --header 'Name: value'   an HTTP header for every request (repeatable; HTTP only)
  --client-name <name>         use the login stored under this name (default ${DEFAULT_CLIENT_NAME}; HTTP only)
  --timeout <ms>               how long to wait to connect and for the response, each
                               (default ${DEFAULT_CALL_TIMEOUT_MS}; 0 waits forever)
  --protocol-version <v>       speak this revision and no other: 2026-07-28 skips the handshake,
                               a handshake revision (2025-11-25 ... 2024-11-05) skips server/discover
  --era auto|handshake|modern  auto (default) probes; handshake always performs the handshake; modern
                               speaks 2026-07-28 or fails (legacy, the old name of handshake, still works)
  --no-era-cache               probe every time: by default the era a server speaks is remembered for
                               24 hours (per server, command line and login or --header set) in
                               era-cache.json under the config directory, and a second call skips the
                               probe; a remembered era that no longer holds is probed again
  --verbose                    say on stderr which revision and era the connection speaks
                               (connected: 2026-07-28 (stateless), or connected: 2025-11-25 (handshake))
                               and where the era came from (era: from the cache, era: probed, ...)
  --all                        follow nextCursor through every page of tools/list, resources/list,
                               resources/templates/list or prompts/list and print all items
  --task                       call the tool (tools/call) as a task and follow it to its end
  --ttl <ms>                   with --task: how long the server should keep the task (2025-11-25; a
                               2026-07-28 server decides alone)
  --answer '<json>'            the fields of the form the server asks for, e.g. '{"name":"Ada","age":36}'
                               (repeatable: one per question, in the order they come)
  --decline                    decline every question the server asks
  --cancel                     cancel every question the server asks
  --trace                      print every message and lifecycle change to stderr
  --trace-file <path>          write them to <path> as NDJSON, one JSON object per line

Examples:
  switchboard call http://127.0.0.1:3000/mcp tools/list
  switchboard call http://127.0.0.1:3000/mcp tools/call '{"name":"add","arguments":{"a":2,"b":3}}'
  switchboard call -H 'Authorization: Bearer TOKEN' https://example.com/mcp ping
  switchboard call --verbose --protocol-version 2025-11-25 http://127.0.0.1:3000/mcp tools/list
  switchboard call resources/read '{"uri":"notes://index"}' -- node ./server.js
  switchboard call --answer '{"confirm":true}' http://127.0.0.1:3000/mcp tools/call '{"name":"deploy"}'
  switchboard call --task http://127.0.0.1:3000/mcp tools/call '{"name":"build","arguments":{"target":"all"}}'`;

const TASK = `Usage: switchboard task get|result|cancel [options] <url> <task>
       switchboard task list [options] <url>
       switchboard task get|result|cancel [options] <task> -- <command> [args...]
       switchboard task list [options] -- <command> [args...]

One request about tasks: tool calls made tasks ("switchboard call --task", or any client). <task> is the
task's id, or the reference "call --task" printed (JSON; it must name this server and era, or nothing
is sent). Connects as "call" does: the era the server speaks, the stored login, the same options.
  get      the task's status now (tasks/get)
  result   follows the task to its end, each status on stderr, and prints the tool's result as "call"
           prints one; its questions are answered as "call" answers them. Ctrl-C stops following
           (the task runs on) and exits 130; a failed or cancelled task exits 1, saying why
  cancel   asks the server to cancel the task (tasks/cancel); a task already over is refused
  list     the tasks the server lists for this client (2025-11-25 tasks/list: with a login, your
           tasks; without one, a server may list only those of this connection, so none). A
           2026-07-28 server has no list: the command says so (try --era handshake)
A stdio target (a command after --) is a new server process: it knows tasks made before only if it
keeps them on disk ("switchboard serve <module> --task-store <dir>"), and only one server process may
use that folder at a time.

Options:
  --json                       print JSON (the task as the client reads it in both eras: taskId, status,
                               statusMessage, createdAt, lastUpdatedAt, ttlMs, pollIntervalMs)
  and those of "call": -H/--header, --client-name, --timeout, --protocol-version, --era,
  --no-era-cache, --verbose, --answer, --decline, --cancel, --trace, --trace-file

Examples:
  switchboard task get http://127.0.0.1:3000/mcp 4f9c...
  switchboard task result http://127.0.0.1:3000/mcp 4f9c...
  switchboard task cancel http://127.0.0.1:3000/mcp 4f9c...
  switchboard task list --era handshake --json http://127.0.0.1:3000/mcp
  switchboard task result 4f9c... -- npx switchboard serve ./server.js --task-store ./tasks`;

const TRACE = `Usage: switchboard trace check <trace.ndjson> [--json] [--allow <rule>...] [--max-latency <ms>]
       switchboard trace export <trace.ndjson> --format otlp|har [--out <file>]
       switchboard trace view <trace.ndjson> [--out page.html] [--open]

Reads a trace recorded with --trace-file (NDJSON, one event a line), streamed: a file of any size. A
line that is not a trace event is skipped and counted; a last line cut short (the process died while
writing) is ignored. Requests are paired with their answers per connection and direction.
  check    prints a summary (events, requests by outcome, errors by code, latency p50/p90/p99/max per
           method and per upstream), then each finding with its connection, method, id and time, and
           exits 1 when a finding is not allowed, 0 otherwise. The findings (rules):
             unanswered     a request never answered: the trace ended, or its connection closed, first
             timeout        a request its sender gave up on after its timeout
             late-answer    an answer after its request timed out or was cancelled
             invalid-frame  a message that is not JSON-RPC
             unknown-id     a response to an id no request in flight has
             duplicate-id   a request reusing the id of one still in flight
             era-violation  a message the connection's era does not have (ping or initialize in
                            2026-07-28, server/discover in the handshake era), or from the wrong side
             error          a JSON-RPC error response, by code
             slow           an answer slower than --max-latency
  export   writes one span (OTLP) or entry (HAR) per request, with its answer, to stdout or --out
  view     writes the trace viewer page for the trace (see "switchboard trace view --help")

Options:
  --json                 check: print the report as JSON (counts, findings, latencies, lines skipped)
  --allow <rule>         check: do not fail on this rule (repeatable, or comma separated); error:<code>
                         allows one error code (--allow error:-32601)
  --max-latency <ms>     check: an answer slower than this is a finding (slow)
  --format otlp|har      export: OTLP/JSON (OpenTelemetry's JSON encoding, as POSTed to a collector's
                         /v1/traces; spans named and attributed after the OpenTelemetry MCP conventions:
                         mcp.method.name, jsonrpc.request.id, gen_ai.tool.name, error.type, ...; the
                         trace's own trace and span ids when it has them, else stable ones derived from
                         it) or HAR 1.2 (the JSON-RPC request as postData, the answer as content)
  --out <file>           export: write to <file> (readable only by you: a trace holds tool arguments)

Examples:
  switchboard serve ./server.js --http 3000 --trace-file trace.ndjson
  switchboard trace check trace.ndjson
  switchboard trace check --allow error:-32601 --max-latency 2000 --json trace.ndjson
  switchboard trace export trace.ndjson --format otlp --out trace.otlp.json
  curl -H 'Content-Type: application/json' --data @trace.otlp.json http://127.0.0.1:4318/v1/traces
  switchboard trace export trace.ndjson --format har --out trace.har`;

const LOGIN = `Usage: switchboard login [options] <url>

Authorizes switchboard with the MCP server at <url> (OAuth 2.1, as the MCP authorization specification
describes it) and stores the token for "switchboard call": connecting, it discovers the server's
authorization server, registers a client there (unless --client-id names one), and prints the
authorization URL on stderr, opening it in the browser when it can. After you approve, the browser comes
back to http://127.0.0.1:<callback port>/callback, where switchboard waits; the token (with its refresh
token, when the server gives one) is stored in one file per server, readable only by you, under the
config directory (MCP_SWITCHBOARD_CONFIG_DIR, else ~/.config/mcp-switchboard, ~/Library/Application
Support/mcp-switchboard on macOS, %APPDATA%\\mcp-switchboard on Windows). Then it connects once more to
confirm, and prints the server's name and the scopes granted; tokens are never printed. Logging in again
replaces the stored token. Ctrl-C cancels and exits 130.

Options:
  --scope '<scopes>'           the scopes to ask for, space separated (default: those the server names)
  --client-id <id>             a client registered beforehand with the authorization server (its redirect
                               URI: http://127.0.0.1:<callback port>/callback)
  --client-secret <secret>     its secret; better given in the ${CLIENT_SECRET_ENV} environment
                               variable, which keeps it out of the shell history
  --client-name <name>         the name the login is stored under, with the URL (default ${DEFAULT_CLIENT_NAME});
                               call --client-name <name> uses it
  --callback-port <n>          the loopback port the browser comes back to (default ${DEFAULT_CALLBACK_PORT}; fixed,
                               so the registered redirect URI stays the same between logins; 0 picks a
                               free port, a new redirect URI each time)
  --timeout <ms>               how long to wait for the browser (default ${DEFAULT_LOGIN_TIMEOUT_MS}, 5 minutes)
  --no-browser                 only print the URL, for you to open in a browser on this machine (or on
                               one whose 127.0.0.1:<callback port> is forwarded here, as ssh -L does)

Examples:
  switchboard login https://mcp.example.com/mcp
  switchboard login --scope 'files:read files:write' https://mcp.example.com/mcp
  ${CLIENT_SECRET_ENV}=... switchboard login --client-id my-cli https://mcp.example.com/mcp`;

const LOGOUT = `Usage: switchboard logout [--client-name <name>] <url>

Forgets the login stored for the MCP server at <url> (its tokens and the client registration), and says
whether there was one. Exits 0 either way. Nothing is sent to the server.

Options:
  --client-name <name>         the name the login was stored under (default ${DEFAULT_CLIENT_NAME})`;

const PAGES: Readonly<Record<HelpTopic, string>> = {
  serve: SERVE,
  call: CALL,
  task: TASK,
  trace: TRACE,
  login: LOGIN,
  logout: LOGOUT,
};

export function helpText(topic?: HelpTopic): string {
  return topic === undefined ? OVERVIEW : PAGES[topic];
}
