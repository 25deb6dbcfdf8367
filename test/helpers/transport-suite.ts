/**
 * The one test suite every transport runs: ordering, large messages, the frame limit, close from either
 * side, errors as values, many sends in flight, and a whole MCP session on top.
 *
 * Usage: `runTransportSuite('stdio', { connect, maxMessageBytes, oversize })` inside a test file.
 */
import { describe, expect, it } from 'vitest';
import { firstValueFrom, toArray, type Observable } from 'rxjs';
import { Client } from '../../lib/client/client';
import { TransportError } from '../../lib/jsonrpc/errors';
import { UnreadableFrame, type InboundFrame, type JsonRpcMessage } from '../../lib/jsonrpc/types';
import { Server } from '../../lib/server/server';
import type { Transport } from '../../transports/transport';
import { serverWith, tool } from './fixtures';
import { json } from './content';

export interface TransportPair {
  /** The side a client would use. */
  readonly left: Transport;
  /** The side a server would use. */
  readonly right: Transport;
  /** Releases what the pair holds beyond the transports (processes, sockets, servers). */
  dispose?(): Promise<void>;
}

export interface TransportSuiteOptions {
  /** A fresh connected pair for each test. */
  connect(): Promise<TransportPair>;
  /** The frame limit the pair was created with, if the transport has one. */
  readonly maxMessageBytes?: number;
  /**
   * What the receiver does with a frame over the limit: report a `UnreadableFrame` and keep going, or close
   * the connection with an error (binary framings cannot resynchronise safely).
   */
  readonly oversize?: 'frame-error' | 'close';
  /** The largest message the transport must carry intact (default 1 MiB). */
  readonly largeMessageBytes?: number;
}

const notification = (index: number, padding = ''): JsonRpcMessage => ({
  jsonrpc: '2.0',
  method: 'notifications/test',
  params: { index, padding },
});

/** Collects the first `count` frames `side` receives. */
function take(side: Observable<InboundFrame>, count: number): Promise<InboundFrame[]> {
  return new Promise((resolve, reject) => {
    const frames: InboundFrame[] = [];
    const subscription = side.subscribe({
      next: (frame) => {
        frames.push(frame);
        if (frames.length === count) {
          subscription.unsubscribe();
          resolve(frames);
        }
      },
      error: reject,
      complete: () => reject(new Error(`The stream completed after ${frames.length} of ${count} frames`)),
    });
  });
}

export function runTransportSuite(name: string, options: TransportSuiteOptions): void {
  const withPair = (test: (pair: TransportPair) => Promise<void>) => async () => {
    const pair = await options.connect();
    try {
      await test(pair);
    } finally {
      await pair.left.close().catch(() => undefined);
      await pair.right.close().catch(() => undefined);
      await pair.dispose?.();
    }
  };

  describe(`transport suite: ${name}`, () => {
    it(
      'delivers messages in order, both ways',
      withPair(async ({ left, right }) => {
        const rightGets = take(right.messages, 500);
        const leftGets = take(left.messages, 500);
        await Promise.all(Array.from({ length: 500 }, (_, i) => left.send(notification(i))));
        await Promise.all(Array.from({ length: 500 }, (_, i) => right.send(notification(i))));
        for (const frames of [await rightGets, await leftGets]) {
          expect(frames.map((frame) => (frame as unknown as { params: { index: number } }).params.index)).toEqual(
            Array.from({ length: 500 }, (_, i) => i),
          );
        }
      }),
    );

    it(
      'carries a large message intact',
      withPair(async ({ left, right }) => {
        const size = options.largeMessageBytes ?? 1024 * 1024;
        const padding = 'é€😀x'.repeat(Math.floor(size / 10));
        const got = take(right.messages, 1);
        await left.send(notification(1, padding));
        const [frame] = await got;
        expect((frame as unknown as { params: { padding: string } }).params.padding).toBe(padding);
      }),
    );

    if (options.maxMessageBytes !== undefined) {
      it(
        `handles a frame over the limit (${options.oversize ?? 'frame-error'})`,
        withPair(async ({ left, right }) => {
          const oversized = notification(1, 'x'.repeat(options.maxMessageBytes! + 10));
          if ((options.oversize ?? 'frame-error') === 'frame-error') {
            const got = take(right.messages, 2);
            await left.send(oversized).catch(() => undefined); // a sender may refuse it itself
            await left.send(notification(2));
            const frames = await got.catch(() => undefined);
            // Either the receiver reported it and carried on, or the sender refused it and only #2 arrived.
            if (frames) {
              expect(frames[0]).toBeInstanceOf(UnreadableFrame);
              expect((frames[0] as UnreadableFrame).message).toContain('too large');
              expect(frames[1]).toEqual(notification(2));
            }
          } else {
            const ended = new Promise<unknown>((resolve) =>
              right.messages.subscribe({ error: resolve, complete: () => resolve('complete') }),
            );
            await left.send(oversized).catch(() => undefined);
            const outcome = await ended;
            expect(outcome === 'complete' || outcome instanceof TransportError).toBe(true);
          }
        }),
      );
    }

    it(
      'closes from the left: the right stream completes, sends after close reject, close is idempotent',
      withPair(async ({ left, right }) => {
        const rightDone = firstValueFrom(right.messages.pipe(toArray()));
        await left.close();
        await left.close();
        expect(await rightDone).toEqual([]);
        await expect(left.send(notification(1))).rejects.toBeInstanceOf(TransportError);
      }),
    );

    it(
      'closes from the right as well',
      withPair(async ({ left, right }) => {
        const leftDone = firstValueFrom(left.messages.pipe(toArray()));
        await right.close();
        expect(await leftDone).toEqual([]);
        await expect(right.send(notification(1))).rejects.toBeInstanceOf(TransportError);
      }),
    );

    it(
      'reports failures as rejected promises, never as thrown exceptions',
      withPair(async ({ left }) => {
        await left.close();
        let sent: Promise<void> | undefined;
        expect(() => (sent = left.send(notification(1)))).not.toThrow();
        await expect(sent).rejects.toBeInstanceOf(TransportError);
      }),
    );

    it(
      'keeps many large sends in flight and delivers them all',
      withPair(async ({ left, right }) => {
        const padding = 'y'.repeat(64 * 1024);
        const got = take(right.messages, 100);
        const sends = Array.from({ length: 100 }, (_, i) => left.send(notification(i, padding)));
        await Promise.all(sends);
        expect((await got).length).toBe(100);
      }),
    );

    it(
      'carries a whole MCP session',
      withPair(async ({ left, right }) => {
        const definition = serverWith([tool('echo', json)]);
        const connection = new Server(definition).connect(right);
        const client = await new Client({ name: 'suite', version: '1' }).connect(left);
        expect(await client.callTool('echo', { n: 1 })).toEqual({ content: [{ type: 'text', text: '{"n":1}' }] });
        await client.close();
        expect((await connection.closed).kind).toBe('transport-closed');
      }),
    );
  });
}
