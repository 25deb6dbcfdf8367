/**
 * The interop suite, part 4: the client features a server calls from inside a tool (sampling, roots, form
 * and URL elicitation), for both directions (see `runInteropSuite` in ./interop.ts).
 */
import { filter, firstValueFrom, take } from 'rxjs';
import { expect } from 'vitest';
import { readUrlElicitations } from '../../lib/client/elicitation';
import { CapabilityNotSupportedError, McpError } from '../../lib/jsonrpc/errors';
import type { ElicitResult } from '../../lib/protocol/client-features';
import { FORM_SCHEMA, URL_ELICITATION } from '../fixtures/interop-our-server';
import { OUR_ROOTS, SAMPLED } from '../fixtures/interop-sdk-server';
import { jsonOf } from './content';
import { deferred } from './fixtures';
import {
  BOTH_ERAS,
  HANDSHAKE_ERA,
  ourClientAgainstSdkPrimitives,
  sdkClientAgainstOurPrimitives,
  type InteropCase,
  type InteropRun,
} from './interop';
import { isAtLeast } from '../../lib/protocol/versions';

/** The URL elicitation the suite's tools ask for, as `run`'s era carries it: 2026-07-28 has no elicitationId. */
function urlElicitationIn(run: InteropRun): object {
  const { elicitationId: _none, ...stateless } = URL_ELICITATION;
  return run.era === 'handshake' ? URL_ELICITATION : stateless;
}

