/**
 * Tasks in the 2026-07-28 extension `io.modelcontextprotocol/tasks`: the client declares the extension in
 * each request's `_meta` (`clientCapabilities.extensions`), and a server that offers it (`server/discover`'s
 * `capabilities.extensions`) may answer such a `tools/call` with a flat `{ resultType: "task", taskId, ... }`;
 * `tasks/get` inlines the end or the open input requests, `tasks/update` answers them, `tasks/cancel` is
 * acknowledged with nothing. There is no `tasks/result`, `tasks/list` or status notification. Over HTTP the
 * extension's requests carry `Mcp-Name: <taskId>` like any named request (`NAME_SOURCES`).
 */
import { isPlainObject } from '../../jsonrpc/classify';
import type { JsonObject } from '../../jsonrpc/types';
import { META } from '../../protocol/modern';
import { TASKS_EXTENSION_ID } from '../../tasks/task-wire';
import type { ClientRequestOptions } from '../client-connection';
import type { TaskCalls, TaskCallsHost, TaskCreation } from './task-calls';
import { modernSnapshot, modernView, toolResult, type TaskSnapshot } from './task-view';

export class ModernTaskCalls implements TaskCalls {
  readonly era = 'modern';
  /** The `_meta` that declares the extension (the client's own capabilities, with it added). */
  private readonly meta: JsonObject;

  constructor(private readonly host: TaskCallsHost) {
    const capabilities = host.capabilities as JsonObject;
    const extensions = isPlainObject(capabilities.extensions) ? capabilities.extensions : {};
    this.meta = {
      [META.clientCapabilities]: { ...capabilities, extensions: { ...extensions, [TASKS_EXTENSION_ID]: {} } },
    };
  }

  get offered(): boolean {
    const extensions = this.host.serverCapabilities?.extensions;
    return isPlainObject(extensions) && isPlainObject(extensions[TASKS_EXTENSION_ID]);
  }

  /** The extension has no time to live to ask for: the server decides (`ttlMs` is not sent). */
  createParams(params: JsonObject): JsonObject {
    return this.declared(params);
  }

  created(result: JsonObject): TaskCreation {
    if (result.resultType !== 'task') return { result: toolResult(result, 'The tools/call result') };
    return { view: modernView(result, 'The task tools/call created') };
  }

  async get(taskId: string, options?: ClientRequestOptions): Promise<TaskSnapshot> {
    return modernSnapshot(await this.host.request('tasks/get', this.declared({ taskId }), options));
  }

  /** Acknowledged with nothing: the next `tasks/get` shows the task cancelled. */
  async cancel(taskId: string, options?: ClientRequestOptions): Promise<undefined> {
    await this.host.request('tasks/cancel', this.declared({ taskId }), options);
    return undefined;
  }

  async update(taskId: string, inputResponses: JsonObject, signal: AbortSignal): Promise<void> {
    await this.host.request('tasks/update', this.declared({ taskId, inputResponses }), { signal });
  }

  /** `params` declaring the extension: a server serves the extension's requests only to a request that does. */
  private declared(params: JsonObject): JsonObject {
    const own = isPlainObject(params._meta) ? params._meta : undefined;
    return { ...params, _meta: own ? { ...own, ...this.meta } : this.meta };
  }
}
