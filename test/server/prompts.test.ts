import { describe, expect, it } from 'vitest';
import { filter, firstValueFrom, take } from 'rxjs';
import { McpError } from '../../lib/jsonrpc/errors';
import { SUPPORTED_PROTOCOL_VERSIONS } from '../../lib/protocol/versions';
import { defineServer } from '../../lib/server/definition';
import type { PromptDefinition } from '../../lib/server/prompts';
import type { ResourceTemplateDefinition } from '../../lib/server/resources';
import { connectPair, serveRaw } from '../helpers/pair';
import { serverWith, tool } from '../helpers/fixtures';

const review: PromptDefinition = {
  name: 'code_review',
  title: 'Review code',
  description: 'Asks for a review of a snippet',
  icons: [{ src: 'https://example.com/review.png' }],
  arguments: [
    { name: 'language', title: 'Language', required: true },
    { name: 'code', required: true },
    { name: 'tone' },
  ],
  get: ({ language, code, tone }) => ({
    description: `Review of some ${language}`,
    messages: [
      { role: 'user', content: { type: 'text', text: `Review this ${language}${tone ? ` (${tone})` : ''}:\n${code}` } },
      {
        role: 'assistant',
        content: { type: 'text', text: 'Sure.', annotations: { priority: 1, lastModified: '2025-01-01T00:00:00Z' } },
      },
    ],
  }),
  complete: {
    language: (value) => ['typescript', 'python', 'rust', 'go'].filter((language) => language.startsWith(value)),
    tone: (_value, context) =>
      context.arguments.language === 'rust' ? ['borrow-checker strict'] : ['friendly', 'terse'],
  },
};

