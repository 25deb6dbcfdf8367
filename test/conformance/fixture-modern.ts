/**
 * What the conformance suite's 2026-07-28 server scenarios look up in the fixture (research
 * stateless-2026.md §6): the diagnostic tools of `server-stateless`, the multi round-trip (input_required)
 * tools and prompt, a tool with `x-mcp-header` parameters, and the triggers that change the tool and prompt
 * lists. Every handler is an ordinary one: the same `ctx.elicit` / `ctx.createMessage` / `ctx.listRoots`
 * serve legacy sessions (requests to the client) and modern requests (input_required rounds).
 */
import type { ServerContext } from '../../lib/server/context';
import type { PromptDefinition } from '../../lib/server/prompts';
import type { Server } from '../../lib/server/server';
import type { ToolDefinition } from '../../lib/server/tools';
import type { CallToolResult } from '../../lib/protocol/types';
import type { ElicitParams } from '../../lib/protocol/client-features';
import { text } from '../helpers/content';

const NO_ARGUMENTS = { type: 'object' } as const;

/** The servers the triggers change: every `Server` the fixture serves. */
export const triggerTargets = new Set<Server>();

const ASK_NAME: ElicitParams = {
  message: 'What is your name?',
  requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
};

const ASK_COLOR: ElicitParams = {
  message: 'What is your favourite colour?',
  requestedSchema: { type: 'object', properties: { color: { type: 'string' } }, required: ['color'] },
};

function askModel(context: ServerContext, question: string) {
  return context.createMessage({
    messages: [{ role: 'user', content: { type: 'text', text: question } }],
    maxTokens: 50,
  });
}

async function greet(context: ServerContext): Promise<CallToolResult> {
  const answer = await context.elicit(ASK_NAME, { key: 'user_name' });
  const name = (answer.content as { name?: unknown } | undefined)?.name;
  return text(answer.action === 'accept' ? `Hello, ${String(name)}!` : `Elicitation ${answer.action}`);
}

let toggles = 0;

/** Adds or removes a spare tool (or prompt) on every served server, so the list changes each time. */
function toggle(kind: 'tool' | 'prompt'): CallToolResult {
  const name = kind === 'tool' ? 'test_dynamic_tool' : 'test_dynamic_prompt';
  const adding = ++toggles % 2 === 1;
  for (const server of triggerTargets) {
    server.update((definition) => {
      if (kind === 'tool') {
        return adding
          ? definition.withTools({
              name,
              description: 'Comes and goes',
              inputSchema: NO_ARGUMENTS,
              handler: () => text('here'),
            })
          : definition.withoutTools(name);
      }
      return adding
        ? definition.withPrompts({ name, description: 'Comes and goes', get: () => [] })
        : definition.withoutPrompts(name);
    });
  }
  return text(`The ${kind} list changed`);
}

