import { describe, expect, it } from 'vitest';
import { specAccepts, expectInvalidParams, expectTypeError, thrown } from '../helpers/rules';
import { checkCreateMessageParams, checkCreateMessageResult, type SamplingDeclared } from '../../lib/client/sampling';

const BASIC: SamplingDeclared = { tools: false, context: false };
const TOOLS: SamplingDeclared = { tools: true, context: false };
const ALL: SamplingDeclared = { tools: true, context: true };

const text = (value: string) => ({ type: 'text', text: value });
const user = (content: unknown) => ({ role: 'user', content });
const assistant = (content: unknown) => ({ role: 'assistant', content });
const use = (id: string, name = 'get_weather') => ({ type: 'tool_use', id, name, input: { city: id } });
const result = (toolUseId: string) => ({ type: 'tool_result', toolUseId, content: [text(`result ${toolUseId}`)] });

const weatherTool = {
  name: 'get_weather',
  description: 'Get current weather for a city',
  inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

const request = (messages: unknown[], extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  messages,
  maxTokens: 100,
  ...extra,
});

/** The spec's follow-up request: a user question, two parallel tool uses, both answered. */
const toolLoop = () =>
  request(
    [
      user(text("What's the weather like in Paris and London?")),
      assistant([use('call_abc123'), use('call_def456')]),
      user([result('call_abc123'), result('call_def456')]),
    ],
    { tools: [weatherTool] },
  );

describe('checkCreateMessageParams: valid requests', () => {
  it('accepts a minimal text request and returns the params object itself', () => {
    const params = request([user(text('What is the capital of France?'))]);
    expect(specAccepts('CreateMessageRequestParams', params)).toBe(true);
    expect(checkCreateMessageParams(params, BASIC)).toBe(params);
  });

  it('accepts every optional field', () => {
    const params = request([user(text('hi')), assistant(text('hello')), user(text('again'))], {
      modelPreferences: { hints: [{ name: 'claude-3-sonnet' }, { name: 'claude' }], intelligencePriority: 0.8 },
      systemPrompt: 'You are a helpful assistant.',
      includeContext: 'thisServer',
      temperature: 0.7,
      stopSequences: ['\n\n'],
      metadata: { provider: 'x' },
      task: { ttl: 60000 },
      _meta: { progressToken: 'p1' },
    });
    expect(specAccepts('CreateMessageRequestParams', params)).toBe(true);
    expect(checkCreateMessageParams(params, ALL)).toBe(params);
  });

  it('accepts image and audio blocks, single or in an array', () => {
    const image = { type: 'image', data: 'aGVsbG8=', mimeType: 'image/png' };
    const audio = { type: 'audio', data: 'aGVsbG8=', mimeType: 'audio/wav', annotations: { priority: 1 } };
    const params = request([user(image), assistant(text('nice')), user([text('and this'), audio])]);
    expect(specAccepts('CreateMessageRequestParams', params)).toBe(true);
    expect(checkCreateMessageParams(params, BASIC)).toBe(params);
  });

  it('accepts the tool loop from the spec when sampling.tools is declared', () => {
    const params = toolLoop();
    expect(specAccepts('CreateMessageRequestParams', params)).toBe(true);
    expect(checkCreateMessageParams(params, TOOLS)).toBe(params);
  });

  it('accepts tool results in any order, with every kind of tool result content', () => {
    const rich = {
      type: 'tool_result',
      toolUseId: 'a',
      content: [
        text('t'),
        { type: 'image', data: 'aGk=', mimeType: 'image/png' },
        { type: 'resource_link', uri: 'file:///x', name: 'x' },
        { type: 'resource', resource: { uri: 'file:///y', text: 'y' } },
      ],
      structuredContent: { ok: true },
      isError: false,
    };
    const params = request([user(text('go')), assistant([use('a'), use('b')]), user([result('b'), rich])], {
      tools: [weatherTool],
      toolChoice: { mode: 'required' },
    });
    expect(specAccepts('CreateMessageRequestParams', params)).toBe(true);
    expect(checkCreateMessageParams(params, TOOLS)).toBe(params);
  });

  it('accepts several tool rounds and text after the last results', () => {
    const params = request(
      [
        user(text('go')),
        assistant(use('a')),
        user(result('a')),
        assistant([text('one more'), use('b')]),
        user([result('b')]),
        assistant(text('done?')),
        user(text('yes')),
      ],
      { tools: [weatherTool] },
    );
    expect(specAccepts('CreateMessageRequestParams', params)).toBe(true);
    expect(checkCreateMessageParams(params, TOOLS)).toBe(params);
  });
});

