/** The types of the instrumentation port, in one list: each entry that names them re-exports this module. */
export type {
  RequestInstrumentation,
  RequestOutcome,
  RequestSpan,
  SessionTiming,
  TracedNetwork,
  TracedRequest,
  TracedSession,
} from './instrumentation';
