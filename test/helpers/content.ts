/** Builders and readers of tool results, shared by the tests (one definition each). */

/** A tool result with one text block. */
export const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });

/** A tool result whose one text block is `value` as JSON. */
export const json = (value: unknown) => text(JSON.stringify(value));

/** The text of every text block of a result, joined. */
export const textOf = (result: { content: readonly unknown[] }): string =>
  result.content.map((block) => (block as { text?: string }).text ?? '').join('');

/** The text of a result's first block, which the test knows to be a text block. */
export const firstText = (result: { content: readonly unknown[] }): string =>
  (result.content[0] as { text: string }).text;

/**
 * The JSON in a result's first block, which must be a text block (else it throws, failing the test). Free of
 * vitest, so that fixtures run as child processes can import this module.
 */
export function jsonOf(result: unknown): any {
  const [first] = (result as { content: { type: string; text?: string }[] }).content;
  if (first?.type !== 'text') throw new Error(`expected a text block first, got ${JSON.stringify(first)}`);
  return JSON.parse(first.text!);
}