describe('checkCreateMessageParams: shape', () => {
  it('refuses params that are not an object', () => {
    expectInvalidParams(() => checkCreateMessageParams(undefined, BASIC), 'params must be an object');
    expectInvalidParams(() => checkCreateMessageParams([], BASIC), 'params must be an object');
  });

  it('refuses missing or empty messages', () => {
    expect(specAccepts('CreateMessageRequestParams', { maxTokens: 10 })).toBe(false);
    expectInvalidParams(() => checkCreateMessageParams({ maxTokens: 10 }, BASIC), 'messages must be an array');
    expectInvalidParams(() => checkCreateMessageParams(request([]), BASIC), 'messages must not be empty');
  });

  it('refuses a missing, fractional or non-positive maxTokens', () => {
    const messages = [user(text('hi'))];
    expect(specAccepts('CreateMessageRequestParams', { messages })).toBe(false);
    expect(specAccepts('CreateMessageRequestParams', { messages, maxTokens: 1.5 })).toBe(false);
    for (const maxTokens of [undefined, 1.5, '100', 0, -1])
      expectInvalidParams(() => checkCreateMessageParams({ messages, maxTokens }, BASIC), 'maxTokens');
  });

  it('names the message whose role is wrong', () => {
    const params = request([user(text('hi')), { role: 'system', content: text('x') }]);
    expect(specAccepts('CreateMessageRequestParams', params)).toBe(false);
    expectInvalidParams(() => checkCreateMessageParams(params, BASIC), 'messages[1].role', '"system"');
    expectInvalidParams(() => checkCreateMessageParams(request(['hi']), BASIC), 'messages[0] must be an object');
  });

  it('names the block that is malformed', () => {
    const cases: [unknown, string][] = [
      [user({ type: 'video', url: 'x' }), 'messages[0].content has unknown content type "video"'],
      [user([text('a'), { type: 'text' }]), 'messages[0].content[1].text must be a string'],
      [user({ type: 'image', data: 'aGk=' }), 'messages[0].content.mimeType must be a string'],
      [user({ type: 'audio', mimeType: 'audio/wav' }), 'messages[0].content.data must be a string'],
      [user('just a string'), 'messages[0].content must be a content block'],
      [user({ ...text('a'), annotations: 'high' }), 'messages[0].content.annotations must be an object'],
    ];
    for (const [message, fragment] of cases) {
      expect(specAccepts('CreateMessageRequestParams', request([message]))).toBe(false);
      expectInvalidParams(() => checkCreateMessageParams(request([message]), BASIC), fragment);
    }
  });

  it('names malformed tool_use and tool_result blocks', () => {
    const cases: [unknown, string][] = [
      [{ type: 'tool_use', id: 'a', name: 'get_weather' }, 'messages[1].content.input must be an object'],
      [{ type: 'tool_use', id: 7, name: 'n', input: {} }, 'messages[1].content.id must be a string'],
    ];
    for (const [block, fragment] of cases)
      expectInvalidParams(
        () => checkCreateMessageParams(request([user(text('go')), assistant(block)], { tools: [weatherTool] }), TOOLS),
        fragment,
      );
    const badResults: [unknown, string][] = [
      [{ type: 'tool_result', toolUseId: 'a', content: 'done' }, 'messages[2].content.content must be an array'],
      [{ type: 'tool_result', toolUseId: 'a', content: [{ type: 'tool_use' }] }, 'content.content[0] has unknown'],
      [{ type: 'tool_result', toolUseId: 'a', content: [], isError: 'no' }, 'messages[2].content.isError'],
      [{ type: 'tool_result', content: [] }, 'messages[2].content.toolUseId must be a string'],
    ];
    for (const [block, fragment] of badResults) {
      const params = request([user(text('go')), assistant(use('a')), user(block)], { tools: [weatherTool] });
      expect(specAccepts('CreateMessageRequestParams', params)).toBe(false);
      expectInvalidParams(() => checkCreateMessageParams(params, TOOLS), fragment);
    }
  });

  it('checks the optional fields', () => {
    const messages = [user(text('hi'))];
    const cases: [Record<string, unknown>, string][] = [
      [{ systemPrompt: 1 }, 'systemPrompt must be a string'],
      [{ temperature: 'hot' }, 'temperature must be a number'],
      [{ stopSequences: ['a', 1] }, 'stopSequences must be an array of strings'],
      [{ metadata: [] }, 'metadata must be an object'],
      [{ modelPreferences: { costPriority: 1.5 } }, 'modelPreferences.costPriority must be a number between 0 and 1'],
      [{ modelPreferences: { hints: [{ name: 3 }] } }, 'modelPreferences.hints[0].name must be a string'],
      [{ includeContext: 'everything' }, 'includeContext must be'],
      [{ task: { ttl: 'long' } }, 'task.ttl must be an integer'],
    ];
    for (const [extra, fragment] of cases) {
      expect(specAccepts('CreateMessageRequestParams', request(messages, extra))).toBe(false);
      expectInvalidParams(() => checkCreateMessageParams(request(messages, extra), ALL), fragment);
    }
  });
});

