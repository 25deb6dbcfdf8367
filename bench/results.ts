/** Every figure of every run, keyed by scenario, entrant and figure name; one value per run, in run order. */
import type { SeriesRef } from './comparisons';
import type { Figures } from './scenarios';

export type RawResults = Record<string, Record<string, Record<string, number[]>>>;

export class ResultStore {
  private readonly raw: RawResults = {};

  record(scenario: string, entrant: string, figures: Figures): void {
    const byEntrant = (this.raw[scenario] ??= {});
    const byFigure = (byEntrant[entrant] ??= {});
    for (const [figure, value] of Object.entries(figures)) (byFigure[figure] ??= []).push(value);
  }

  series(ref: SeriesRef): number[] {
    const values = this.raw[ref.scenario]?.[ref.entrant]?.[ref.figure];
    if (!values) throw new Error(`No results for ${ref.scenario}/${ref.entrant}/${ref.figure}`);
    return values;
  }

  toJSON(): RawResults {
    return this.raw;
  }
}
