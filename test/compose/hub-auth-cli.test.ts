/**
 * `switchboard serve <hub.json> --http` with authorization, as a real process: the upstream's tokens come
 * from the token store on disk that a login wrote (the config directory), and the hub's endpoint requires
 * a token as the config's top-level `auth` says.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { headlessInteraction } from '../../lib/auth/client/authorization-code';
import { OAuthClient } from '../../lib/auth/client/oauth-client';
import { FileTokenStore } from '../../lib/auth/node/file-token-store';
import { Client } from '../../lib/client/client';
import { defineServer } from '../../lib/server/definition';
import { Server } from '../../lib/server/server';
import { createMcpHttpHandler, type McpHttpHandler } from '../../transports/http/endpoint';
import { StreamableHttpClientTransport } from '../../transports/http/streamable-client';
import { buildCli, LongRunning } from '../helpers/cli-process';
import { text, textOf } from '../helpers/content';
import { tool } from '../helpers/fixtures';
import { cleanups, lateListener, listenHttp } from '../helpers/http';
import { startAuthorizationServer, type AuthorizationServer } from '../helpers/oauth-server';

/** The hub's resource: any URL will do, the tokens only have to name it. */
const HUB_RESOURCE = 'http://hub.test/mcp';

let dir: string;
let cli: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'switchboard-hub-auth-'));
  cli = (await buildCli(join(dir, 'dist'))).cli;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A protected upstream with one tool, `notes_hello`. */
async function notesServer(as: AuthorizationServer): Promise<string> {
  const server = new Server(
    defineServer({ name: 'notes', version: '1', tools: [tool('notes_hello', () => text('hello from notes'))] }),
  );
  cleanups.push(() => server.close());
  let handler: McpHttpHandler | undefined;
  const { origin } = await listenHttp(lateListener(() => handler));
  const url = `${origin}/mcp`;
  handler = createMcpHttpHandler(server, {
    auth: { resource: url, authorizationServers: [as.issuer], jwks: as.url('/jwks') },
  });
  cleanups.push(() => handler!.close());
  return url;
}

/** `switchboard serve <config> --http 0` with its config directory at `configDir`: the hub's URL. */
async function serveHub(config: unknown, configDir: string): Promise<string> {
  const file = join(dir, 'hub.json');
  writeFileSync(file, JSON.stringify(config));
  const { process: served, match } = await LongRunning.start(
    ['/usr/bin/env', `MCP_SWITCHBOARD_CONFIG_DIR=${configDir}`, process.execPath, cli, 'serve', file, '--http', '0'],
    /over Streamable HTTP at (http:\/\/127\.0\.0\.1:\d+\/mcp)/,
  );
  cleanups.push(() => served.stop('SIGTERM'));
  return match[1]!;
}

describe('switchboard serve <hub.json> with auth', () => {
  let as: AuthorizationServer;
  let hubUrl: string;
  beforeAll(async () => {
    as = await startAuthorizationServer();
    const notes = await notesServer(as);
    const configDir = join(dir, 'config');
    // What `switchboard login <url>` leaves behind: the record in the config directory.
    const login = new OAuthClient(notes, {
      store: new FileTokenStore({ configDir }),
      interaction: headlessInteraction('http://127.0.0.1:9/callback'),
    });
    const client = new Client({ name: 'login', version: '1' });
    await client.connect(new StreamableHttpClientTransport(notes, { authorization: login }));
    await client.close();
    hubUrl = await serveHub(
      {
        mcpServers: { notes: { url: notes, auth: { type: 'oauth' } } },
        auth: {
          resource: HUB_RESOURCE,
          authorizationServers: [as.issuer],
          jwks: as.url('/jwks'),
          dpop: { algorithms: ['ES256'] },
        },
      },
      configDir,
    );
    // The servers stay up for the file's tests (the cleanups after the first test would end them).
    kept.push(...cleanups.splice(0), () => as.close());
  }, 60_000);
  const kept: (() => unknown)[] = [];
  afterAll(async () => {
    for (const cleanup of kept.reverse()) await Promise.resolve(cleanup()).catch(() => undefined);
  });

  it('refuses a client without a token, offering DPoP as the config says', async () => {
    const response = await fetch(hubUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    });
    await response.body?.cancel();
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/, DPoP algs="ES256"$/);
  });

  it("reaches the upstream with the login's tokens from the config directory", async () => {
    const token = await as.issueToken({ audience: HUB_RESOURCE });
    const client = new Client({ name: 'downstream', version: '1' });
    cleanups.push(() => client.close());
    await client.connect(new StreamableHttpClientTransport(hubUrl, { headers: { authorization: `Bearer ${token}` } }));
    expect(textOf(await client.callTool('notes_hello'))).toBe('hello from notes');
  });
});