describe('checkCreateMessageParams: capabilities', () => {
  it('refuses tools when the client did not declare sampling.tools', () => {
    const params = request([user(text('hi'))], { tools: [weatherTool] });
    expectInvalidParams(() => checkCreateMessageParams(params, BASIC), 'tools is present', 'sampling.tools');
    expect(checkCreateMessageParams(params, TOOLS)).toBe(params);
  });

  it('refuses toolChoice when the client did not declare sampling.tools', () => {
    const params = request([user(text('hi'))], { toolChoice: { mode: 'none' } });
    expectInvalidParams(() => checkCreateMessageParams(params, BASIC), 'toolChoice is present', 'sampling.tools');
    expect(checkCreateMessageParams(params, TOOLS)).toBe(params);
  });

  it('refuses tool_use and tool_result blocks when the client did not declare sampling.tools', () => {
    const params = toolLoop();
    const { tools: _tools, ...withoutTools } = params;
    expectInvalidParams(
      () => checkCreateMessageParams(withoutTools, BASIC),
      'messages[1].content[0] is a tool_use block',
      'sampling.tools',
    );
    const resultsOnly = request([user(result('x'))]);
    expectInvalidParams(
      () => checkCreateMessageParams(resultsOnly, BASIC),
      'messages[0].content is a tool_result block',
      'sampling.tools',
    );
  });

  it('checks the shape of tools and toolChoice', () => {
    const messages = [user(text('hi'))];
    const cases: [Record<string, unknown>, string][] = [
      [{ tools: weatherTool }, 'tools must be an array'],
      [{ tools: [{ name: 'x' }] }, 'tools[0].inputSchema must be an object schema'],
      [{ tools: [weatherTool, { name: 'y', inputSchema: { type: 'string' } }] }, 'tools[1].inputSchema'],
      [{ tools: [{ inputSchema: { type: 'object' } }] }, 'tools[0].name must be a string'],
      [{ toolChoice: { mode: 'always' } }, 'toolChoice.mode must be'],
      [{ toolChoice: 'auto' }, 'toolChoice must be an object'],
    ];
    for (const [extra, fragment] of cases) {
      expect(specAccepts('CreateMessageRequestParams', request(messages, extra))).toBe(false);
      expectInvalidParams(() => checkCreateMessageParams(request(messages, extra), TOOLS), fragment);
    }
  });

  it('downgrades includeContext to "none" when sampling.context is not declared, without touching the input', () => {
    for (const includeContext of ['thisServer', 'allServers']) {
      const params = Object.freeze(request([user(text('hi'))], { includeContext }));
      const checked = checkCreateMessageParams(params, TOOLS);
      expect(checked).toEqual({ ...params, includeContext: 'none' });
      expect(params.includeContext).toBe(includeContext);
      expect(checkCreateMessageParams(params, ALL)).toBe(params);
    }
    const none = request([user(text('hi'))], { includeContext: 'none' });
    expect(checkCreateMessageParams(none, BASIC)).toBe(none);
  });
});

