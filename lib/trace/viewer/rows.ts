/**
 * The sequence view: one column per lane, one row per event, only the rows in sight rendered (a trace of
 * 100,000 events keeps a few dozen rows in the DOM). A row shows its time, its message on its lane with the
 * way it goes, its error mark, and a drawn link back to the lane of the request that caused it.
 */
import { causeText, errorText, isServerToClient, offsetText, rowText } from './describe';
import { h } from './dom';
import type { TraceModel } from './model';

export const ROW_HEIGHT = 24;
export const LANE_WIDTH = 240;
export const TIME_WIDTH = 110;
/** Rows rendered beyond the visible ones, above and below, so a short scroll shows no gap. */
const OVERSCAN = 8;

export class RowsView {
  readonly element: HTMLElement;
  private readonly spacer: HTMLElement;
  private readonly header: HTMLElement;
  private model: TraceModel | undefined;
  private shown: readonly number[] = [];
  private selected: number | undefined;
  private highlighted = new Set<number>();
  private frame = 0;

  constructor(private readonly onSelect: (row: number) => void) {
    this.header = h('div', { class: 'lanes', role: 'row', id: 'lanes' });
    this.spacer = h('div', { class: 'spacer', role: 'presentation' });
    this.element = h('div', { class: 'rows', id: 'rows', role: 'list', tabindex: '0' }, this.header, this.spacer);
    this.element.addEventListener('scroll', () => this.schedule());
    this.element.addEventListener('click', (event) => {
      const target = (event.target as HTMLElement).closest<HTMLElement>('[data-row]');
      if (target) this.onSelect(Number(target.dataset.row));
    });
    this.element.addEventListener('keydown', (event) => this.step(event));
    new ResizeObserver(() => this.schedule()).observe(this.element);
  }

  /**
   * Shows `rows` (indexes into `model.rows`) of `model`; `lanesChanged` draws the lanes' headers again (a
   * model that grew), `follow` keeps the view at the end when it was there (the live view).
   */
  show(model: TraceModel, rows: readonly number[], { lanesChanged = false, follow = false } = {}): void {
    const atEnd = this.element.scrollTop + this.element.clientHeight >= this.element.scrollHeight - ROW_HEIGHT;
    if (model !== this.model || lanesChanged) {
      this.model = model;
      this.renderLanes(model);
    }
    this.shown = rows;
    const width = `${TIME_WIDTH + model.lanes.length * LANE_WIDTH}px`;
    this.spacer.style.height = `${rows.length * ROW_HEIGHT}px`;
    this.spacer.style.width = width;
    this.header.style.width = width;
    if (follow && atEnd) this.element.scrollTop = this.element.scrollHeight;
    this.render();
  }

  /** Marks `row` selected and the rows `related` to it (its answer, its cause), scrolling it into sight. */
  select(row: number, related: readonly number[]): void {
    this.selected = row;
    this.highlighted = new Set(related);
    const position = this.shown.indexOf(row);
    if (position !== -1) {
      const top = position * ROW_HEIGHT;
      const view = this.element.clientHeight - ROW_HEIGHT * 2;
      if (top < this.element.scrollTop || top > this.element.scrollTop + view) {
        this.element.scrollTop = Math.max(0, top - view / 2);
      }
    }
    this.render();
  }

  private schedule(): void {
    if (this.frame === 0) this.frame = requestAnimationFrame(() => this.render());
  }

  private renderLanes(model: TraceModel): void {
    this.header.replaceChildren(h('div', { class: 'time-head', role: 'columnheader' }, 'time'));
    for (const lane of model.lanes) {
      const role = lane.upstream ? 'upstream' : (lane.role ?? 'actor');
      this.header.append(h('div', { class: `lane-head ${role}`, role: 'columnheader', title: lane.label }, lane.label));
    }
  }

  private render(): void {
    this.frame = 0;
    const model = this.model;
    if (!model) return;
    const top = Math.max(0, this.element.scrollTop - this.header.offsetHeight);
    const first = Math.max(0, Math.floor(top / ROW_HEIGHT) - OVERSCAN);
    const visible = Math.ceil(this.element.clientHeight / ROW_HEIGHT) + 2 * OVERSCAN;
    const last = Math.min(this.shown.length, first + visible);
    const elements: HTMLElement[] = [];
    for (let position = first; position < last; position++) {
      elements.push(this.rowElement(model, this.shown[position]!, position));
    }
    this.spacer.replaceChildren(...elements);
  }

  private rowElement(model: TraceModel, index: number, position: number): HTMLElement {
    const row = model.rows[index]!;
    const lane = model.lanes[row.lane]!;
    const { event } = row;
    const kind = isServerToClient(row, lane) ? 's2c' : event.kind;
    const classes = ['row', kind, row.status ?? '', index === this.selected ? 'selected' : ''];
    if (this.highlighted.has(index)) classes.push('related');
    const text = rowText(row, model);
    const mark = errorText(row);
    const cell = h('span', { class: `cell ${event.direction ?? 'lifecycle'}`, title: text }, text);
    if (mark) cell.append(' ', h('span', { class: 'error-mark' }, mark));
    const left = TIME_WIDTH + row.lane * LANE_WIDTH;
    cell.style.left = `${left + 8}px`;
    const element = h(
      'div',
      { class: classes.join(' '), role: 'listitem', 'data-row': String(index), 'aria-label': `${lane.label}: ${text}` },
      h('span', { class: 'time' }, offsetText(event.time, model.start)),
      cell,
    );
    element.style.top = `${position * ROW_HEIGHT}px`;
    if (row.causeRow !== undefined) element.append(this.causeLink(model, row.causeRow, left, causeText(row, model)));
    return element;
  }

  /** A line from the lane of the causing request to this row's lane, named for a screen reader. */
  private causeLink(model: TraceModel, causeRow: number, left: number, text: string): HTMLElement {
    const from = TIME_WIDTH + model.rows[causeRow]!.lane * LANE_WIDTH + LANE_WIDTH / 2;
    const to = left + 4;
    const link = h('span', { class: 'cause-link', title: text, 'data-cause': String(causeRow) });
    link.style.left = `${Math.min(from, to)}px`;
    link.style.width = `${Math.abs(to - from)}px`;
    link.append(h('span', { class: 'sr-only' }, text));
    return link;
  }

  /** Up and down arrows move the selection through the shown rows. */
  private step(event: KeyboardEvent): void {
    if (event.key !== 'ArrowDown' && event.key !== 'ArrowUp') return;
    const position = this.selected === undefined ? -1 : this.shown.indexOf(this.selected);
    const next =
      this.shown[Math.min(this.shown.length - 1, Math.max(0, position + (event.key === 'ArrowDown' ? 1 : -1)))];
    if (next !== undefined) {
      event.preventDefault();
      this.onSelect(next);
    }
  }
}
