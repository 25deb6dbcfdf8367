export { canonicalJson } from './canonical-json';
export {
  createKeyRing,
  KeyRing,
  MIN_SECRET_BYTES,
  processKeyRing,
  type KeyRingOptions,
  type RequestStateKey,
} from './key-ring';
export {
  DEFAULT_MAX_REQUEST_STATE_LENGTH,
  DEFAULT_REQUEST_STATE_TTL_MS,
  open,
  seal,
  type OpenFailure,
  type OpenResult,
  type RequestStateBinding,
  type RequestStateLimits,
  type SealInput,
} from './codec';
