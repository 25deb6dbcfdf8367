/** Reading POST bodies on the server side, bounded in size and in time. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { decodeFrame } from '../../lib/jsonrpc/codec';
import { UnreadableFrame } from '../../lib/jsonrpc/types';
import { refuseAndClose } from './request-guard';

export type BodyFailure = 'too-large' | 'too-slow' | 'aborted';

/**
 * The body as text, or why there is none: 'too-large' as soon as it exceeds `maxBytes`, 'too-slow' when it
 * has not arrived whole within `timeoutMs`, 'aborted' when the client went away.
 */
export function readBody(request: IncomingMessage, maxBytes: number, timeoutMs: number): Promise<string | BodyFailure> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) return Promise.resolve('too-large');
  return new Promise((resolve) => {
    // The listeners are anonymous and the state lives in one object: named closures created per request
    // cost measurably on this path (and more under a keepNames transpiler such as tsx).
    const read = new BodyRead(maxBytes, resolve);
    read.timer = setTimeout(finishTooSlow, timeoutMs, read);
    request.on('data', (chunk: Buffer) => read.data(chunk));
    request.on('end', () => read.end());
    // A client that goes away mid-body: Node reports it as an 'aborted' error on the request.
    request.on('error', () => read.finish('aborted'));
  });
}

/** One body being read: its chunks, its size so far, and whether it has been settled. */
class BodyRead {
  timer: NodeJS.Timeout | undefined = undefined;
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private settled = false;

  constructor(
    private readonly maxBytes: number,
    private readonly resolve: (outcome: string | BodyFailure) => void,
  ) {}

  data(chunk: Buffer): void {
    if (this.settled) return;
    this.size += chunk.length;
    if (this.size > this.maxBytes) this.finish('too-large');
    else this.chunks.push(chunk);
  }

  end(): void {
    const chunks = this.chunks;
    this.finish(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8'));
  }

  finish(outcome: string | BodyFailure): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.resolve(outcome);
  }
}

function finishTooSlow(read: BodyRead): void {
  read.finish('too-slow');
}

export interface BodyLimits {
  readonly maxBodyBytes: number;
  readonly maxDepth: number;
  readonly bodyTimeoutMs: number;
}

/**
 * The body decoded as a JSON-RPC frame; undefined once the request was refused for it: 413 over the size
 * limit, 408 when too slow, 400 with the frame error's code (-32700 not JSON, -32600 too deep or otherwise
 * unacceptable) and the request's id when it could still be read. Every refusal closes the connection: what the client sends next on it cannot be trusted
 * to start a new request.
 */
export async function readJsonBody(
  request: IncomingMessage,
  response: ServerResponse,
  limits: BodyLimits,
): Promise<unknown> {
  const { maxBodyBytes } = limits;
  const text = await readBody(request, maxBodyBytes, limits.bodyTimeoutMs);
  switch (text) {
    case 'too-large':
      return refuseAndClose(response, 413, `Payload Too Large: the limit is ${maxBodyBytes} bytes`);
    case 'too-slow':
      return refuseAndClose(
        response,
        408,
        `Request Timeout: the body did not arrive within ${limits.bodyTimeoutMs} ms`,
      );
    case 'aborted':
      return void response.destroy();
  }
  // The byte limit was enforced while reading: no second count.
  const frame = decodeFrame(text, Infinity, limits.maxDepth);
  if (frame instanceof UnreadableFrame) return refuseAndClose(response, 400, frame.message, frame.code, frame.id);
  return frame;
}
