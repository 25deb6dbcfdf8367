/**
 * The tools of the conformance suite's handshake-era server scenarios (fixture-server.ts serves them with the
 * rest of the fixture): the payloads each scenario's description asks for.
 */
import type { ServerContext } from '../../lib/server/context';
import type { ToolDefinition } from '../../lib/server/tools';
import type { CallToolResult } from '../../lib/protocol/types';
import type { ElicitParams } from '../../lib/protocol/client-features';
import { text } from '../helpers/content';

/** A 1x1 red PNG. */
export const PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';

/** A WAV file holding one silent 16-bit mono sample at 8 kHz. */
const WAV_BASE64 = (() => {
  const header = Buffer.alloc(46);
  header.write('RIFF', 0);
  header.writeUInt32LE(38, 4);
  header.write('WAVEfmt ', 8);
  header.writeUInt32LE(16, 16); // fmt chunk size
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(8000, 24); // sample rate
  header.writeUInt32LE(16000, 28); // byte rate
  header.writeUInt16LE(2, 32); // block align
  header.writeUInt16LE(16, 34); // bits per sample
  header.write('data', 36);
  header.writeUInt32LE(2, 40);
  return header.toString('base64');
})();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const NO_ARGUMENTS = { type: 'object' } as const;

type Context = ServerContext;

async function elicitAndReport(context: Context, params: ElicitParams, label: string): Promise<CallToolResult> {
  const result = await context.elicit(params);
  return text(`${label}: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`);
}

