/**
 * Pairs each request of a trace with what ended it, per connection and direction (a request id means
 * something only there): its result or error, its cancellation or timeout, its connection closing, or the
 * end of the trace. Finds on the way what breaks the protocol: answers too late or to no request, ids reused
 * in flight, messages the connection's era does not allow. Keeps only what is in flight (and the ids of
 * requests given up on, for late answers), so a long trace costs little memory.
 *
 * A client's era probe is no failure when it falls back: a handshake-era server refuses `server/discover`
 * (-32601, or HTTP 404 without a JSON-RPC answer), and that is how the fallback works. The findings of a
 * `server/discover` a client sends before its connection has an era are held until the probe's verdict (the
 * `era-probe` lifecycle event that follows): `failed` lists them (or, when there are none, the failure
 * itself, as an `error`), any other verdict excuses them. A reconnection's probe, on a connection that has
 * its era, is judged as any request.
 */
import type { RequestId } from '../../jsonrpc/types';
import type { ProtocolEra } from '../../protocol/methods';
import { isTimeoutReason } from '../cancel-reason';
import type { TraceEvent } from '../types';
import { eraOfState, eraViolation } from './era-check';
import type { Finding, FindingRule } from './findings';
import { derivedSpanId, derivedTraceId } from './ids';

/** How a request ended. */
export type ExchangeOutcome = 'result' | 'error' | 'cancelled' | 'timed-out' | 'closed' | 'unanswered';

/** A request and what ended it. */
export interface Exchange {
  readonly request: TraceEvent;
  /** The result or error; absent when the request ended otherwise. */
  readonly answer?: TraceEvent;
  readonly outcome: ExchangeOutcome;
  /** When it ended (for `unanswered`, the trace's last time). */
  readonly end: number;
  /** From the answer's `latencyMs`, else the time between the two events; answered requests only. */
  readonly latencyMs?: number;
  /** The request's OpenTelemetry ids: its events' own, else its cause's trace and a span id derived from it. */
  readonly traceId: string;
  readonly spanId: string;
  /** The span of the request that caused this one, when the trace says and it is known. */
  readonly parentSpanId?: string;
}

export interface ExchangeListener {
  exchange?(exchange: Exchange): void;
  finding(finding: Finding): void;
}

interface Open {
  readonly request: TraceEvent;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  /** The request was cancelled (`timedOut`: by its sender's timeout) and no answer is due. */
  cancelled?: { readonly timedOut: boolean; readonly time: number };
}

/** A request its sender gave up on: how, and its method (a late answer's event may not name it). */
interface GivenUp {
  readonly how: 'was cancelled' | 'timed out';
  readonly method: string | undefined;
}

/** Requests given up on that are remembered for late answers: the most recent ones. */
const MAX_GIVEN_UP = 10_000;

/** The part lifecycle of a client's era probe (lib/client/era-probe.ts), and its verdict that is a failure. */
const ERA_PROBE = 'era-probe';
const PROBE_FAILED = 'failed';
/** Findings held for one connection's probe (a probe is one or two exchanges); later ones are listed at once. */
const MAX_HELD_PER_PROBE = 8;

const key = (connection: string, direction: 'in' | 'out', id: RequestId) =>
  `${connection}\u0000${direction}\u0000${typeof id}:${id}`;

const opposite = (direction: 'in' | 'out') => (direction === 'in' ? 'out' : 'in');

export class ExchangePairer {
  private readonly open = new Map<string, Open>();
  private readonly givenUp = new Map<string, GivenUp>();
  private readonly eras = new Map<string, ProtocolEra>();
  /** Findings of era probes waiting for their verdict, by connection. */
  private readonly probing = new Map<string, Finding[]>();
  private last = 0;

  constructor(private readonly listener: ExchangeListener) {}

  /** Requests in flight right now. */
  get inFlight(): number {
    return this.open.size;
  }

  add(event: TraceEvent): void {
    if (event.time > this.last) this.last = event.time;
    switch (event.kind) {
      case 'lifecycle':
        return this.lifecycle(event);
      case 'request':
        return this.request(event);
      case 'notification':
        return this.notification(event);
      case 'result':
      case 'error':
        return this.answer(event);
      case 'ignored':
        return this.ignored(event);
      case 'invalid':
        return this.find('invalid-frame', event, `not a valid JSON-RPC message: ${event.reason ?? 'no reason given'}`);
      case 'batch':
        return;
    }
  }

