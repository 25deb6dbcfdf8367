/** A meter for the OpenTelemetry tests: `@opentelemetry/sdk-metrics` is not installed, so the API's no-op meter, recording. */
import { createNoopMeter, type Attributes, type Meter } from '@opentelemetry/api';

/** What a histogram was created with and every value recorded on it. */
interface Recorded {
  readonly options: { unit?: string; advice?: { explicitBucketBoundaries?: number[] } } | undefined;
  readonly values: { value: number; attributes: Attributes }[];
}

/** A `Meter` (the API's no-op one) whose histograms remember what they are given. */
export function recordingMeter(): Meter & { histograms: Map<string, Recorded> } {
  const histograms = new Map<string, Recorded>();
  const meter = createNoopMeter();
  return Object.assign(meter, {
    histograms,
    createHistogram(name: string, options?: Recorded['options']) {
      const recorded: Recorded = { options, values: [] };
      histograms.set(name, recorded);
      return { record: (value: number, attributes: Attributes = {}) => recorded.values.push({ value, attributes }) };
    },
  }) as Meter & { histograms: Map<string, Recorded> };
}
