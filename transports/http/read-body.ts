/** Reading POST bodies on the server side, bounded in size and in time. */
import { decodeFrame } from '../../lib/jsonrpc/codec';
import { UnreadableFrame } from '../../lib/jsonrpc/types';
import { refuseAndClose } from './request-guard';
import { utf8Text, type ServerReply, type ServerRequest } from './server-port';

export type BodyFailure = 'too-large' | 'too-slow' | 'aborted';

/**
 * Reads the body and calls `done` with it as text, or with why there is none: 'too-large' as soon as it
 * exceeds `maxBytes`, 'too-slow' when it has not arrived whole within `timeoutMs`, 'aborted' when the client
 * went away. `done` runs once: at once for a declared length over the limit, otherwise from the request's
 * own events. A callback, not a promise: a body read on every POST was three promise steps of a request
 * that is otherwise served synchronously.
 */
export function readBody(
  request: ServerRequest,
  maxBytes: number,
  timeoutMs: number,
  done: (outcome: string | BodyFailure) => void,
): void {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) return done('too-large');
  // The listeners are anonymous and the state lives in one object: named closures created per request
  // cost measurably on this path (and more under a keepNames transpiler such as tsx).
  const read = new BodyRead(maxBytes, done);
  read.timer = setTimeout(finishTooSlow, timeoutMs, read);
  request.on('data', (chunk: Uint8Array) => read.data(chunk));
  request.on('end', () => read.end());
  // A client that goes away mid-body: Node reports it as an 'aborted' error on the request.
  request.on('error', () => read.finish('aborted'));
}

/** One body being read: its chunks, its size so far, and whether it has been settled. */
class BodyRead {
  timer: ReturnType<typeof setTimeout> | undefined = undefined;
  private readonly chunks: Uint8Array[] = [];
  private size = 0;
  private settled = false;

  constructor(
    private readonly maxBytes: number,
    private readonly done: (outcome: string | BodyFailure) => void,
  ) {}

  data(chunk: Uint8Array): void {
    if (this.settled) return;
    this.size += chunk.length;
    if (this.size > this.maxBytes) this.finish('too-large');
    else this.chunks.push(chunk);
  }

  end(): void {
    this.finish(utf8Text(this.chunks));
  }

  finish(outcome: string | BodyFailure): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.done(outcome);
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
 * Reads the body and calls `then` with it decoded as a JSON-RPC frame, or with undefined once the request
 * was refused for it: 413 over the size limit, 408 when too slow, 400 with the frame error's code (-32700
 * not JSON, -32600 too deep or otherwise unacceptable) and the request's id when it could still be read.
 * Every refusal closes the connection: what the client sends next on it cannot be trusted to start a new
 * request. `then` runs from the request's events, so it must not throw (`readJsonBody` is the promise form).
 */
export function withJsonBody(
  request: ServerRequest,
  response: ServerReply,
  limits: BodyLimits,
  then: (frame: unknown) => void,
): void {
  readBody(request, limits.maxBodyBytes, limits.bodyTimeoutMs, (text) => then(decodeBody(text, response, limits)));
}

/** `withJsonBody` as a promise. */
export function readJsonBody(request: ServerRequest, response: ServerReply, limits: BodyLimits): Promise<unknown> {
  return new Promise((resolve) => withJsonBody(request, response, limits, resolve));
}

function decodeBody(text: string | BodyFailure, response: ServerReply, limits: BodyLimits): unknown {
  switch (text) {
    case 'too-large':
      return refuseAndClose(response, 413, `Payload Too Large: the limit is ${limits.maxBodyBytes} bytes`);
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