  /** The trace ended: every request still in flight ends unanswered (one cancelled ends cancelled). */
  finish(): void {
    for (const connection of [...this.probing.keys()]) this.releaseProbe(connection, true);
    for (const [k, open] of this.open) {
      this.open.delete(k);
      if (open.cancelled) this.end(open, open.cancelled.timedOut ? 'timed-out' : 'cancelled', this.last);
      else {
        this.find('unanswered', open.request, 'never answered: the trace ends first');
        this.end(open, 'unanswered', this.last);
      }
    }
  }

  private lifecycle(event: TraceEvent): void {
    if (event.role === undefined) return;
    if (event.actor === ERA_PROBE) return this.probeVerdict(event);
    if (event.actor !== undefined) return;
    const era = eraOfState(event.to);
    if (era) this.eras.set(event.connection, era);
    if (event.to !== 'closed') return;
    this.eras.delete(event.connection);
    this.releaseProbe(event.connection, true);
    for (const [k, open] of this.open) {
      if (open.request.connection !== event.connection) continue;
      this.open.delete(k);
      if (open.cancelled) this.end(open, open.cancelled.timedOut ? 'timed-out' : 'cancelled', event.time);
      else {
        this.find(
          'unanswered',
          open.request,
          `never answered: the connection closed first (${event.reason ?? 'closed'})`,
        );
        this.end(open, 'closed', event.time);
      }
    }
  }

  private request(event: TraceEvent): void {
    this.checkEra(event, 'request');
    if (event.direction === undefined || !isId(event.id)) return;
    const k = key(event.connection, event.direction, event.id);
    if (this.open.has(k)) this.find('duplicate-id', event, `reuses the id of a request still in flight`);
    this.givenUp.delete(k);
    this.open.set(k, this.opened(event));
  }

  private opened(request: TraceEvent): Open {
    const cause = request.cause;
    const parent = cause
      ? (this.open.get(key(cause.connection, 'in', cause.id)) ?? this.open.get(key(cause.connection, 'out', cause.id)))
      : undefined;
    const identity = `${request.connection}|${request.direction}|${typeof request.id}:${request.id}|${request.time}`;
    return {
      request,
      traceId: request.traceId ?? parent?.traceId ?? derivedTraceId(identity),
      spanId: request.spanId ?? derivedSpanId(identity),
      parentSpanId: parent?.spanId,
    };
  }

  private notification(event: TraceEvent): void {
    this.checkEra(event, 'notification');
    if (event.method !== 'notifications/cancelled' || event.direction === undefined) return;
    const params = (event.message as { params?: { requestId?: unknown; reason?: unknown } } | undefined)?.params;
    if (!isId(params?.requestId)) return;
    // A cancellation travels the way its request did: out with our request, in with the peer's.
    const k = key(event.connection, event.direction, params.requestId);
    const open = this.open.get(k);
    if (!open) return;
    const timedOut = isTimeoutReason(params.reason);
    open.cancelled = { timedOut, time: event.time };
    if (event.direction === 'in') return; // the receiver still ends it: an `ignored` event, or a late answer
    this.open.delete(k);
    this.giveUp(k, timedOut, open.request.method);
    if (timedOut) this.find('timeout', open.request, `timed out after ${event.time - open.request.time} ms`);
    this.end(open, timedOut ? 'timed-out' : 'cancelled', event.time);
  }

