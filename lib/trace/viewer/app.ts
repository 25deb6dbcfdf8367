/**
 * The viewer page: controls (file, filters, search), the sequence view, the detail pane and the latency
 * tables. A trace comes embedded in the page (`trace view`), from the file input, or dropped on the page;
 * or live, batch by batch (`append`, from live.ts), each batch added without redoing the rows before it.
 */
import { DetailPane } from './detail';
import { h, select, setChoices } from './dom';
import { addChoices, filterRows, type RowFilter } from './filters';
import { latencySection } from './latency';
import { ModelBuilder, parseTrace, type RowStatus, type TraceModel } from './model';
import { RowsView } from './rows';
import type { TraceEvent } from '../types';

/** In the live view, the latency tables are drawn again at most this often (they go over every row). */
const LATENCY_REDRAW_MS = 1000;

const STATUSES: readonly RowStatus[] = ['ok', 'error', 'pending', 'cancelled'];

export class ViewerApp {
  private model: TraceModel | undefined;
  private builder: ModelBuilder | undefined;
  /** The rows the filters keep, in order. */
  private shown: number[] = [];
  private readonly methods = new Set<string>();
  private readonly tools = new Set<string>();
  private latencyTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly rows = new RowsView((row) => this.select(row));
  private readonly detail = new DetailPane((row) => this.select(row));
  private readonly file = h('input', { type: 'file', id: 'file', accept: '.ndjson,.jsonl,.json,.txt' });
  private readonly lane = select('Connection', 'filter-lane', []);
  private readonly method = select('Method', 'filter-method', []);
  private readonly tool = select('Tool', 'filter-tool', []);
  private readonly status = select(
    'Status',
    'filter-status',
    STATUSES.map((status) => [status, status]),
  );
  private readonly minDuration = h('input', {
    type: 'number',
    id: 'filter-duration',
    min: '0',
    step: 'any',
    placeholder: 'min ms',
    'aria-label': 'Minimum duration (ms)',
  });
  private readonly search = h('input', {
    type: 'search',
    id: 'search',
    placeholder: 'request id or trace id',
    'aria-label': 'Search by request id or trace id',
  });
  private readonly summary = h('p', { id: 'summary', role: 'status' }, 'Open a trace (.ndjson) or drop it here.');
  private readonly latency = h('div', { id: 'latency-slot' });
  /** What the live view says of itself: connected, sampling, events dropped, the server gone. */
  private readonly liveStatus = h('p', { id: 'live-status', role: 'status', hidden: '' });

  constructor(root: HTMLElement) {
    const controls = h(
      'form',
      { class: 'controls', role: 'search', 'aria-label': 'Filters' },
      h('label', { class: 'file' }, 'Trace file ', this.file),
      this.lane,
      this.method,
      this.tool,
      this.status,
      this.minDuration,
      this.search,
    );
    controls.addEventListener('submit', (event) => event.preventDefault());
    controls.addEventListener('input', () => this.refresh());
    this.file.addEventListener('change', () => {
      const chosen = this.file.files?.[0];
      if (chosen) void this.loadFile(chosen);
    });
    root.replaceChildren(
      h('header', {}, h('h1', {}, 'switchboard trace'), controls, this.summary, this.liveStatus, this.latency),
      h('main', {}, this.rows.element, this.detail.element),
    );
    acceptDrops(document.documentElement, (file) => void this.loadFile(file));
  }

  /** Shows the trace in `text` (NDJSON), replacing the one shown. */
  load(text: string, source: string): void {
    const { events, skippedLines } = parseTrace(text);
    this.begin(source, skippedLines);
    this.add(events);
    this.latency.replaceChildren(latencySection(this.model!));
    this.refresh();
  }

