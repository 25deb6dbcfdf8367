import { describe, expect, it } from 'vitest';
import { firstValueFrom, toArray } from 'rxjs';
import { TransportError } from '../../lib/jsonrpc/errors';
import { UnreadableFrame, type InboundFrame, type JsonRpcMessage } from '../../lib/jsonrpc/types';
import { InboundQueue } from '../../transports/inbound-queue';
import { createMemoryPair } from '../../transports/memory';
import { deferred, serverWith, tool } from '../helpers/fixtures';
import { connectPair } from '../helpers/pair';
import { runTransportSuite } from '../helpers/transport-suite';

runTransportSuite('memory, by reference', {
  connect: async () => {
    const [left, right] = createMemoryPair();
    return { left, right };
  },
});

runTransportSuite('memory, json copies with a frame limit', {
  connect: async () => {
    const [left, right] = createMemoryPair({ codec: 'json', maxMessageBytes: 4 * 1024 * 1024 });
    return { left, right };
  },
  maxMessageBytes: 4 * 1024 * 1024,
  oversize: 'frame-error',
});

const note = (index: number): JsonRpcMessage => ({ jsonrpc: '2.0', method: 'notifications/test', params: { index } });

describe('memory transport, json codec', () => {
  it('refuses a message nested deeper than maxDepth with a -32600 UnreadableFrame', async () => {
    const [left, right] = createMemoryPair({ codec: 'json', maxDepth: 4 });
    const frames = firstValueFrom(right.messages.pipe(toArray<InboundFrame>()));
    await left.send({ jsonrpc: '2.0', id: 1, method: 'ping', params: { a: { b: { c: { d: 1 } } } } }); // 5 levels
    await left.send({ jsonrpc: '2.0', id: 2, method: 'ping', params: { a: { b: 1 } } });
    await left.close();
    const [deep, fine] = await frames;
    expect(deep).toEqual(
      new UnreadableFrame(-32600, 'Invalid Request: the message nests deeper than 4 levels', 1, false),
    );
    expect(fine).toMatchObject({ id: 2 });
  });

  it('delivers a copy, not the message sent', async () => {
    const [left, right] = createMemoryPair({ codec: 'json' });
    const message = { jsonrpc: '2.0' as const, method: 'n', params: { x: [1] } };
    const received = firstValueFrom(right.messages);
    await left.send(message);
    expect(await received).not.toBe(message);
  });

  it('rejects a send JSON cannot encode instead of throwing', async () => {
    const [left] = createMemoryPair({ codec: 'json' });
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    await expect(left.send({ jsonrpc: '2.0', method: 'n', params: cyclic })).rejects.toBeInstanceOf(TransportError);
  });
});

describe('memory transport, by reference, in debug mode', () => {
  const mutating = serverWith([
    tool('mutate', (args) => {
      (args as Record<string, unknown>).injected = true;
      return { content: [] };
    }),
  ]);

  it('freezes messages, so a handler cannot corrupt the caller', async () => {
    const { client } = await connectPair(mutating, {}, { freeze: true });
    const args = { value: 1 };
    await client.callTool('mutate', args);
    expect(args).toEqual({ value: 1 });
  });

  it('turns the mutation into a tool error naming the frozen object', async () => {
    const { client } = await connectPair(mutating, {}, { freeze: true });
    const result = await client.callTool('mutate', { value: 1 });
    expect(result.isError).toBe(true);
    expect(result.content[0]).toMatchObject({ text: expect.stringContaining('object is not extensible') });
  });
});

