/**
 * `fromSdkTransport`, the adapter that carries our connections over a transport of the official SDK's shape:
 * its own contract, shown with a hand-written SDK-shaped transport, then over a real SDK `InMemoryTransport`
 * pair. (The interop suite, test/interop/sdk.test.ts, runs whole conversations through it.)
 */
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { Client } from '../../lib/client/client';
import { TransportError } from '../../lib/jsonrpc/errors';
import type { InboundFrame, JsonRpcMessage } from '../../lib/jsonrpc/types';
import { defineServer } from '../../lib/server/definition';
import { Server } from '../../lib/server/server';
import { fromSdkTransport, type SdkTransportLike, type SdkTransportSendOptions } from '../../transports/sdk-adapter';
import { cleanups } from '../helpers/cleanups';
import { validateEmitted } from '../helpers/pair';

/** One macrotask: every microtask chain already started has run by then. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * A hand-written transport of the SDK's shape, for what the real `InMemoryTransport` cannot show: a
 * failing start, onerror reports, a close that forgets `onclose`, send options.
 */
class ScriptedTransport implements SdkTransportLike {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: ((message: any, extra?: any) => void) | undefined;
  sessionId?: string | undefined;
  readonly calls: string[] = [];
  readonly sent: { message: unknown; options: SdkTransportSendOptions | undefined; argc: number }[] = [];
  startResult: Promise<void> = Promise.resolve();
  sendError: Error | undefined;
  callOnCloseFromClose = true;

  start(): Promise<void> {
    this.calls.push(
      `start(callbacks: ${[this.onmessage, this.onclose, this.onerror].every((callback) => typeof callback === 'function')})`,
    );
    return this.startResult;
  }

  send(...args: [message: unknown, options?: SdkTransportSendOptions]): Promise<void> {
    this.sent.push({ message: args[0], options: args[1], argc: args.length });
    return this.sendError ? Promise.reject(this.sendError) : Promise.resolve();
  }

  close(): Promise<void> {
    this.calls.push('close');
    if (this.callOnCloseFromClose) this.onclose?.();
    return Promise.resolve();
  }
}

/** Subscribes and records what the stream does. */
function observe(messages: Observable<InboundFrame>) {
  const frames: InboundFrame[] = [];
  const state: { completed: boolean; error: unknown } = { completed: false, error: undefined };
  const ended = new Promise<void>((resolve) =>
    messages.subscribe({
      next: (frame) => frames.push(frame),
      error: (error) => {
        state.error = error;
        resolve();
      },
      complete: () => {
        state.completed = true;
        resolve();
      },
    }),
  );
  return { frames, state, ended };
}

const PING: JsonRpcMessage = { jsonrpc: '2.0', id: 1, method: 'ping' };