  /**
   * Adds `events` to the trace named `source` (starting it if none is shown; none added to a trace from a
   * file): the new rows go through the filters, the menus gain their new methods and tools, and the view
   * follows the end when it was there.
   */
  append(events: readonly TraceEvent[], source: string): void {
    if (!this.builder) this.begin(source, 0);
    else if (this.source !== source) return; // a trace opened from a file meanwhile stays as it was
    const from = this.model!.rows.length;
    const lanesChanged = this.add(events);
    const kept = filterRows(this.model!, this.filter(), from);
    for (const index of kept) this.shown.push(index);
    this.rows.show(this.model!, this.shown, { lanesChanged, follow: true });
    this.summarize();
    this.latencyTimer ??= setTimeout(() => {
      this.latencyTimer = undefined;
      this.latency.replaceChildren(latencySection(this.model!));
    }, LATENCY_REDRAW_MS);
  }

  /** Shows `text` about the live view (`undefined` hides it). */
  showLiveStatus(text: string | undefined): void {
    this.liveStatus.hidden = text === undefined;
    this.liveStatus.textContent = text ?? '';
  }

  private begin(source: string, skippedLines: number): void {
    this.builder = new ModelBuilder(skippedLines);
    this.model = this.builder.model;
    this.methods.clear();
    this.tools.clear();
    this.shown = [];
    this.detail.clear();
    this.source = source;
  }

  /** Adds `events` to the model and the menus; true when a lane was added or renamed. */
  private add(events: readonly TraceEvent[]): boolean {
    const model = this.model!;
    const from = model.rows.length;
    const { lanesChanged } = this.builder!.append(events);
    if (lanesChanged) {
      setChoices(
        this.lane,
        model.lanes.map((lane) => [String(lane.index), lane.label]),
      );
    }
    if (addChoices(model, from, this.methods, this.tools)) {
      setChoices(
        this.method,
        [...this.methods].sort().map((method) => [method, method]),
      );
      setChoices(
        this.tool,
        [...this.tools].sort().map((tool) => [tool, tool]),
      );
    }
    return lanesChanged;
  }

  private source = '';

  private async loadFile(file: File): Promise<void> {
    try {
      this.load(await file.text(), file.name);
    } catch (error) {
      this.summary.textContent = `Cannot read ${file.name}: ${error instanceof Error ? error.message : String(error)}`;
    }
  }

  private filter(): RowFilter {
    const duration = Number.parseFloat(this.minDuration.value);
    return {
      lane: this.lane.value === '' ? undefined : Number(this.lane.value),
      method: this.method.value || undefined,
      tool: this.tool.value || undefined,
      status: (this.status.value || undefined) as RowStatus | undefined,
      minDurationMs: Number.isFinite(duration) ? duration : undefined,
      search: this.search.value || undefined,
    };
  }

  private refresh(): void {
    const model = this.model;
    if (!model) return;
    this.shown = filterRows(model, this.filter());
    this.rows.show(model, this.shown, { lanesChanged: true });
    this.summarize();
  }

  private summarize(): void {
    const model = this.model!;
    const skipped = model.skippedLines === 0 ? '' : `, ${model.skippedLines} lines skipped (not trace events)`;
    this.summary.textContent =
      `${this.source}: ${model.rows.length} events on ${model.lanes.length} lanes, ${this.shown.length} shown` +
      skipped;
  }

  private select(index: number): void {
    const model = this.model;
    const row = model?.rows[index];
    if (!model || !row) return;
    const related = [row.causeRow, row.pairRow].filter((value): value is number => value !== undefined);
    this.rows.select(index, related);
    this.detail.show(model, row);
  }
}

/** Calls `onFile` with a file dropped anywhere on `target`. */
function acceptDrops(target: HTMLElement, onFile: (file: File) => void): void {
  target.addEventListener('dragover', (event) => {
    event.preventDefault();
    target.classList.add('dropping');
  });
  target.addEventListener('dragleave', () => target.classList.remove('dropping'));
  target.addEventListener('drop', (event) => {
    event.preventDefault();
    target.classList.remove('dropping');
    const file = event.dataTransfer?.files[0];
    if (file) onFile(file);
  });
}
