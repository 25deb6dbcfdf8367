/** The requests a connection serves: each `RequestContext` from its creation to its last write, and `onCancel`. */
import { describe, expect, it } from 'vitest';
import { ConnectionClosedError, RequestCancelledError } from '../../lib/jsonrpc/errors';
import type { RequestContext } from '../../lib/core/request-context';
import { connectPair } from '../helpers/pair';
import { deferred, serverWith, tool } from '../helpers/fixtures';

/** A server whose `wait` tool hands its context out and answers when `release` resolves. */
async function waiting() {
  const started = deferred<RequestContext>();
  const release = deferred();
  const definition = serverWith([
    tool('wait', async (_args, context) => {
      started.resolve(context as RequestContext);
      await release.promise;
      return { content: [] };
    }),
  ]);
  return { ...(await connectPair(definition)), started: started.promise, release };
}

describe('RequestContext.onCancel', () => {
  it('calls the hook once, with the cancel reason, when the peer cancels', async () => {
    const { client, started } = await waiting();
    const abort = new AbortController();
    const call = client.callTool('wait', {}, { signal: abort.signal });
    const context = await started;
    const heard = deferred<Error>();
    const reasons: Error[] = [];
    context.onCancel((reason) => {
      reasons.push(reason);
      heard.resolve(reason);
    });
    abort.abort();
    await expect(call).rejects.toBeInstanceOf(RequestCancelledError);
    expect(await heard.promise).toBeInstanceOf(RequestCancelledError);
    expect(reasons).toHaveLength(1);
    expect(context.cancelled).toBe(true);
    await client.close();
  });

  it('calls the hook when the connection closes before the request ends', async () => {
    const { client, serverConnection, started } = await waiting();
    void client.callTool('wait').catch(() => undefined);
    const context = await started;
    const reasons: Error[] = [];
    context.onCancel((reason) => reasons.push(reason));
    await serverConnection.close();
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toBeInstanceOf(ConnectionClosedError);
    await client.close();
  });

  it('never calls a hook once the request has ended, nor one that was removed', async () => {
    const { client, serverConnection, started, release } = await waiting();
    const call = client.callTool('wait');
    const context = await started;
    const calls: string[] = [];
    const remove = context.onCancel(() => calls.push('removed'));
    context.onCancel(() => calls.push('kept'));
    remove();
    release.resolve();
    await call;
    expect(context.done).toBe(true);
    context.onCancel(() => calls.push('late'));
    await serverConnection.close();
    expect(calls).toEqual([]);
    await client.close();
  });

  it('calls a hook added after the cancel at once', async () => {
    const { client, started } = await waiting();
    const abort = new AbortController();
    const call = client.callTool('wait', {}, { signal: abort.signal });
    const context = await started;
    const cancelled = deferred();
    context.onCancel(() => cancelled.resolve());
    abort.abort();
    await expect(call).rejects.toBeInstanceOf(RequestCancelledError);
    await cancelled.promise;
    const late: Error[] = [];
    context.onCancel((reason) => late.push(reason));
    expect(late).toHaveLength(1);
    expect(late[0]).toBeInstanceOf(RequestCancelledError);
    await client.close();
  });

  it('keeps calling the other hooks when one throws', async () => {
    const { client, serverConnection, started } = await waiting();
    void client.callTool('wait').catch(() => undefined);
    const context = await started;
    const calls: string[] = [];
    context.onCancel(() => {
      throw new Error('hook failed');
    });
    context.onCancel(() => calls.push('second'));
    await serverConnection.close();
    expect(calls).toEqual(['second']);
    await client.close();
  });

  it('aborts the signal with the same reason the hooks get', async () => {
    const { client, serverConnection, started } = await waiting();
    void client.callTool('wait').catch(() => undefined);
    const context = await started;
    const signal = context.signal;
    let heard: Error | undefined;
    context.onCancel((reason) => (heard = reason));
    await serverConnection.close();
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(heard);
    await client.close();
  });
});