describe('fromSdkTransport', () => {
  it('does nothing before someone subscribes', () => {
    const sdk = new ScriptedTransport();
    fromSdkTransport(sdk);
    expect(sdk.calls).toEqual([]);
  });

  it('installs the callbacks, then starts, on the first subscription', () => {
    const sdk = new ScriptedTransport();
    observe(fromSdkTransport(sdk).messages);
    expect(sdk.calls).toEqual(['start(callbacks: true)']);
  });

  it('feeds onmessage into the stream', () => {
    const sdk = new ScriptedTransport();
    const { frames } = observe(fromSdkTransport(sdk).messages);
    sdk.onmessage!(PING, { authInfo: undefined });
    expect(frames).toEqual([PING]);
  });

  it('completes the stream on onclose, and refuses sends after it', async () => {
    const sdk = new ScriptedTransport();
    const transport = fromSdkTransport(sdk);
    const { state, ended } = observe(transport.messages);
    sdk.onclose!();
    await ended;
    expect(state).toEqual({ completed: true, error: undefined });
    await expect(transport.send(PING)).rejects.toBeInstanceOf(TransportError);
  });

  /** An SDK-shaped transport whose start() fails with "no such host", subscribed, and a send issued meanwhile. */
  function failingStart() {
    const sdk = new ScriptedTransport();
    const cause = new Error('no such host');
    sdk.startResult = Promise.reject(cause);
    const transport = fromSdkTransport(sdk);
    const { state, ended } = observe(transport.messages);
    const send = transport.send(PING); // issued while start() is pending
    return { sdk, cause, state, ended, send };
  }

  it('errors the stream with a TransportError carrying the cause when start() fails', async () => {
    const { cause, state, ended, send } = failingStart();
    send.catch(() => undefined);
    await ended;
    expect(state.error).toBeInstanceOf(TransportError);
    expect(state.error).toMatchObject({ message: expect.stringMatching(/no such host/), cause });
  });

  it('refuses a send issued while a failing start() was pending, sending nothing', async () => {
    const { sdk, ended, send } = failingStart();
    await ended;
    await expect(send).rejects.toBeInstanceOf(TransportError);
    expect(sdk.sent).toEqual([]);
  });

  const problem = new Error('a line that is not JSON-RPC');

  it('reports onerror to the onError option without ending the stream', async () => {
    const sdk = new ScriptedTransport();
    const reported: Error[] = [];
    const { frames, state } = observe(fromSdkTransport(sdk, { onError: (error) => reported.push(error) }).messages);
    expect(() => sdk.onerror!(problem)).not.toThrow();
    sdk.onmessage!(PING);
    expect(reported).toEqual([problem]);
    expect(frames).toEqual([PING]);
    expect(state).toEqual({ completed: false, error: undefined });
  });

  it('drops an onerror report without the option, or with one that throws: the SDK transport never sees a throw', () => {
    const quiet = new ScriptedTransport();
    observe(fromSdkTransport(quiet).messages);
    expect(() => quiet.onerror!(problem)).not.toThrow();
    const loud = new ScriptedTransport();
    observe(
      fromSdkTransport(loud, {
        onError: () => {
          throw new Error('listener bug');
        },
      }).messages,
    );
    expect(() => loud.onerror!(problem)).not.toThrow();
  });

  /** Two sends issued before start() resolves, the second related to request 7. */
  function sendsBeforeStart() {
    const sdk = new ScriptedTransport();
    let started!: () => void;
    sdk.startResult = new Promise((resolve) => (started = resolve));
    const transport = fromSdkTransport(sdk);
    observe(transport.messages);
    const sends = Promise.all([
      transport.send(PING),
      transport.send({ jsonrpc: '2.0', id: 7, result: {} }, { relatedRequestId: 7 }),
    ]);
    return { sdk, transport, started, sends };
  }

  it('holds sends until start() resolves', async () => {
    const { sdk, started, sends } = sendsBeforeStart();
    await settle();
    expect(sdk.sent).toEqual([]);
    started();
    await sends;
    expect(sdk.sent).toHaveLength(2);
  });

  it('forwards relatedRequestId, and passes no options when there are none', async () => {
    const { sdk, started, sends } = sendsBeforeStart();
    started();
    await sends;
    expect(sdk.sent).toEqual([
      { message: PING, options: undefined, argc: 1 },
      { message: { jsonrpc: '2.0', id: 7, result: {} }, options: { relatedRequestId: 7 }, argc: 2 },
    ]);
  });

  it('wraps send failures in TransportError', async () => {
    const { sdk, transport, started, sends } = sendsBeforeStart();
    started();
    await sends;
    const cause = new Error('socket hang up');
    sdk.sendError = cause;
    const failure = await transport.send(PING).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TransportError);
    expect(failure).toMatchObject({ cause });
  });

  it('closes once, completing the stream even when the SDK transport does not call onclose', async () => {
    const sdk = new ScriptedTransport();
    sdk.callOnCloseFromClose = false;
    const transport = fromSdkTransport(sdk);
    const { state, ended } = observe(transport.messages);
    await Promise.all([transport.close(), transport.close()]);
    await transport.close();
    await ended;
    expect(state.completed).toBe(true);
    expect(sdk.calls.filter((call) => call === 'close')).toHaveLength(1);
    await expect(transport.send(PING)).rejects.toBeInstanceOf(TransportError);
  });

  it('does not close an SDK transport that already reported onclose', async () => {
    const sdk = new ScriptedTransport();
    const transport = fromSdkTransport(sdk);
    observe(transport.messages);
    sdk.onclose!();
    await transport.close();
    expect(sdk.calls).toEqual(['start(callbacks: true)']);
  });

  it('forwards setProtocolVersion when the SDK transport has it', () => {
    const sdk = new ScriptedTransport();
    const transport = fromSdkTransport(sdk);
    expect(() => transport.setProtocolVersion?.('2025-06-18')).not.toThrow(); // absent: nothing to forward
    const versions: string[] = [];
    (sdk as SdkTransportLike).setProtocolVersion = (version) => versions.push(version);
    transport.setProtocolVersion?.('2025-06-18');
    expect(versions).toEqual(['2025-06-18']);
  });

  it('reads sessionId live', () => {
    const sdk = new ScriptedTransport();
    const transport = fromSdkTransport(sdk);
    expect(transport.sessionId).toBeUndefined();
    sdk.sessionId = 'session-1';
    expect(transport.sessionId).toBe('session-1');
  });

  it('has one subscriber at a time', async () => {
    const sdk = new ScriptedTransport();
    const transport = fromSdkTransport(sdk);
    observe(transport.messages);
    const second = observe(transport.messages);
    await second.ended;
    expect(second.state.error).toBeInstanceOf(TransportError);
    expect(sdk.calls).toEqual(['start(callbacks: true)']);
  });

  it('hands the stream to a later subscriber once the first left, without starting again', async () => {
    const sdk = new ScriptedTransport();
    const transport = fromSdkTransport(sdk);
    const first: unknown[] = [];
    const probe = transport.messages.subscribe((message) => first.push(message));
    await Promise.resolve();
    sdk.onmessage!({ jsonrpc: '2.0', id: 1, result: {} });
    probe.unsubscribe();
    const second = observe(transport.messages);
    sdk.onmessage!({ jsonrpc: '2.0', id: 2, result: {} });
    expect(first).toEqual([{ jsonrpc: '2.0', id: 1, result: {} }]);
    expect(second.frames).toEqual([{ jsonrpc: '2.0', id: 2, result: {} }]);
    expect(sdk.calls).toEqual(['start(callbacks: true)']);
  });

  it('carries our client and server over a real SDK InMemoryTransport pair', async () => {
    const [a, b] = InMemoryTransport.createLinkedPair();
    const server = new Server(defineServer({ name: 'ours', version: '1.0.0', tools: [] }));
    const connection = server.connect(fromSdkTransport(b));
    const client = new Client({ name: 'ours', version: '1.0.0' });
    validateEmitted(connection);
    validateEmitted(client);
    cleanups.push(
      () => client.close(),
      () => server.close(),
    );
    await client.connect(fromSdkTransport(a));
    expect(await client.listTools()).toEqual([]);
    await client.close();
    expect(await connection.closed).toMatchObject({ kind: 'transport-closed' });
  });
});