/** Every content block type, to see each one shaped or refused per revision. */
const gallery: PromptDefinition = {
  name: 'gallery',
  get: () => [
    { role: 'user', content: { type: 'text', text: 'look' } },
    { role: 'user', content: { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' } },
    {
      role: 'user',
      content: { type: 'resource', resource: { uri: 'file:///a.txt', text: 'a', mimeType: 'text/plain' } },
    },
    { role: 'user', content: { type: 'resource_link', uri: 'file:///b.txt', name: 'b', description: 'file b' } },
  ],
};

const singer: PromptDefinition = {
  name: 'singer',
  get: () => [{ role: 'assistant', content: { type: 'audio', data: 'UklGRg==', mimeType: 'audio/wav' } }],
};

const files: ResourceTemplateDefinition = {
  uriTemplate: 'file:///{dir}/{name}',
  name: 'files',
  read: () => '',
  complete: {
    name: () => Array.from({ length: 250 }, (_, i) => `file-${i}.txt`),
    dir: async (value) => ({
      values: ['src', 'test'].filter((dir) => dir.startsWith(value)),
      total: 2,
      hasMore: false,
    }),
  },
};

const definition = defineServer({
  name: 's',
  version: '1',
  prompts: [review, gallery, singer],
  resourceTemplates: [files],
});

describe('prompts', () => {
  for (const version of SUPPORTED_PROTOCOL_VERSIONS) {
    it(`lists and renders prompts for ${version}`, async () => {
      const { client } = await connectPair(definition, { protocolVersion: version });
      expect(client.serverCapabilities).toMatchObject({ prompts: { listChanged: true }, completions: {} });
      const [listed] = await client.listPrompts();
      expect(listed!.name).toBe('code_review');
      expect('title' in listed!).toBe(version >= '2025-06-18');
      expect('title' in listed!.arguments![0]!).toBe(version >= '2025-06-18');
      expect('icons' in listed!).toBe(version === '2025-11-25');
      const rendered = await client.getPrompt('code_review', { language: 'rust', code: 'fn main() {}' });
      expect(rendered.description).toBe('Review of some rust');
      expect(rendered.messages[0]).toEqual({
        role: 'user',
        content: { type: 'text', text: 'Review this rust:\nfn main() {}' },
      });
      expect(rendered.messages[1]!.content).toEqual({
        type: 'text',
        text: 'Sure.',
        annotations: version >= '2025-06-18' ? { priority: 1, lastModified: '2025-01-01T00:00:00Z' } : { priority: 1 },
      });
      const shown = await client.getPrompt('gallery');
      expect(shown.messages.map((message) => message.content.type)).toEqual(
        version >= '2025-06-18'
          ? ['text', 'image', 'resource', 'resource_link']
          : ['text', 'image', 'resource', 'text'],
      );
      if (version < '2025-06-18')
        expect(shown.messages[3]!.content).toEqual({ type: 'text', text: 'b: file:///b.txt (file b)' });
    });
  }

  it('answers -32602 for an unknown prompt, a missing required argument, or a non-string argument', async () => {
    const { client } = await connectPair(definition);
    await expect(client.getPrompt('nope')).rejects.toMatchObject({
      code: -32602,
      message: 'Invalid params: Unknown prompt: nope',
    });
    await expect(client.getPrompt('code_review', { code: 'x' })).rejects.toMatchObject({
      code: -32602,
      message: 'Invalid params: prompt code_review needs the argument "language"',
    });
    await expect(client.getPrompt('code_review')).rejects.toMatchObject({
      message: expect.stringContaining('"language", "code"'),
    });
    const { peer } = serveRaw(definition);
    await peer.initialize();
    const response = await peer.request('prompts/get', { name: 'code_review', arguments: { language: 1, code: 'x' } });
    expect(response.error).toEqual({ code: -32602, message: 'Invalid params: argument "language" must be a string' });
  });

  it('refuses content the revision cannot carry instead of sending it invalid', async () => {
    const { client: old } = await connectPair(definition, { protocolVersion: '2024-11-05' });
    const failure = await old.getPrompt('singer').catch((error) => error);
    expect(failure).toBeInstanceOf(McpError);
    expect(failure).toMatchObject({
      code: -32603,
      message: expect.stringContaining('audio content, which protocol revision 2024-11-05 cannot carry'),
    });
    const { client: current } = await connectPair(definition, { protocolVersion: '2025-03-26' });
    expect((await current.getPrompt('singer')).messages[0]!.content.type).toBe('audio');
  });

  it('announces prompts/list_changed', async () => {
    const { client, server } = await connectPair(definition);
    const changed = firstValueFrom(
      client.notifications$.pipe(
        filter((n) => n.method === 'notifications/prompts/list_changed'),
        take(1),
      ),
    );
    server.update((current) => current.withoutPrompts('singer'));
    await changed;
    expect((await client.promptList.get()).map((prompt) => prompt.name)).toEqual(['code_review', 'gallery']);
  });
});

describe('completion', () => {
  for (const version of SUPPORTED_PROTOCOL_VERSIONS) {
    it(`completes prompt arguments and template variables for ${version}`, async () => {
      const { client } = await connectPair(definition, { protocolVersion: version });
      expect(
        await client.complete({
          ref: { type: 'ref/prompt', name: 'code_review' },
          argument: { name: 'language', value: 'py' },
        }),
      ).toEqual({
        values: ['python'],
      });
      expect(
        await client.complete({
          ref: { type: 'ref/resource', uri: 'file:///{dir}/{name}' },
          argument: { name: 'dir', value: 's' },
        }),
      ).toEqual({
        values: ['src'],
        total: 2,
        hasMore: false,
      });
    });
  }

  it('passes the arguments already chosen', async () => {
    const { client } = await connectPair(definition);
    const completion = await client.complete({
      ref: { type: 'ref/prompt', name: 'code_review' },
      argument: { name: 'tone', value: '' },
      context: { arguments: { language: 'rust' } },
    });
    expect(completion.values).toEqual(['borrow-checker strict']);
  });

  it('returns at most 100 values with the total and hasMore', async () => {
    const { client } = await connectPair(definition);
    const completion = await client.complete({
      ref: { type: 'ref/resource', uri: 'file:///{dir}/{name}' },
      argument: { name: 'name', value: '' },
    });
    expect(completion.values).toHaveLength(100);
    expect(completion).toMatchObject({ total: 250, hasMore: true });
  });

  it('completes to nothing without a completer', async () => {
    const { client } = await connectPair(definition);
    expect(
      await client.complete({
        ref: { type: 'ref/prompt', name: 'code_review' },
        argument: { name: 'code', value: 'x' },
      }),
    ).toEqual({ values: [] });
  });

  it('refuses to complete for an unknown prompt, argument or resource template, naming it', async () => {
    const { client } = await connectPair(definition);
    await expect(
      client.complete({ ref: { type: 'ref/prompt', name: 'nope' }, argument: { name: 'x', value: '' } }),
    ).rejects.toMatchObject({
      code: -32602,
      message: 'Invalid params: Unknown prompt: nope',
    });
    await expect(
      client.complete({ ref: { type: 'ref/prompt', name: 'code_review' }, argument: { name: 'colour', value: '' } }),
    ).rejects.toMatchObject({
      message: 'Invalid params: Prompt code_review has no argument "colour"',
    });
    await expect(
      client.complete({ ref: { type: 'ref/resource', uri: 'file:///{nope}' }, argument: { name: 'nope', value: '' } }),
    ).rejects.toMatchObject({
      message: 'Invalid params: Unknown resource template: file:///{nope}',
    });
  });

  it('is not declared by a server without completers', async () => {
    const { client } = await connectPair(defineServer({ name: 's', version: '1', prompts: [gallery] }));
    expect(client.serverCapabilities?.completions).toBeUndefined();
    await expect(
      client.complete({ ref: { type: 'ref/prompt', name: 'gallery' }, argument: { name: 'x', value: '' } }),
    ).rejects.toThrow('The server did not declare the completions capability');
  });
});

describe('logging', () => {
  it('delivers the log messages at or above the level set on logs$', async () => {
    const logging = serverWith([
      tool('log', async (_a, ctx) => {
        await ctx.log('notice', { step: 1 }, 'worker');
        await ctx.log('debug', 'noise');
        return { content: [] };
      }),
    ]);
    const { client } = await connectPair(logging);
    const logs: unknown[] = [];
    client.logs$.subscribe({ next: (entry) => logs.push(entry), error: () => undefined });
    await client.setLoggingLevel('info');
    await client.callTool('log');
    expect(logs).toEqual([{ level: 'notice', logger: 'worker', data: { step: 1 } }]);
  });
});
