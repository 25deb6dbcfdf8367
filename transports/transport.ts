/** The transport port lives in the core (`lib/core/transport.ts`); the implementations here re-export it. */
export type { Transport, TransportSendOptions } from '../lib/core/transport';
