/**
 * The interop suite, part 3b: prompts and completion, for both directions and both eras (see
 * `runInteropSuite` in ./interop.ts).
 */
import { expect } from 'vitest';
import { McpError } from '../../lib/jsonrpc/errors';
import type { CompleteParams, Completion } from '../../lib/protocol/types';
import { isAtLeast } from '../../lib/protocol/versions';
import { PROMPT_WIRE } from '../fixtures/interop-our-server';
import { BOTH_ERAS, ourClientAgainstSdkPrimitives, sdkClientAgainstOurPrimitives, type InteropCase } from './interop';

/**
 * A completion claim in both directions and both eras: what the SDK client asks our server and the values it
 * gets, and what our client asks the SDK's server and the completion it gets.
 */
function completionCase(
  title: string,
  ourServer: { ask: CompleteParams; values: string[] },
  sdkServer: { ask: CompleteParams; result: Completion },
): InteropCase {
  return {
    title,
    eras: BOTH_ERAS,
    server: async (run) => {
      const { sdkClient } = await sdkClientAgainstOurPrimitives(run);
      expect(await sdkClient.complete(ourServer.ask)).toEqual({ completion: { values: ourServer.values } });
    },
    client: async (run) => {
      const { client } = await ourClientAgainstSdkPrimitives(run);
      expect(await client.complete(sdkServer.ask)).toEqual(sdkServer.result);
    },
  };
}

