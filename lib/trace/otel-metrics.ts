/**
 * The MCP duration metrics of the OpenTelemetry conventions (see otel-semconv.ts for the version), recorded
 * through the metrics API on the `Meter` the app gives: `mcp.client.operation.duration` and
 * `mcp.server.operation.duration` per request, `mcp.client.session.duration` and `mcp.server.session.duration`
 * per session, histograms in seconds with the conventions' bucket boundaries.
 */
import type { Attributes, Histogram, Meter } from '@opentelemetry/api';

/** The conventions' advised `ExplicitBucketBoundaries`, in seconds, for all four. */
export const MCP_DURATION_BUCKETS: readonly number[] = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];

/** A side's two histograms. `client` records what we sent and the sessions we opened; `server` the others. */
interface Side {
  readonly operation: Histogram;
  readonly session: Histogram;
}

export class McpMetrics {
  private readonly client: Side;
  private readonly server: Side;

  constructor(meter: Meter) {
    const histogram = (name: string, description: string) =>
      meter.createHistogram(name, {
        description,
        unit: 's',
        advice: { explicitBucketBoundaries: [...MCP_DURATION_BUCKETS] },
      });
    this.client = {
      operation: histogram(
        'mcp.client.operation.duration',
        'The duration of the MCP request or notification as observed on the sender from the time it was sent until the response or ack is received.',
      ),
      session: histogram(
        'mcp.client.session.duration',
        'The duration of the MCP session as observed on the MCP client.',
      ),
    };
    this.server = {
      operation: histogram(
        'mcp.server.operation.duration',
        'MCP request or notification duration as observed on the receiver from the time it was received until the result or ack is sent.',
      ),
      session: histogram(
        'mcp.server.session.duration',
        'The duration of the MCP session as observed on the MCP server.',
      ),
    };
  }

  /** `sender`: whether we sent the request (a CLIENT span), whichever role our connection has. */
  operation(sender: boolean, startMs: number, endMs: number, attributes: Attributes): void {
    (sender ? this.client : this.server).operation.record(seconds(startMs, endMs), attributes);
  }

  /** `role`: our connection's role (a client's sessions are `mcp.client.session.duration`). */
  session(role: 'client' | 'server', startMs: number, endMs: number, attributes: Attributes): void {
    this[role].session.record(seconds(startMs, endMs), attributes);
  }
}

/** Never negative, whatever a clock did in between. */
const seconds = (startMs: number, endMs: number) => Math.max(0, endMs - startMs) / 1000;