describe('checkCreateMessageParams: tool-use rules (2025-11-25)', () => {
  const check = (messages: unknown[]) => checkCreateMessageParams(request(messages, { tools: [weatherTool] }), TOOLS);

  it('refuses a tool_result message that also holds other content', () => {
    const messages = [
      user(text('go')),
      assistant(use('call_123')),
      user([text('Here are the results:'), result('call_123')]),
    ];
    expect(specAccepts('CreateMessageRequestParams', request(messages))).toBe(true);
    expectInvalidParams(
      () => check(messages),
      'messages[2] holds tool_result blocks, so it must contain only tool_result blocks',
      'messages[2].content[0] is text',
    );
  });

  it('refuses a tool_use that the next message does not answer (the spec example)', () => {
    const messages = [
      user(text("What's the weather like in Paris and London?")),
      assistant([use('call_abc123'), use('call_def456')]),
      user(result('call_abc123')),
      assistant(text('Paris is nice')),
    ];
    expectInvalidParams(
      () => check(messages),
      'messages[1].content[1]: tool_use "call_def456" has no matching tool_result in messages[2]',
    );
  });

  it('refuses a tool_use answered by plain text or followed by another assistant message', () => {
    expectInvalidParams(
      () => check([user(text('go')), assistant(use('a')), user(text('never mind'))]),
      'tool_use "a" has no matching tool_result in messages[2]',
    );
    expectInvalidParams(
      () => check([user(text('go')), assistant(use('a')), assistant(text('hmm'))]),
      'messages[1].content: tool_use "a" has no matching tool_result in messages[2]',
    );
  });

  it('refuses a tool_use in the last message: nothing answers it', () => {
    expectInvalidParams(
      () => check([user(text('go')), assistant([text('calling'), use('last')])]),
      'messages[1].content[1]: tool_use "last" is not answered',
    );
  });

  it("quotes at most an excerpt of the server's strings in its refusal", () => {
    const huge = 'z'.repeat(200_000);
    const error = thrown(() => check([user(text('go')), assistant(use('a')), user([result('a'), result(huge)])]));
    expect((error as Error).message).toContain(
      `toolUseId "${'z'.repeat(80)}"… (200000 characters) matches no tool_use`,
    );
    expect((error as Error).message.length).toBeLessThan(300);
  });

  it('refuses a tool_result whose toolUseId matches no tool_use of the preceding assistant message', () => {
    expectInvalidParams(
      () => check([user(text('go')), assistant(use('a')), user([result('a'), result('zzz')])]),
      'messages[2].content[1]: tool_result for toolUseId "zzz" matches no tool_use in the preceding assistant message',
    );
    expectInvalidParams(() => check([user(result('orphan'))]), 'toolUseId "orphan" matches no tool_use');
  });

  it('refuses results for a tool_use of an earlier turn', () => {
    const messages = [
      user(text('go')),
      assistant(use('a')),
      user(result('a')),
      assistant(text('ok')),
      user(result('a')),
    ];
    expectInvalidParams(
      () => check(messages),
      'messages[4].content: tool_result for toolUseId "a" matches no tool_use',
    );
  });

  it('refuses tool_use from the user and tool_result from the assistant', () => {
    expectInvalidParams(
      () => check([user(use('a'))]),
      'messages[0].content: tool_use blocks may only appear in assistant messages',
    );
    expectInvalidParams(
      () => check([user(text('go')), assistant(use('a')), assistant(result('a'))]),
      'messages[2].content: tool_result blocks may only appear in user messages',
    );
  });

  it('refuses duplicate tool_use ids and duplicate answers', () => {
    expectInvalidParams(
      () => check([user(text('go')), assistant([use('a'), use('a')]), user([result('a')])]),
      'messages[1].content[1]: tool_use id "a" is used twice',
    );
    expectInvalidParams(
      () => check([user(text('go')), assistant(use('a')), user([result('a'), result('a')])]),
      'messages[2].content[1]: toolUseId "a" is answered twice',
    );
  });
});