export const PROMPT_CASES: InteropCase[] = [
  {
    title: 'lists prompts with the fields this revision carries',
    eras: BOTH_ERAS,
    server: async (run) => {
      const { sdkClient } = await sdkClientAgainstOurPrimitives(run);
      const { prompts } = await sdkClient.listPrompts();
      const [summarize, hello] = PROMPT_WIRE;
      const { title: _title, ...untitled } = summarize;
      expect(prompts).toEqual([isAtLeast(run.version, '2025-06-18') ? summarize : untitled, hello]);
    },
    client: async (run) => {
      const { client } = await ourClientAgainstSdkPrimitives(run);
      expect(await client.listPrompts()).toEqual([
        {
          name: 'review',
          title: 'Review',
          description: 'Reviews code',
          arguments: [
            { name: 'language', required: true },
            { name: 'code', description: 'The code', required: true },
          ],
        },
      ]);
    },
  },
  {
    title: 'gets a prompt with arguments',
    eras: BOTH_ERAS,
    server: async (run) => {
      const { sdkClient, sdkErrors } = await sdkClientAgainstOurPrimitives(run);
      expect(await sdkClient.getPrompt({ name: 'summarize', arguments: { id: 'beta', style: 'terse' } })).toEqual({
        messages: [
          { role: 'user', content: { type: 'text', text: 'Summarize note beta in a terse style' } },
          {
            role: 'user',
            content: { type: 'resource', resource: { uri: 'notes://beta', mimeType: 'text/plain', text: 'note beta' } },
          },
          { role: 'assistant', content: { type: 'text', text: 'Here is the summary:' } },
        ],
      });
      expect(sdkErrors).toEqual([]);
    },
    client: async (run) => {
      const { client } = await ourClientAgainstSdkPrimitives(run);
      expect(await client.getPrompt('review', { language: 'python', code: 'print(1)' })).toEqual({
        messages: [{ role: 'user', content: { type: 'text', text: 'Review this python:\nprint(1)' } }],
      });
    },
  },
  {
    title: 'gets a prompt without arguments, with its description',
    eras: BOTH_ERAS,
    server: async (run) => {
      const { sdkClient } = await sdkClientAgainstOurPrimitives(run);
      expect(await sdkClient.getPrompt({ name: 'hello' })).toEqual({
        description: 'A greeting',
        messages: [{ role: 'user', content: { type: 'text', text: 'Hello!' } }],
      });
    },
  },
  {
    title: 'answers a missing required prompt argument with -32602',
    eras: BOTH_ERAS,
    server: async (run) => {
      const { sdkClient } = await sdkClientAgainstOurPrimitives(run);
      const missing = await sdkClient
        .getPrompt({ name: 'summarize', arguments: { style: 'terse' } })
        .catch((error: unknown) => error);
      expect(missing).toBeInstanceOf(sdkClient.ProtocolError);
      expect(missing).toMatchObject({ code: -32602 });
      expect((missing as Error).message).toMatch(/needs the argument "id"/);
    },
    client: async (run) => {
      const { client } = await ourClientAgainstSdkPrimitives(run);
      const failure = await client.getPrompt('review', { language: 'python' }).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(McpError);
      expect(failure).toMatchObject({ code: -32602 });
    },
  },
  {
    title: 'answers an unknown prompt with -32602',
    eras: BOTH_ERAS,
    server: async (run) => {
      const { sdkClient } = await sdkClientAgainstOurPrimitives(run);
      await expect(sdkClient.getPrompt({ name: 'nope' })).rejects.toMatchObject({ code: -32602 });
    },
    client: async (run) => {
      const { client } = await ourClientAgainstSdkPrimitives(run);
      await expect(client.getPrompt('nope', {})).rejects.toMatchObject({ code: -32602 });
    },
  },
  completionCase(
    'completes a prompt argument',
    {
      ask: { ref: { type: 'ref/prompt', name: 'summarize' }, argument: { name: 'id', value: 'al' } },
      values: ['alpha', 'alpine'],
    },
    {
      ask: { ref: { type: 'ref/prompt', name: 'review' }, argument: { name: 'language', value: 'ty' } },
      result: { values: ['typescript', 'typst'], total: 2, hasMore: false },
    },
  ),
  completionCase(
    'completes a variable of a resource template',
    {
      ask: { ref: { type: 'ref/resource', uri: 'notes://{id}{?format}' }, argument: { name: 'id', value: 'g' } },
      values: ['gamma'],
    },
    {
      ask: { ref: { type: 'ref/resource', uri: 'notes://{id}' }, argument: { name: 'id', value: 'al' } },
      result: { values: ['alpha', 'alpine'], total: 2, hasMore: false },
    },
  ),
  completionCase(
    'completes to nothing when nothing matches or the argument has no completer',
    { ask: { ref: { type: 'ref/prompt', name: 'summarize' }, argument: { name: 'id', value: 'z' } }, values: [] },
    // `code` is not completable: nothing to suggest.
    {
      ask: { ref: { type: 'ref/prompt', name: 'review' }, argument: { name: 'code', value: 'x' } },
      result: { values: [], hasMore: false },
    },
  ),
  {
    title: 'answers the completion of an unknown prompt argument with -32602',
    eras: BOTH_ERAS,
    server: async (run) => {
      const { sdkClient } = await sdkClientAgainstOurPrimitives(run);
      await expect(
        sdkClient.complete({ ref: { type: 'ref/prompt', name: 'summarize' }, argument: { name: 'nope', value: '' } }),
      ).rejects.toMatchObject({ code: -32602 });
    },
  },
  {
    title: 'hands the completer the arguments already chosen',
    eras: BOTH_ERAS,
    server: async (run) => {
      const { sdkClient } = await sdkClientAgainstOurPrimitives(run);
      expect(
        await sdkClient.complete({
          ref: { type: 'ref/prompt', name: 'summarize' },
          argument: { name: 'style', value: 't' },
          context: { arguments: { id: 'beta' } },
        }),
      ).toEqual({ completion: { values: ['terse', 'technical'] } });
      expect(
        await sdkClient.complete({
          ref: { type: 'ref/resource', uri: 'notes://{id}{?format}' },
          argument: { name: 'id', value: 'be' },
          context: { arguments: { format: 'md' } },
        }),
      ).toEqual({ completion: { values: ['beta.md'] } });
    },
  },
];