export const CLIENT_FEATURE_CASES: InteropCase[] = [
  {
    title: "asks the client's model from inside a tool (sampling/createMessage)",
    eras: BOTH_ERAS,
    server: async (run) => {
      const { sdkClient, asked, sdkErrors } = await sdkClientAgainstOurPrimitives(run);
      expect(jsonOf(await sdkClient.callTool({ name: 'sample', arguments: {} }))).toEqual({
        role: 'assistant',
        content: { type: 'text', text: 'hi from the SDK' },
        model: 'sdk-model',
        stopReason: 'endTurn',
      });
      expect(asked.sampling).toEqual([
        {
          messages: [{ role: 'user', content: { type: 'text', text: 'Say hi' } }],
          systemPrompt: 'Be brief',
          maxTokens: 20,
        },
      ]);
      expect(sdkErrors).toEqual([]);
    },
    client: async (run) => {
      const { client, seen, sdkErrors } = await ourClientAgainstSdkPrimitives(run);
      expect(jsonOf(await client.callTool('sample', {}))).toEqual(SAMPLED);
      expect(seen.sampling).toEqual([
        {
          messages: [{ role: 'user', content: { type: 'text', text: 'Say hi' } }],
          systemPrompt: 'Be brief',
          maxTokens: 20,
        },
      ]);
      expect(sdkErrors).toEqual([]);
    },
  },
  {
    title: "lists the client's roots from inside a tool",
    eras: BOTH_ERAS,
    server: async (run) => {
      const { sdkClient } = await sdkClientAgainstOurPrimitives(run);
      expect(jsonOf(await sdkClient.callTool({ name: 'roots', arguments: {} }))).toEqual([
        { uri: 'file:///home/ada/project', name: 'project' },
      ]);
    },
    client: async (run) => {
      const { client } = await ourClientAgainstSdkPrimitives(run);
      // Root._meta exists from 2025-06-18: our client leaves it out for older revisions.
      expect(jsonOf(await client.callTool('roots', {}))).toEqual(
        isAtLeast(run.version, '2025-06-18') ? OUR_ROOTS : [{ uri: 'file:///home/ada/project', name: 'project' }],
      );
    },
  },
  {
    title: "hears the client's roots/list_changed, after which the new roots are listed",
    eras: HANDSHAKE_ERA,
    server: async (run) => {
      const setup = await sdkClientAgainstOurPrimitives(run);
      const { sdkClient, connection } = setup;
      const changed = firstValueFrom(
        connection.notifications$.pipe(
          filter((notification) => notification.method === 'notifications/roots/list_changed'),
          take(1),
        ),
      );
      setup.roots = [{ uri: 'file:///tmp/work' }, { uri: 'file:///tmp/other', name: 'other' }];
      await sdkClient.sendRootsListChanged();
      expect(await changed).toEqual({ jsonrpc: '2.0', method: 'notifications/roots/list_changed' });
      expect(jsonOf(await sdkClient.callTool({ name: 'roots', arguments: {} }))).toEqual(setup.roots);
    },
    client: async (run) => {
      const { client, hooks } = await ourClientAgainstSdkPrimitives(run);
      const changed = firstValueFrom(hooks.rootsChanged);
      await client.setRoots([{ uri: 'file:///tmp/work' }]);
      await changed;
      expect(jsonOf(await client.callTool('roots', {}))).toEqual([{ uri: 'file:///tmp/work' }]);
    },
  },
  {
    title: 'elicits a form through the client',
    eras: BOTH_ERAS,
    server: async (run) => {
      const { sdkClient, asked } = await sdkClientAgainstOurPrimitives(run);
      const result = await sdkClient.callTool({ name: 'ask', arguments: {} });
      expect(jsonOf(result)).toEqual({ action: 'accept', content: { name: 'Ada' } });
      // No `mode` on the wire (form is the default); the SDK fills it in only on its own parsed copy.
      expect(asked.elicitation).toEqual([{ message: 'Your details?', requestedSchema: FORM_SCHEMA }]);
    },
    client: async (run) => {
      const { client, seen, sdkErrors } = await ourClientAgainstSdkPrimitives(run);
      // The SDK server checks the content against the requested schema before handing it to the tool.
      expect(jsonOf(await client.callTool('ask', {}))).toEqual({
        action: 'accept',
        content: { name: 'Ada', age: 42, newsletter: false },
      });
      expect(seen.form).toEqual([{ mode: 'form', message: 'Your details?', requestedSchema: FORM_SCHEMA }]);
      expect(sdkErrors).toEqual([]);
    },
  },
  {
    title: 'passes a declined form through as is',
    eras: BOTH_ERAS,
    client: async (run) => {
      const { client, sdkErrors } = await ourClientAgainstSdkPrimitives(run, {
        elicitation: { form: (): ElicitResult => ({ action: 'decline' }) },
      });
      expect(jsonOf(await client.callTool('ask', {}))).toEqual({ action: 'decline' });
      expect(sdkErrors).toEqual([]);
    },
  },
  {
    title: 'refuses form elicitation without sending it',
    eras: HANDSHAKE_ERA,
    server: async (run) => {
      const { sdkClient, asked, sent } = await sdkClientAgainstOurPrimitives(run);
      const result = await sdkClient.callTool({ name: 'ask', arguments: {} });
      expect(result).toMatchObject({
        isError: true,
        content: [{ type: 'text', text: expect.stringContaining('needs protocol version 2025-06-18') }],
      });
      expect(asked.elicitation).toEqual([]);
      expect(sent.filter((message) => message.method === 'elicitation/create')).toEqual([]);
    },
  },
  {
    title: 'elicits through a URL',
    eras: BOTH_ERAS,
    server: async (run) => {
      const { sdkClient, asked, sdkErrors } = await sdkClientAgainstOurPrimitives(run);
      expect(jsonOf(await sdkClient.callTool({ name: 'open-url', arguments: {} }))).toEqual({ action: 'accept' });
      expect(asked.elicitation).toEqual([urlElicitationIn(run)]);
      expect(sdkErrors).toEqual([]);
    },
    client: async (run) => {
      const { client, seen, sdkErrors } = await ourClientAgainstSdkPrimitives(run);
      expect(jsonOf(await client.callTool('open-url', {}))).toEqual({ action: 'accept' });
      expect(seen.url).toEqual([urlElicitationIn(run)]);
      expect(sdkErrors).toEqual([]);
    },
  },
  {
    title: "delivers a URL elicitation's completion",
    eras: HANDSHAKE_ERA,
    server: async (run) => {
      const { sdkClient, connection } = await sdkClientAgainstOurPrimitives(run);
      const completed = deferred<unknown>();
      sdkClient.onNotification('notifications/elicitation/complete', (params) => completed.resolve(params));
      await connection.notify('notifications/elicitation/complete', { elicitationId: 'elicitation-1' });
      expect(await completed.promise).toEqual({ elicitationId: 'elicitation-1' });
    },
    client: async (run) => {
      const { client, mcp } = await ourClientAgainstSdkPrimitives(run);
      const completed = firstValueFrom(client.elicitationComplete$);
      await mcp.server.createElicitationCompletionNotifier('elicitation-1')();
      expect(await completed).toEqual({ elicitationId: 'elicitation-1' });
    },
  },
  {
    title: 'carries a -32042 error with the URL elicitations it needs',
    eras: BOTH_ERAS,
    server: async (run) => {
      const { sdkClient } = await sdkClientAgainstOurPrimitives(run);
      // The SDK turns a -32042 error into its UrlElicitationRequiredError with the elicitations we sent.
      const failure = await sdkClient
        .callTool({ name: 'needs-browser', arguments: {} })
        .catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(sdkClient.UrlElicitationRequiredError);
      expect(failure).toMatchObject({ code: -32042, elicitations: [URL_ELICITATION] });
    },
    client: async (run) => {
      const { client } = await ourClientAgainstSdkPrimitives(run);
      const failure = await client.callTool('needs-browser', {}).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(McpError);
      // SDK v1 sends its error's own message, "MCP error <code>: " prefix included.
      const message = run.sdk === 'v1' ? 'MCP error -32042: Open the link first' : 'Open the link first';
      expect(failure).toMatchObject({ code: -32042, message });
      expect(readUrlElicitations(failure)).toEqual([URL_ELICITATION]);
    },
  },
  {
    title: 'refuses URL elicitation without sending it, even to a client that declared it',
    eras: HANDSHAKE_ERA,
    server: async (run) => {
      const { sdkClient, asked, sent, sdkErrors } = await sdkClientAgainstOurPrimitives(run);
      // URL mode is a 2025-11-25 feature: even though the SDK client declared elicitation.url, nothing is sent.
      expect(await sdkClient.callTool({ name: 'open-url', arguments: {} })).toMatchObject({ isError: true });
      expect(asked.elicitation).toEqual([]);
      expect(sent.filter((message) => message.method === 'elicitation/create')).toEqual([]);
      expect(sdkErrors).toEqual([]);
    },
    client: async (run) => {
      const { mcp, seen } = await ourClientAgainstSdkPrimitives(run);
      // Whether the SDK server refuses locally (no elicitation.url declared) or our client answers with an error,
      // the URL handler must not run for a request this revision cannot express (it has no URL mode).
      const outcome = await mcp.server.elicitInput(URL_ELICITATION).catch((error: unknown) => error);
      expect(seen.url).toEqual([]);
      expect(outcome).toBeInstanceOf(Error);
    },
  },
  {
    title: 'refuses to send an elicitation completion',
    eras: HANDSHAKE_ERA,
    server: async (run) => {
      const { connection } = await sdkClientAgainstOurPrimitives(run);
      await expect(
        connection.notify('notifications/elicitation/complete', { elicitationId: 'elicitation-1' }),
      ).rejects.toBeInstanceOf(CapabilityNotSupportedError);
    },
  },
];
