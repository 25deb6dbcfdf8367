/**
 * `switchboard call`: a one-shot client. Connects in the era the server speaks (connect.ts), sends one request
 * (or notification), prints the result as JSON on stdout and closes; with `--task`, calls the tool as a task
 * and follows it to its end (call-task.ts). The server's log messages, its progress reports and (stdio) its
 * stderr go to stderr; the trace (`--trace`, `--trace-file`) is the client connection's.
 */
import type { Client } from '../client/client';
import type { SendOptions } from '../core/connection';
import { collectPages } from '../client/pages';
import { LIST_KEYS, type CallCommand } from './args';
import { callAsTask } from './call-task';
import { runConnected, requestFailure } from './connect';
import { CliFailure, EXIT_OK } from './errors';
import type { CliIo } from './io';
import { unknownToolHint } from './tool-hint';
import { withTrace } from './trace';

export function call(command: CallCommand, io: CliIo): Promise<number> {
  return withTrace(command, io, () =>
    runConnected(command, io, {
      run: async (client, signal) => {
        if (command.task) return callAsTask(client, command, command.task, signal, io);
        const result = await send(client, command, signal, io);
        if (result !== undefined) io.out(JSON.stringify(result, null, 2));
        return EXIT_OK;
      },
      failure: async (error, client) => {
        const failure = requestFailure(command.method, error);
        const hint = command.method === 'tools/call' && (await unknownToolHint(client, command.params?.name, error));
        return hint ? new CliFailure(failure.message, [...failure.detail, hint], { cause: error }) : failure;
      },
    }),
  );
}

function send(
  client: Client,
  { method, params, timeoutMs, all }: CallCommand,
  signal: AbortSignal,
  io: CliIo,
): Promise<unknown> {
  // A server that reports progress is working: its progress restarts the timeout, and shows on stderr.
  const options: SendOptions = {
    timeout: timeoutMs,
    signal,
    resetTimeoutOnProgress: true,
    onProgress: ({ progress, total, message }) =>
      io.err(`progress ${progress}${total === undefined ? '' : `/${total}`}${message ? `: ${message}` : ''}`),
  };
  if (method.startsWith('notifications/')) return client.notify(method, params).then(() => undefined);
  if (!all) return client.request(method, params, options);
  const key = LIST_KEYS[method]!;
  type Page = Partial<Record<string, readonly unknown[]>> & { nextCursor?: string };
  const page = (cursor: string | undefined) =>
    client.request(method, cursor === undefined ? params : { ...params, cursor }, options) as Promise<Page>;
  return collectPages(method, key, page).then((items) => ({ [key]: items }));
}
