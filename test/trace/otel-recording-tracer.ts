/** A tracer of the OpenTelemetry SDK whose finished spans are kept in memory, for the tests to read. */
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';

export function recordingTracer(name: string) {
  const exporter = new InMemorySpanExporter();
  const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer(name);
  return { exporter, tracer };
}
