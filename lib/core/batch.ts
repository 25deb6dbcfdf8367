import type { JsonRpcResponse } from '../jsonrpc/types';

/**
 * Collects the responses to one inbound JSON-RPC batch (2025-03-26 only) and sends them as one array once
 * every request in it has been answered. A batch of only notifications gets no reply at all.
 */
export class BatchReply {
  private readonly responses: JsonRpcResponse[] = [];
  private outstanding = 0;
  private sealed = false;

  constructor(private readonly flush: (responses: JsonRpcResponse[]) => void) {}

  /** A request of the batch was dispatched; its answer (or suppression) is pending. */
  expect(): void {
    this.outstanding++;
  }

  /** An answer that was expected. */
  answer(response: JsonRpcResponse): void {
    this.responses.push(response);
    this.outstanding--;
    this.maybeFlush();
  }

  /** An expected answer that will never come (the request was cancelled). */
  skip(): void {
    this.outstanding--;
    this.maybeFlush();
  }

  /** An immediate error for an element that was never dispatched. */
  reject(response: JsonRpcResponse): void {
    this.responses.push(response);
  }

  /** Every element has been seen. */
  seal(): void {
    this.sealed = true;
    this.maybeFlush();
  }

  private maybeFlush(): void {
    if (!this.sealed || this.outstanding > 0) return;
    this.sealed = false; // flush once
    if (this.responses.length > 0) this.flush(this.responses);
  }
}
