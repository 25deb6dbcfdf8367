/**
 * The detail pane's timeline of a request: one bar per request (the selected one, then those made for it,
 * indented), positioned on one time scale, with its progress ticks and cancellation or timeout marks. Every
 * bar and mark has its words in the page too (method, lane, duration, code), so it reads without the drawing.
 */
import { errorText } from './describe';
import { h } from './dom';
import type { Row, TraceModel } from './model';
import { waterfallOf, type BarMark, type Waterfall, type WaterfallBar } from './waterfall-model';

/** Bars and marks beyond these are counted in words, not drawn: the pane stays small on any trace. */
const MAX_BARS = 100;
const MAX_MARKS = 50;

const MARK_SYMBOL: Record<BarMark['kind'], string> = { progress: '▸', cancelled: '⊘', 'timed-out': '⏱' };

/** The timeline section for `selected`, or undefined when it stands for no request. */
export function waterfallSection(
  model: TraceModel,
  selected: Row,
  onGoTo: (row: number) => void,
): HTMLElement | undefined {
  const waterfall = waterfallOf(model, selected);
  if (!waterfall) return undefined;
  const section = h(
    'section',
    { class: 'waterfall', 'aria-label': 'Timeline of the request' },
    h('h3', {}, 'Timeline'),
  );
  if (waterfall.parentRow !== undefined) {
    const parent = model.rows[waterfall.parentRow]!;
    section.append(button(`↑ Made for ${requestName(model, parent)}`, 'wf-parent', () => onGoTo(parent.index)));
  }
  section.append(
    h('p', { class: 'wf-scale' }, `0 ms to ${ms(waterfall.end - waterfall.start)}`),
    h(
      'ol',
      { class: 'wf-bars' },
      ...waterfall.bars.slice(0, MAX_BARS).map((bar) => barItem(model, waterfall, bar, onGoTo)),
    ),
  );
  const more = waterfall.bars.length - MAX_BARS;
  if (more > 0) section.append(h('p', { class: 'wf-more' }, `… and ${more} more requests made for it`));
  return section;
}

function barItem(
  model: TraceModel,
  waterfall: Waterfall,
  bar: WaterfallBar,
  onGoTo: (row: number) => void,
): HTMLElement {
  const request = model.rows[bar.row]!;
  const answer = bar.answerRow === undefined ? undefined : model.rows[bar.answerRow];
  const words = barWords(model, waterfall, bar, request);
  const label =
    bar.depth === 0
      ? h('span', { class: 'wf-name' }, words)
      : button(`↳ ${bar.causeKind ?? 'caused'}: ${words}`, 'wf-name', () => onGoTo(bar.row));
  const error = answer ? errorText(answer) : '';
  const item = h('li', { class: `wf-item ${bar.ended}${error ? ' error' : ''}`, 'data-row': String(bar.row) }, label);
  item.style.setProperty('--depth', String(bar.depth));
  if (error) item.append(h('p', { class: 'wf-error' }, error));
  item.append(track(waterfall, bar, words));
  if (bar.marks.length > 0) {
    const offset = (mark: BarMark) => `+${ms(mark.time - waterfall.start)}`;
    const marks = shownMarks(bar).map((mark) =>
      h('li', { class: `wf-mark-text ${mark.kind}` }, `${MARK_SYMBOL[mark.kind]} ${offset(mark)} ${mark.text}`),
    );
    const more = bar.marks.length - marks.length;
    if (more > 0) marks.push(h('li', { class: 'wf-more' }, `… and ${more} more progress notifications`));
    item.append(h('ul', { class: 'wf-marks' }, ...marks));
  }
  return item;
}

/** `tools/call #1 note · notes (upstream client) · 3 ms`, or how an unanswered request ended. */
function barWords(model: TraceModel, waterfall: Waterfall, bar: WaterfallBar, request: Row): string {
  const answered = bar.answerRow === undefined ? undefined : model.rows[bar.answerRow];
  const took = answered?.durationMs ?? bar.end - bar.start;
  const at = `+${ms(bar.end - waterfall.start)}`;
  const ending: Record<WaterfallBar['ended'], string> = {
    answer: ms(took),
    cancelled: `cancelled after ${ms(took)}`,
    'timed-out': `timed out after ${ms(took)}`,
    closed: `no answer: the connection closed at ${at}`,
    'trace-end': `no answer by the end of the trace (${at})`,
  };
  return `${requestName(model, request)} · ${ending[bar.ended]}`;
}

/** `tools/call #3 note on notes (upstream client)` */
function requestName(model: TraceModel, request: Row): string {
  const { method, id } = request.event;
  const tool = request.tool === undefined ? '' : ` ${request.tool}`;
  return `${method ?? '(no method)'} #${String(id)}${tool} on ${model.lanes[request.lane]!.label}`;
}

/** The bar on the shared time scale, its ticks and marks placed by time, each titled for a pointer. */
function track(waterfall: Waterfall, bar: WaterfallBar, words: string): HTMLElement {
  const span = waterfall.end - waterfall.start;
  const at = (time: number) => `${span > 0 ? ((time - waterfall.start) / span) * 100 : 0}%`;
  const open = bar.ended === 'closed' || bar.ended === 'trace-end';
  const drawn = h('div', { class: `wf-bar${open ? ' open' : ''}`, title: words });
  drawn.style.left = at(bar.start);
  drawn.style.width = `calc(${at(bar.end)} - ${at(bar.start)})`;
  const element = h('div', { class: 'wf-track', 'aria-hidden': 'true' }, drawn);
  for (const mark of shownMarks(bar)) {
    const tick = h('span', {
      class: `wf-tick ${mark.kind}`,
      title: `+${ms(mark.time - waterfall.start)} ${mark.text}`,
    });
    tick.style.left = at(mark.time);
    element.append(tick);
  }
  return element;
}

/**
 * The marks drawn and listed: the first progress ticks, and always the cancellation or timeout (a request
 * with thousands of progress notifications keeps the pane small).
 */
function shownMarks(bar: WaterfallBar): readonly BarMark[] {
  if (bar.marks.length <= MAX_MARKS) return bar.marks;
  const ending = bar.marks.filter((mark) => mark.kind !== 'progress');
  return [...bar.marks.filter((mark) => mark.kind === 'progress').slice(0, MAX_MARKS - ending.length), ...ending];
}

function button(text: string, className: string, onClick: () => void): HTMLButtonElement {
  const element = h('button', { type: 'button', class: className }, text);
  element.addEventListener('click', onClick);
  return element;
}

/** `12 ms`, `0.25 ms`: at most three decimals. */
function ms(value: number): string {
  return `${Number(value.toFixed(3))} ms`;
}
