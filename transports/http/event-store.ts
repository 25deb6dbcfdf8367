import type { JsonRpcMessage } from '../../lib/jsonrpc/types';

export interface StoredEvent {
  readonly id: string;
  readonly message: JsonRpcMessage;
}

/**
 * Where a Streamable HTTP server keeps the events it sent on SSE streams, so a client that lost a stream
 * can resume it (GET with `Last-Event-ID`). Event ids are unique per session and name their stream, and
 * a replay returns only events of that stream, after that id. Implement it over Redis or a database to
 * resume across processes; `MemoryEventStore` is the bounded in-process default.
 */
export interface EventStore {
  /** Records `message` sent on `streamId` of `sessionId`; returns the id to put on its SSE event. */
  append(sessionId: string, streamId: string, message: JsonRpcMessage): string | Promise<string>;
  /**
   * The stream `lastEventId` belongs to and the events sent on it after that id, oldest first; undefined
   * when the id is unknown (never issued, another session's, or already evicted).
   */
  replayAfter(
    sessionId: string,
    lastEventId: string,
  ):
    | { streamId: string; events: readonly StoredEvent[] }
    | undefined
    | Promise<{ streamId: string; events: readonly StoredEvent[] } | undefined>;
  /** Forgets a session (it was deleted or expired). */
  dropSession(sessionId: string): void | Promise<void>;
}

export interface MemoryEventStoreOptions {
  /** Events kept per stream; older ones are evicted first (default 1000). */
  readonly maxEventsPerStream?: number;
  /** Streams kept per session; the least recently written is evicted first (default 100). */
  readonly maxStreamsPerSession?: number;
}

interface StreamLog {
  /** Sequence number of `events[0]`. */
  first: number;
  readonly events: JsonRpcMessage[];
}

/**
 * An in-memory, bounded event store. An id is `<stream>:<sequence>`; a replay after an evicted event is
 * refused (undefined) rather than silently skipping what was lost.
 */
export class MemoryEventStore implements EventStore {
  private readonly sessions = new Map<string, Map<string, StreamLog>>();
  private readonly maxEvents: number;
  private readonly maxStreams: number;

  constructor(options: MemoryEventStoreOptions = {}) {
    this.maxEvents = options.maxEventsPerStream ?? 1000;
    this.maxStreams = options.maxStreamsPerSession ?? 100;
  }

  append(sessionId: string, streamId: string, message: JsonRpcMessage): string {
    if (streamId.includes(':')) throw new TypeError('A stream id must not contain ":"');
    let streams = this.sessions.get(sessionId);
    if (!streams) this.sessions.set(sessionId, (streams = new Map()));
    let log = streams.get(streamId);
    if (log) {
      streams.delete(streamId); // re-insert: the Map's order is recency of writing
    } else {
      log = { first: 0, events: [] };
      if (streams.size >= this.maxStreams) streams.delete(streams.keys().next().value!);
    }
    streams.set(streamId, log);
    log.events.push(message);
    if (log.events.length > this.maxEvents) {
      log.events.shift();
      log.first++;
    }
    return `${streamId}:${log.first + log.events.length - 1}`;
  }

  replayAfter(sessionId: string, lastEventId: string): { streamId: string; events: StoredEvent[] } | undefined {
    const separator = lastEventId.lastIndexOf(':');
    if (separator <= 0) return undefined;
    const streamId = lastEventId.slice(0, separator);
    const sequenceText = lastEventId.slice(separator + 1);
    if (!/^\d+$/.test(sequenceText)) return undefined;
    const sequence = Number(sequenceText);
    const log = this.sessions.get(sessionId)?.get(streamId);
    // The event after `sequence` must still be here (or not yet exist): otherwise events were lost.
    if (!log || sequence < log.first - 1 || sequence >= log.first + log.events.length) return undefined;
    const events = log.events.slice(sequence + 1 - log.first).map((message, index) => ({
      id: `${streamId}:${sequence + 1 + index}`,
      message,
    }));
    return { streamId, events };
  }

  dropSession(sessionId: string): void {
    this.sessions.delete(sessionId);
  }
}
