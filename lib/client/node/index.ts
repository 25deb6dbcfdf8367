/** The Node-only parts of the client for mcp-switchboard: era verdicts kept on disk between processes. */
export { ERA_CACHE_FILE, FileEraStore, type FileEraStoreOptions } from './file-era-store';
// The types its public signatures name, so this subpath stands alone.
export type { EraStore } from '../era-cache';
export { ERA_STORE_FORMAT, ERA_STORE_VERSION, type EraStoreDocument, type StoredEra } from '../era-verdict';
