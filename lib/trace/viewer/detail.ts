/**
 * The detail pane: everything about the selected event, the timeline of its request (when it stands for one),
 * and its message as JSON (redacted as recorded).
 */
import { causeText, errorText, offsetText, rowText } from './describe';
import { h } from './dom';
import type { Row, TraceModel } from './model';
import { waterfallSection } from './waterfall';

export class DetailPane {
  readonly element = h(
    'aside',
    { id: 'detail', 'aria-label': 'Event detail', 'aria-live': 'polite' },
    h('p', { class: 'hint' }, 'Select an event to see its message.'),
  );

  constructor(private readonly onGoTo: (row: number) => void) {}

  clear(): void {
    this.element.replaceChildren(h('p', { class: 'hint' }, 'Select an event to see its message.'));
  }

  show(model: TraceModel, row: Row): void {
    const { event } = row;
    const lane = model.lanes[row.lane]!;
    const fields: [string, string | undefined][] = [
      ['time', `${new Date(event.time).toISOString()} (${offsetText(event.time, model.start)})`],
      ['lane', lane.label],
      ['connection', event.connection],
      ['role', event.role],
      ['upstream', event.upstream],
      ['kind', event.kind],
      ['direction', event.direction],
      ['method', event.method],
      ['id', event.id === undefined ? undefined : String(event.id)],
      ['tool', row.tool],
      ['status', row.status],
      ['duration', row.durationMs === undefined ? undefined : `${row.durationMs} ms`],
      ['error', errorText(row) || undefined],
      ['cause', causeText(row, model) || undefined],
      ['trace id', event.traceId],
      ['span id', event.spanId],
      ['reason', event.reason],
    ];
    const list = h('dl');
    for (const [name, value] of fields) if (value !== undefined) list.append(h('dt', {}, name), h('dd', {}, value));
    const links = h('p', { class: 'links' });
    if (row.causeRow !== undefined) links.append(this.goTo('Go to the cause', row.causeRow));
    if (row.pairRow !== undefined) {
      links.append(this.goTo(event.kind === 'request' ? 'Go to the answer' : 'Go to the request', row.pairRow));
    }
    const timeline = waterfallSection(model, row, this.onGoTo);
    this.element.replaceChildren(
      h('h2', {}, rowText(row, model)),
      list,
      links,
      ...(timeline ? [timeline] : []),
      h('pre', { class: 'message', 'aria-label': 'Message JSON' }, messageJson(event.message)),
    );
  }

  private goTo(text: string, row: number): HTMLButtonElement {
    const button = h('button', { type: 'button' }, text);
    button.addEventListener('click', () => this.onGoTo(row));
    return button;
  }
}

function messageJson(message: unknown): string {
  if (message === undefined) return '(no message)';
  try {
    return JSON.stringify(message, null, 2);
  } catch {
    return String(message);
  }
}