  private answer(event: TraceEvent): void {
    if (event.kind === 'error') {
      const error = (event.message as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
      const code = typeof error?.code === 'number' ? error.code : undefined;
      // An error without a message is a request that got no JSON-RPC answer (the era probe's): its reason says why.
      const text = typeof error?.message === 'string' ? error.message : (event.reason ?? 'no message');
      this.find('error', event, `error ${code ?? '(no code)'}: ${clip(text)}`, code);
    }
    if (event.direction === undefined || !isId(event.id)) return; // the answer to a frame without an id
    const k = key(event.connection, opposite(event.direction), event.id);
    const open = this.open.get(k);
    if (!open) return this.stray(event, k);
    this.open.delete(k);
    if (open.cancelled) {
      const what = open.cancelled.timedOut ? 'timed out' : 'was cancelled';
      this.find('late-answer', event, `answered ${event.time - open.cancelled.time} ms after the request ${what}`);
    }
    const latencyMs = event.latencyMs ?? event.time - open.request.time;
    this.listener.exchange?.({
      ...this.ids(open),
      request: open.request,
      answer: event,
      outcome: event.kind as 'result' | 'error',
      end: event.time,
      latencyMs,
    });
  }

  /** A dropped message: a response nobody waited for, or a receiver's answer withheld after a cancellation. */
  private ignored(event: TraceEvent): void {
    if (event.direction === undefined || !isId(event.id)) return;
    const message = event.message as { method?: unknown; result?: unknown; error?: unknown } | undefined;
    if (event.direction === 'in' && message !== undefined && message.method === undefined) {
      return this.stray(event, key(event.connection, 'out', event.id));
    }
    if (event.direction !== 'out' || event.method === undefined) return;
    const k = key(event.connection, 'in', event.id);
    const open = this.open.get(k);
    if (!open) return;
    this.open.delete(k);
    const timedOut = open.cancelled?.timedOut ?? isTimeoutReason(event.reason);
    this.end(open, timedOut ? 'timed-out' : 'cancelled', event.time);
  }

  /** A response that answers no request in flight: late when its request was given up on, else to an unknown id. */
  private stray(event: TraceEvent, requestKey: string): void {
    const gaveUp = this.givenUp.get(requestKey);
    if (gaveUp) {
      this.givenUp.delete(requestKey);
      const named =
        event.method === undefined && gaveUp.method !== undefined ? { ...event, method: gaveUp.method } : event;
      return this.find('late-answer', named, `answered after the request ${gaveUp.how}`);
    }
    this.find('unknown-id', event, 'answers an id no request in flight has');
  }

  private giveUp(k: string, timedOut: boolean, method: string | undefined): void {
    if (this.givenUp.size >= MAX_GIVEN_UP) this.givenUp.delete(this.givenUp.keys().next().value!);
    this.givenUp.set(k, { how: timedOut ? 'timed out' : 'was cancelled', method });
  }

  private checkEra(event: TraceEvent, kind: 'request' | 'notification'): void {
    const era = this.eras.get(event.connection);
    if (!era || event.method === undefined || event.role === undefined || event.direction === undefined) return;
    const sender = event.direction === 'out' ? event.role : event.role === 'client' ? 'server' : 'client';
    const why = eraViolation(era, event.method, kind, sender);
    if (why) this.find('era-violation', event, why);
  }

  private end(open: Open, outcome: ExchangeOutcome, end: number): void {
    this.listener.exchange?.({ ...this.ids(open), request: open.request, outcome, end });
  }

  private ids(open: Open): Pick<Exchange, 'traceId' | 'spanId' | 'parentSpanId'> {
    return {
      traceId: open.traceId,
      spanId: open.spanId,
      ...(open.parentSpanId && { parentSpanId: open.parentSpanId }),
    };
  }

  /** The verdict of a client's era probe: a failure lists what was held for it (or itself), any other excuses it. */
  private probeVerdict(event: TraceEvent): void {
    const failed = event.to === PROBE_FAILED;
    const listed = this.releaseProbe(event.connection, failed);
    if (failed && listed === 0)
      this.find('error', event, `the era probe failed: ${clip(event.reason ?? 'no reason given')}`);
  }

  /** Ends the wait of a connection's probe findings: listed when `list`, else dropped; returns how many were listed. */
  private releaseProbe(connection: string, list: boolean): number {
    const held = this.probing.get(connection);
    if (!held) return 0;
    this.probing.delete(connection);
    if (list) for (const finding of held) this.listener.finding(finding);
    return list ? held.length : 0;
  }

  /** A finding of a client's era probe (a `server/discover` before its connection has an era) waits for its verdict. */
  private heldForProbe(finding: Finding, event: TraceEvent): boolean {
    if (event.method !== 'server/discover' || event.role !== 'client' || this.eras.has(event.connection)) return false;
    let held = this.probing.get(event.connection);
    if (!held) this.probing.set(event.connection, (held = []));
    if (held.length >= MAX_HELD_PER_PROBE) return false;
    held.push(finding);
    return true;
  }

  private find(rule: FindingRule, event: TraceEvent, detail: string, code?: number): void {
    const name = event.name ?? event.upstream;
    const finding: Finding = {
      rule,
      connection: event.connection,
      ...(name !== undefined && { name }),
      ...(event.method !== undefined && { method: event.method }),
      ...(isId(event.id) && { id: event.id }),
      time: event.time,
      detail,
      ...(code !== undefined && { code }),
    };
    if (!this.heldForProbe(finding, event)) this.listener.finding(finding);
  }
}

function clip(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

function isId(value: unknown): value is RequestId {
  return typeof value === 'string' || typeof value === 'number';
}
