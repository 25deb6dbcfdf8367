/** The latency tables: percentiles per method and per upstream, as HTML tables a screen reader can walk. */
import { h } from './dom';
import type { TraceModel } from './model';
import { latencyTables, type LatencyLine } from './stats';

export function latencySection(model: TraceModel): HTMLElement {
  const { byMethod, byUpstream } = latencyTables(model);
  return h(
    'details',
    { id: 'latency' },
    h('summary', {}, 'Latency percentiles (ms)'),
    table('Per method', 'method', byMethod),
    table('Per upstream', 'upstream', byUpstream),
  );
}

function table(caption: string, keyName: string, lines: readonly LatencyLine[]): HTMLElement {
  if (lines.length === 0) return h('p', {}, `${caption}: no answered requests.`);
  const head = h('tr', {}, ...[keyName, 'count', 'p50', 'p90', 'p99', 'max'].map((name) => h('th', {}, name)));
  const body = lines.map((line) =>
    h(
      'tr',
      {},
      h('th', { scope: 'row' }, line.key),
      ...[line.count, line.p50, line.p90, line.p99, line.max].map((value) => h('td', {}, String(value))),
    ),
  );
  return h('table', {}, h('caption', {}, caption), h('thead', {}, head), h('tbody', {}, ...body));
}
