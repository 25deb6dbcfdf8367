/** The Node-only parts of the client for mcp-switchboard: era verdicts kept on disk between processes. */
export { ERA_CACHE_FILE, FileEraStore, type FileEraStoreOptions } from './file-era-store';
