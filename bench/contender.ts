/**
 * What the scenarios need from an implementation. `ours.ts` and `sdk.ts` each provide one, so every
 * scenario runs the same harness code against both.
 */
import type { Operation } from './harness';

/** A connected in-process client/server pair, seen through the operations the scenarios time. */
export interface BenchPair {
  /** `tools/call` of the `echo` tool with `{ text: 'hi' }`. */
  readonly callEcho: Operation;
  readonly ping: Operation;
  /** One `notifications/message` from the server to the client. */
  readonly notifyClient: Operation;
  /** Calls `listener` for every `notifications/message` the client receives. */
  onClientNotification(listener: () => void): void;
  close(): Promise<void>;
}

/** Builds and connects one pair; its promise resolves once the handshake is complete. */
export type PairFactory = () => Promise<BenchPair>;

/** One trip through the outbound request-correlation path, and how to release what it holds. */
export interface CorrelationProbe {
  readonly roundTrip: Operation;
  close(): Promise<void>;
}

export interface Contender {
  readonly name: string;
  createCorrelationProbe(): Promise<CorrelationProbe>;
  /** The pair used for tools/call, ping and notification figures. */
  readonly connectPair: PairFactory;
  /** Pair factories whose handshake and heap are measured, by entrant name. */
  readonly handshakeVariants: Readonly<Record<string, PairFactory>>;
}

/** Just the `tools/call` operation and the way out: all the stdio and socket rows need. */
export type CallPair = Pick<BenchPair, 'callEcho' | 'close'>;