describe('checkCreateMessageResult', () => {
  const plain = checkCreateMessageParams(request([user(text('hi'))]), BASIC);
  const withTools = checkCreateMessageParams(toolLoop(), TOOLS);

  it('accepts a text result and returns it', () => {
    const answer = {
      role: 'assistant',
      content: text('Paris.'),
      model: 'claude-3-sonnet-20240307',
      stopReason: 'endTurn',
    };
    expect(specAccepts('CreateMessageResult', answer)).toBe(true);
    expect(checkCreateMessageResult(answer, plain)).toBe(answer);
  });

  it('accepts parallel tool uses of offered tools (the spec example) and open stop reasons', () => {
    const answer = {
      role: 'assistant',
      content: [use('call_abc123'), use('call_def456')],
      model: 'claude-3-sonnet-20240307',
      stopReason: 'toolUse',
    };
    expect(specAccepts('CreateMessageResult', answer)).toBe(true);
    expect(checkCreateMessageResult(answer, withTools)).toBe(answer);
    const custom = { role: 'assistant', content: [text('x')], model: 'm', stopReason: 'provider_specific' };
    expect(checkCreateMessageResult(custom, withTools)).toBe(custom);
  });

  it('names shape errors', () => {
    const cases: [unknown, string][] = [
      [undefined, 'the handler must return an object'],
      [{ role: 'bot', content: text('x'), model: 'm' }, 'role must be "user" or "assistant"'],
      [{ role: 'assistant', content: text('x') }, 'model must be a string'],
      [{ role: 'assistant', content: text('x'), model: 'm', stopReason: 1 }, 'stopReason must be a string'],
      [
        { role: 'assistant', content: [text('x'), { type: 'html' }], model: 'm' },
        'content[1] has unknown content type',
      ],
      [{ role: 'assistant', model: 'm' }, 'content must be a content block'],
      [{ role: 'assistant', content: { type: 'text', text: 5 }, model: 'm' }, 'content.text must be a string'],
    ];
    for (const [answer, fragment] of cases) {
      expect(specAccepts('CreateMessageResult', answer)).toBe(false);
      expectTypeError(() => checkCreateMessageResult(answer, plain), 'sampling/createMessage result', fragment);
    }
  });

  it('refuses tool_use when the request offered no tools', () => {
    const answer = { role: 'assistant', content: use('a'), model: 'm', stopReason: 'toolUse' };
    expect(specAccepts('CreateMessageResult', answer)).toBe(true);
    expectTypeError(() => checkCreateMessageResult(answer, plain), 'content is a tool_use block', 'offered no tools');
  });

  it('refuses tool_use when toolChoice is "none"', () => {
    const none = checkCreateMessageParams({ ...toolLoop(), toolChoice: { mode: 'none' } }, TOOLS);
    const answer = { role: 'assistant', content: [text('x'), use('a')], model: 'm' };
    expectTypeError(() => checkCreateMessageResult(answer, none), 'content[1] is a tool_use block', '"none"');
  });

  it('refuses a call to a tool the request did not offer', () => {
    const answer = { role: 'assistant', content: use('a', 'rm_rf'), model: 'm' };
    expectTypeError(() => checkCreateMessageResult(answer, withTools), 'calls tool "rm_rf"');
  });

  it('refuses tool_use from the user role, duplicate ids and tool_result blocks', () => {
    expectTypeError(
      () => checkCreateMessageResult({ role: 'user', content: use('a'), model: 'm' }, withTools),
      'must have role "assistant"',
    );
    expectTypeError(
      () => checkCreateMessageResult({ role: 'assistant', content: [use('a'), use('a')], model: 'm' }, withTools),
      'content[1]: tool_use id "a" is used twice',
    );
    expectTypeError(
      () => checkCreateMessageResult({ role: 'assistant', content: result('a'), model: 'm' }, withTools),
      'content is a tool_result block',
    );
  });
});
