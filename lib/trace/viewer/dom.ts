/** A few DOM helpers: elements built with their text, never with HTML strings (trace text is untrusted). */

/** An element with attributes (`class`, `aria-*`, ...) and children (strings become text nodes). */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string> = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
  element.append(...children);
  return element;
}

/** A `<select>` whose first option (value '') means "all". */
export function select(label: string, id: string, choices: readonly (readonly [string, string])[]): HTMLSelectElement {
  const element = h('select', { id, 'aria-label': label }, h('option', { value: '' }, `${label}: all`));
  for (const [value, text] of choices) element.append(h('option', { value }, text));
  return element;
}

/** Replaces the options after the first ("all") of `element`, keeping the choice made when it is still there. */
export function setChoices(element: HTMLSelectElement, choices: readonly (readonly [string, string])[]): void {
  const chosen = element.value;
  while (element.options.length > 1) element.remove(1);
  for (const [value, text] of choices) element.append(h('option', { value }, text));
  element.value = chosen;
  if (element.selectedIndex === -1) element.value = '';
}
