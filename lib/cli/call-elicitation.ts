/**
 * How `switchboard call` answers a server's form elicitation, in both eras (the handshake era's
 * `elicitation/create` request and a 2026-07-28 `input_required` round reach the same handler): with the
 * next `--answer`, checked against the form first; `--decline` or `--cancel`; or a prompt on the terminal.
 * With no answer to give (stdin not a terminal, no `--answer` left), or an `--answer` that does not fit, the
 * call stops: its request is cancelled, nothing is answered, and the failure says why and what the form asks.
 */
import { quote } from '../client/checks';
import type { ElicitationOptions } from '../client/features';
import type { ElicitFormParams, ElicitResult } from '../protocol/client-features';
import type { ElicitReply } from './elicit-args';
import { CliFailure } from './errors';
import { answerProblem, describeField, fieldsOf } from './form-fields';
import { promptForm, type PromptStreams } from './form-prompt';

export class CallElicitation {
  /** Why the call stopped at a question, once it has. */
  failure: CliFailure | undefined;
  private answered = 0;

  /**
   * `terminal`: where to prompt (undefined when stdin is not a terminal). `stop`: cancels the call's request.
   */
  constructor(
    private readonly reply: ElicitReply,
    private readonly terminal: PromptStreams | undefined,
    private readonly stop: (failure: CliFailure) => void,
  ) {}

  /** The client's elicitation option: form mode, whatever the reply, so the refusal is ours and clear. */
  get options(): ElicitationOptions {
    return { form: (params, context) => this.answer(params, context.signal) };
  }

  private async answer(params: ElicitFormParams, signal: AbortSignal): Promise<ElicitResult> {
    const { reply } = this;
    if (reply.kind === 'decline' || reply.kind === 'cancel') return { action: reply.kind };
    if (reply.kind === 'answers' && this.answered < reply.answers.length) {
      const content = reply.answers[this.answered++]!;
      const problem = answerProblem(params, content);
      if (problem === undefined) return { action: 'accept', content: content as ElicitResult['content'] };
      const which = reply.answers.length > 1 ? `--answer #${this.answered}` : '--answer';
      return this.fail(`${which} does not fit the form the server asks for: ${problem}`, params);
    }
    if (this.terminal) return promptForm(params, this.terminal, signal);
    const more = reply.kind === 'answers' ? ` after the ${reply.answers.length} --answer given` : '';
    return this.fail(
      `The server asks for input${more}, and stdin is not a terminal to ask on: give it with --answer '<json>' (or --decline, --cancel)`,
      params,
    );
  }

  private fail(message: string, params: ElicitFormParams): never {
    const form = fieldsOf(params).map((field) => `  ${describeField(field)}`);
    const failure = new CliFailure(message, [`the server asks: ${quote(params.message)}`, ...form]);
    this.failure = failure;
    this.stop(failure);
    throw failure;
  }
}
