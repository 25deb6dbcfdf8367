/** The Node-only part of tasks for mcp-switchboard: `LmdbTaskStore`, tasks kept on disk across restarts. */
export { LmdbTaskStore, type LmdbTaskStoreOptions } from './lmdb-task-store';
// The types its public signatures name, so this subpath stands alone.
export type { TaskListOptions, TaskPage, TaskStore, TaskStoreOptions } from './task-store';
export type { TaskChange, TaskError, TaskOwner, TaskRecord, TaskStatus } from './types';
export type { JsonObject } from '../jsonrpc/types';
export type { Clock } from '../core/clock';