export const modernTools: ToolDefinition<any>[] = [
  {
    name: 'test_missing_capability',
    description: "Needs the client's sampling capability (a request without it gets -32021)",
    inputSchema: NO_ARGUMENTS,
    handler: async (_args, context) => {
      const result = await askModel(context, 'Say hello');
      return text(`The model said: ${JSON.stringify(result.content)}`);
    },
  },
  {
    name: 'test_streaming_elicitation',
    description: 'Asks the user through an input_required round (never a request on the stream)',
    inputSchema: NO_ARGUMENTS,
    handler: (_args, context) => greet(context),
  },
  {
    name: 'test_logging_tool',
    description: "Logs three messages: only sent when the request's _meta sets a log level",
    inputSchema: NO_ARGUMENTS,
    handler: async (_args, context) => {
      for (const step of ['starting', 'working', 'done']) await context.log('info', `test_logging_tool: ${step}`);
      return text('Logged three messages');
    },
  },
  {
    name: 'test_trigger_tool_change',
    description: 'Changes the tool list',
    inputSchema: NO_ARGUMENTS,
    handler: () => toggle('tool'),
  },
  {
    name: 'test_trigger_prompt_change',
    description: 'Changes the prompt list',
    inputSchema: NO_ARGUMENTS,
    handler: () => toggle('prompt'),
  },
  {
    name: 'test_input_required_result_elicitation',
    description: 'Asks the user for a name (inputRequests.user_name)',
    inputSchema: NO_ARGUMENTS,
    handler: (_args, context) => greet(context),
  },
  {
    name: 'test_input_required_result_sampling',
    description: "Asks the client's model",
    inputSchema: NO_ARGUMENTS,
    handler: async (_args, context) => {
      const result = await askModel(context, 'What is 2 + 2?');
      return text(`The model said: ${JSON.stringify(result.content)}`);
    },
  },
  {
    name: 'test_input_required_result_list_roots',
    description: "Lists the client's roots",
    inputSchema: NO_ARGUMENTS,
    handler: async (_args, context) => {
      const roots = await context.listRoots();
      return text(`Roots: ${roots.map((root) => root.uri).join(', ') || '(none)'}`);
    },
  },
  {
    name: 'test_input_required_result_request_state',
    description: 'Asks for a confirmation; the round carries a sealed requestState',
    inputSchema: NO_ARGUMENTS,
    handler: async (_args, context) => {
      const answer = await context.elicit(
        { message: 'Confirm?', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } } },
        { key: 'confirmation' },
      );
      return text(answer.action === 'accept' ? 'state-ok' : `Elicitation ${answer.action}`);
    },
  },
  {
    name: 'test_input_required_result_multiple_inputs',
    description: 'Asks for a name, a model answer and the roots at once',
    inputSchema: NO_ARGUMENTS,
    handler: async (_args, context) => {
      const [answer, sampled, roots] = await Promise.all([
        context.elicit(ASK_NAME, { key: 'user_name' }),
        askModel(context, 'Say hello'),
        context.listRoots(),
      ]);
      return text(`name: ${answer.action}, model: ${sampled.model}, roots: ${roots.length}`);
    },
  },
  {
    name: 'test_input_required_result_multi_round',
    description: 'Asks for a name, then a colour: two rounds',
    inputSchema: NO_ARGUMENTS,
    handler: async (_args, context) => {
      const name = await context.elicit(ASK_NAME, { key: 'user_name' });
      const color = await context.elicit(ASK_COLOR, { key: 'favourite_color' });
      return text(`name: ${JSON.stringify(name.content)}, colour: ${JSON.stringify(color.content)}`);
    },
  },
  {
    name: 'test_input_required_result_tampered_state',
    description: 'Asks for a name; a tampered requestState is refused',
    inputSchema: NO_ARGUMENTS,
    handler: (_args, context) => greet(context),
  },
  {
    name: 'test_input_required_result_capabilities',
    description: 'Asks only for what the client declared: the user if it can elicit, else its model',
    inputSchema: NO_ARGUMENTS,
    handler: async (_args, context) => {
      if (context.connection.clientCapabilities?.elicitation) return greet(context);
      const result = await askModel(context, 'Say hello');
      return text(`The model said: ${JSON.stringify(result.content)}`);
    },
  },
  {
    name: 'test_custom_header_params',
    description: 'Mirrors its region and tenant parameters as Mcp-Param-* headers',
    inputSchema: {
      type: 'object',
      properties: {
        region: { type: 'string', 'x-mcp-header': 'Region' },
        tenant: { type: 'integer', 'x-mcp-header': 'Tenant' },
        query: { type: 'string' },
      },
    },
    handler: (args: { region?: string; tenant?: number; query?: string }) =>
      text(`region=${args.region ?? ''} tenant=${args.tenant ?? ''} query=${args.query ?? ''}`),
  },
];

export const modernPrompts: PromptDefinition[] = [
  {
    name: 'test_input_required_result_prompt',
    description: 'A prompt that asks the user for a name first',
    get: async (_args, context) => {
      const answer = await context.elicit(ASK_NAME, { key: 'user_name' });
      const name = (answer.content as { name?: unknown } | undefined)?.name;
      return [{ role: 'user', content: { type: 'text', text: `Write a greeting for ${String(name)}` } }];
    },
  },
];