/** The tools the 2025-11-25 server scenarios call by name. */
export const handshakeTools: ToolDefinition<any>[] = [
  {
    name: 'test_simple_text',
    description: 'Returns one text block',
    inputSchema: NO_ARGUMENTS,
    handler: () => text('This is a simple text response for testing.'),
  },
  {
    name: 'test_image_content',
    description: 'Returns one PNG image',
    inputSchema: NO_ARGUMENTS,
    handler: () => ({ content: [{ type: 'image', data: PNG_BASE64, mimeType: 'image/png' }] }),
  },
  {
    name: 'test_audio_content',
    description: 'Returns one WAV clip',
    inputSchema: NO_ARGUMENTS,
    handler: () => ({ content: [{ type: 'audio', data: WAV_BASE64, mimeType: 'audio/wav' }] }),
  },
  {
    name: 'test_embedded_resource',
    description: 'Returns an embedded text resource',
    inputSchema: NO_ARGUMENTS,
    handler: () => ({
      content: [
        {
          type: 'resource',
          resource: {
            uri: 'test://embedded-resource',
            mimeType: 'text/plain',
            text: 'This is an embedded resource content.',
          },
        },
      ],
    }),
  },
  {
    name: 'test_multiple_content_types',
    description: 'Returns text, an image and an embedded resource',
    inputSchema: NO_ARGUMENTS,
    handler: () => ({
      content: [
        { type: 'text', text: 'Multiple content types test:' },
        { type: 'image', data: PNG_BASE64, mimeType: 'image/png' },
        {
          type: 'resource',
          resource: {
            uri: 'test://mixed-content-resource',
            mimeType: 'application/json',
            text: JSON.stringify({ test: 'data', value: 123 }),
          },
        },
      ],
    }),
  },
  {
    name: 'test_tool_with_logging',
    description: 'Logs three info messages while it runs',
    inputSchema: NO_ARGUMENTS,
    handler: async (_args, context) => {
      await context.log('info', 'Tool execution started');
      await sleep(50);
      await context.log('info', 'Tool processing data');
      await sleep(50);
      await context.log('info', 'Tool execution completed');
      return text('Tool with logging executed successfully');
    },
  },
  {
    name: 'test_tool_with_progress',
    description: 'Reports progress 0, 50 and 100 of 100',
    inputSchema: NO_ARGUMENTS,
    handler: async (_args, context) => {
      for (const step of [0, 50, 100]) {
        if (step > 0) await sleep(50);
        await context.progress(step, 100, `Completed step ${step} of 100`);
      }
      return text(`Progress reported for token ${String(context.progressToken)}`);
    },
  },
  {
    name: 'test_error_handling',
    description: 'Always fails: the failure is a tool result with isError',
    inputSchema: NO_ARGUMENTS,
    handler: () => {
      throw new Error('This tool intentionally returns an error for testing');
    },
  },
  {
    name: 'test_reconnection',
    description: 'Closes its SSE stream mid-call; the result reaches the client after it resumes (SEP-1699)',
    inputSchema: NO_ARGUMENTS,
    handler: async (_args, context) => {
      const closed = (await context.closeStream?.()) ?? false;
      await sleep(50);
      return text(
        closed
          ? 'Reconnection test completed: the stream was closed mid-call and the client resumed it.'
          : 'Reconnection test completed without closing the stream (this request cannot be resumed).',
      );
    },
  },
  {
    name: 'test_sampling',
    description: "Asks the client's model to answer a prompt",
    inputSchema: { type: 'object', properties: { prompt: { type: 'string' } }, required: ['prompt'] },
    handler: async ({ prompt }: { prompt: string }, context) => {
      const result = await context.createMessage({
        messages: [{ role: 'user', content: { type: 'text', text: prompt } }],
        maxTokens: 100,
      });
      const content = result.content as { type: string; text?: string };
      return text(`LLM response: ${content.type === 'text' ? content.text : `(${content.type})`}`);
    },
  },
  {
    name: 'test_elicitation',
    description: 'Asks the user for a username and an email address',
    inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
    handler: ({ message }: { message: string }, context) =>
      elicitAndReport(
        context,
        {
          message,
          requestedSchema: {
            type: 'object',
            properties: {
              username: { type: 'string', description: "User's response" },
              email: { type: 'string', description: "User's email address" },
            },
            required: ['username', 'email'],
          },
        },
        'User response',
      ),
  },
  {
    name: 'test_elicitation_sep1034_defaults',
    description: 'Elicits a form whose every primitive field has a default (SEP-1034)',
    inputSchema: NO_ARGUMENTS,
    handler: (_args, context) =>
      elicitAndReport(
        context,
        {
          message: 'Please review the form; every field has a default',
          requestedSchema: {
            type: 'object',
            properties: {
              name: { type: 'string', description: 'User name', default: 'John Doe' },
              age: { type: 'integer', description: 'User age', default: 30 },
              score: { type: 'number', description: 'User score', default: 95.5 },
              status: {
                type: 'string',
                description: 'User status',
                enum: ['active', 'inactive', 'pending'],
                default: 'active',
              },
              verified: { type: 'boolean', description: 'Verification status', default: true },
            },
          },
        },
        'Elicitation completed',
      ),
  },
  {
    name: 'test_elicitation_sep1330_enums',
    description: 'Elicits a form with the five enum forms (SEP-1330)',
    inputSchema: NO_ARGUMENTS,
    handler: (_args, context) =>
      elicitAndReport(
        context,
        {
          message: 'Please pick from each list',
          requestedSchema: {
            type: 'object',
            properties: {
              untitledSingle: { type: 'string', enum: ['option1', 'option2', 'option3'] },
              titledSingle: {
                type: 'string',
                oneOf: [
                  { const: 'value1', title: 'First Option' },
                  { const: 'value2', title: 'Second Option' },
                  { const: 'value3', title: 'Third Option' },
                ],
              },
              legacyEnum: {
                type: 'string',
                enum: ['opt1', 'opt2', 'opt3'],
                enumNames: ['Option One', 'Option Two', 'Option Three'],
              },
              untitledMulti: { type: 'array', items: { type: 'string', enum: ['option1', 'option2', 'option3'] } },
              titledMulti: {
                type: 'array',
                items: {
                  anyOf: [
                    { const: 'value1', title: 'First Choice' },
                    { const: 'value2', title: 'Second Choice' },
                    { const: 'value3', title: 'Third Choice' },
                  ],
                },
              },
            },
          },
        },
        'Elicitation completed',
      ),
  },
  {
    name: 'json_schema_2020_12_tool',
    description: 'Tool with JSON Schema 2020-12 features',
    inputSchema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      $defs: {
        address: {
          $anchor: 'address',
          type: 'object',
          properties: { street: { type: 'string' }, city: { type: 'string' } },
        },
      },
      properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' }, kind: { type: 'string' } },
      allOf: [{ anyOf: [{ required: ['name'] }, { required: ['address'] }] }],
      if: { properties: { kind: { const: 'business' } } },
      then: { required: ['address'] },
      else: {},
      additionalProperties: false,
    },
    handler: (args) => text(`Received ${JSON.stringify(args)}`),
  },
];
