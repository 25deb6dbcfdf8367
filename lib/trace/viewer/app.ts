/**
 * The viewer page: controls (file, filters, search), the sequence view, the detail pane and the latency
 * tables. A trace comes embedded in the page (`trace view`), from the file input, or dropped on the page.
 */
import { DetailPane } from './detail';
import { h, select, setChoices } from './dom';
import { filterChoices, filterRows, type RowFilter } from './filters';
import { latencySection } from './latency';
import { buildModel, parseTrace, type RowStatus, type TraceModel } from './model';
import { RowsView } from './rows';

const STATUSES: readonly RowStatus[] = ['ok', 'error', 'pending', 'cancelled'];

export class ViewerApp {
  private model: TraceModel | undefined;
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
      h('header', {}, h('h1', {}, 'switchboard trace'), controls, this.summary, this.latency),
      h('main', {}, this.rows.element, this.detail.element),
    );
    acceptDrops(document.documentElement, (file) => void this.loadFile(file));
  }

  /** Shows the trace in `text` (NDJSON), replacing the one shown. */
  load(text: string, source: string): void {
    const { events, skippedLines } = parseTrace(text);
    const model = buildModel(events, skippedLines);
    this.model = model;
    setChoices(
      this.lane,
      model.lanes.map((lane) => [String(lane.index), lane.label]),
    );
    const { methods, tools } = filterChoices(model);
    setChoices(
      this.method,
      methods.map((method) => [method, method]),
    );
    setChoices(
      this.tool,
      tools.map((tool) => [tool, tool]),
    );
    this.latency.replaceChildren(latencySection(model));
    this.detail.clear();
    this.source = source;
    this.refresh();
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
    const shown = filterRows(model, this.filter());
    this.rows.show(model, shown);
    const skipped = model.skippedLines === 0 ? '' : `, ${model.skippedLines} lines skipped (not trace events)`;
    this.summary.textContent =
      `${this.source}: ${model.rows.length} events on ${model.lanes.length} lanes, ${shown.length} shown` + skipped;
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