describe('memory transport delivery', () => {
  it('has a single consumer', async () => {
    const [left] = createMemoryPair();
    left.messages.subscribe();
    const second = deferred<unknown>();
    left.messages.subscribe({ error: (error) => second.resolve(error) });
    expect(String(await second.promise)).toContain('single consumer');
  });

  it('buffers messages sent before the peer subscribes', async () => {
    const [left, right] = createMemoryPair();
    await left.send(note(1));
    expect(await firstValueFrom(right.messages)).toEqual(note(1));
  });

  /** Three notifications sent at once, and what the receiving side saw (with a marker queued after the sends). */
  async function burst() {
    const [left, right] = createMemoryPair();
    const log: unknown[] = [];
    right.messages.subscribe((frame) => log.push((frame as unknown as { params: { index: number } }).params.index));
    await Promise.resolve(); // the subscription's own first drain
    void left.send(note(1));
    void left.send(note(2));
    void left.send(note(3));
    queueMicrotask(() => log.push('next microtask'));
    const inSend = [...log];
    await new Promise((resolve) => setImmediate(resolve));
    await left.close();
    return { inSend, delivered: log };
  }

  it('delivers nothing inside send()', async () => {
    expect((await burst()).inSend).toEqual([]);
  });

  it('delivers a burst of sends on one microtask, before the next one queued, in order', async () => {
    expect((await burst()).delivered).toEqual([1, 2, 3, 'next microtask']);
  });

  it('completes after the messages already sent when the peer closes', async () => {
    const [left, right] = createMemoryPair();
    const all = firstValueFrom(right.messages.pipe(toArray()));
    void left.send(note(1));
    await left.close();
    expect(await all).toEqual([note(1)]);
  });
});

/** A source that records when the queue pauses and resumes it. */
function recordingFlow() {
  const calls: string[] = [];
  return { calls, flow: { pause: () => calls.push('pause'), resume: () => calls.push('resume') } };
}

describe('InboundQueue', () => {
  /** Four frames pushed into a queue of high water 2, then a subscriber that takes them all. */
  async function overflow() {
    const { calls, flow } = recordingFlow();
    const queue = new InboundQueue('test', { flow, highWater: 2 });
    for (let i = 0; i < 4; i++) queue.push(note(i));
    const beforeDelivery = [...calls];
    const frames: InboundFrame[] = [];
    queue.messages.subscribe((frame) => frames.push(frame));
    await Promise.resolve();
    return { beforeDelivery, afterDelivery: calls, frames };
  }

  it('pauses the source while more than highWater frames wait', async () => {
    expect((await overflow()).beforeDelivery).toEqual(['pause']);
  });

  it('delivers the frames that waited, in order', async () => {
    expect((await overflow()).frames).toEqual([note(0), note(1), note(2), note(3)]);
  });

  it('resumes the source once they are delivered', async () => {
    expect((await overflow()).afterDelivery).toEqual(['pause', 'resume']);
  });

  it('with pauseWhen unobserved, flows only while someone listens', async () => {
    const { calls, flow } = recordingFlow();
    const queue = new InboundQueue('test', { flow, pauseWhen: 'unobserved' });
    expect(calls).toEqual(['pause']);
    queue.push(note(1));
    const subscription = queue.messages.subscribe();
    await Promise.resolve();
    expect(calls).toEqual(['pause', 'resume']);
    subscription.unsubscribe();
    expect(calls).toEqual(['pause', 'resume', 'pause']);
    queue.complete();
    expect(await firstValueFrom(queue.messages.pipe(toArray()))).toEqual([]);
    expect(calls).toEqual(['pause', 'resume', 'pause']); // never resumed once ended
  });

  it('keeps frames for the next subscriber, then the failure after them', async () => {
    const queue = new InboundQueue('test');
    queue.push(note(1));
    queue.fail(new TransportError('gone'));
    queue.push(note(2)); // after the end: dropped
    const frames: InboundFrame[] = [];
    const failure = await new Promise((resolve) =>
      queue.messages.subscribe({ next: (frame) => frames.push(frame), error: resolve }),
    );
    expect(frames).toEqual([note(1)]);
    expect(failure).toEqual(new TransportError('gone'));
  });

  it('has a single consumer', async () => {
    const queue = new InboundQueue('test');
    queue.messages.subscribe();
    await expect(firstValueFrom(queue.messages)).rejects.toThrow('A test transport has a single consumer');
  });
});
