/**
 * How `switchboard call` answers a server that asks the user for input (form elicitation): `--answer '{...}'`
 * (repeatable, one per question, in order), `--decline` or `--cancel` for every question, or else a prompt on
 * the terminal. Only read here; each answer is checked against the form it answers when the question comes.
 */
import type { JsonObject } from '../jsonrpc/types';
import { UsageError } from './errors';

export type ElicitReply =
  /** The forms' contents, in the order the questions come; past them, as `prompt`. */
  | { readonly kind: 'answers'; readonly answers: readonly JsonObject[] }
  | { readonly kind: 'decline' }
  | { readonly kind: 'cancel' }
  /** Ask on the terminal; refused when stdin is not one. */
  | { readonly kind: 'prompt' };

export const PROMPT: ElicitReply = { kind: 'prompt' };

export function parseElicitReply(
  answers: readonly string[] | undefined,
  decline: boolean,
  cancel: boolean,
): ElicitReply {
  const given = [answers && '--answer', decline && '--decline', cancel && '--cancel'].filter(Boolean);
  if (given.length > 1) throw new UsageError(`${given.join(' and ')} cannot be given together`);
  if (decline) return { kind: 'decline' };
  if (cancel) return { kind: 'cancel' };
  return answers ? { kind: 'answers', answers: answers.map(parseAnswer) } : PROMPT;
}

function parseAnswer(text: string): JsonObject {
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--answer is not valid JSON (${(error as Error).message}): ${text}`);
  }
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) {
    throw new UsageError(`--answer needs a JSON object of the form's fields, for example '{"name":"Ada","age":36}'`);
  }
  return answer as JsonObject;
}
