/** The Node-only parts of OAuth for mcp-switchboard: where tokens live on disk, and the loopback redirect. */
export { CONFIG_DIR_ENV, defaultConfigDir, resolveConfigDir, type ConfigDirContext } from './config-dir';
export { FileTokenStore, recordFileName, type FileTokenStoreOptions } from './file-token-store';
export { LockTimeoutError } from './file-lock';
export { startLoopbackRedirect, type LoopbackRedirect, type LoopbackRedirectOptions } from './loopback-redirect';
export { loopbackInteraction } from './loopback-interaction';
// The types its public signatures name, so this subpath stands alone.
export type { Change as TokenRecordChange } from './file-token-store';
export type { LockHolder } from './file-lock';
export type { AuthKey, AuthRecord, StoredClient, StoredTokens, TokenStore } from '../token-store';
export type { AuthorizationInteraction } from '../client/authorization-code';
export type { LocalErrorCode, SwitchboardError } from '../../jsonrpc/errors';
