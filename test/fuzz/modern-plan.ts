/**
 * Turns a duplex case into the steps to run and the answers to expect, following the connection's state as
 * the revision defines it: the era latches on the first served request that is not a `server/discover`
 * probe; once latched, a request without the envelope is refused (-32022 for `initialize`, -32602
 * otherwise); an id in flight is refused (-32600) until its request ends; a cancel ends whatever request is
 * in flight with its id, which is then never answered; a listen stream hears each change it asked for while
 * it is open. Each request's own outcome is modern-oracle.ts's.
 */
import { expect } from 'vitest';
import { MODERN_VERSION } from './arbitraries';
import {
  handshakeRequestText,
  modernRequestText,
  plainEnvelope,
  type DuplexCase,
  type ModernRequestSpec,
  type RetryVariant,
} from './modern-arbitraries';
import {
  echoedVersion,
  error,
  INVALID_PARAMS,
  INVALID_REQUEST,
  ladder,
  own,
  result,
  servedOutcome,
  UNSUPPORTED_VERSION,
  type Answer,
  type Served,
} from './modern-oracle';
import { expectationForLine, idKey, type RequestId } from './oracle';

export interface PlannedRequest {
  readonly id: RequestId;
  readonly method: string;
  readonly text: string;
  answer: Answer;
  /** Cancelled while open: it must never be answered. */
  cancelled?: true;
  /** Answered after a macrotask or a promise (an input round, a sealed state): a cancel or a reused id would race it. */
  readonly deferred: boolean;
  /** A listen stream: which changes it honours (list changes, updates of the static resource). */
  readonly listens?: { readonly tools: boolean; readonly resources: boolean; readonly static: boolean };
  /** Change notifications this stream must get, by change. */
  readonly heard: { tools: number; resources: number; static: number };
  /** A `wait` with a valid progress token: the one progress notification it sends. */
  readonly progressToken?: string | number;
}

export type Step =
  | { readonly kind: 'send'; readonly text: string }
  /** Wait for the answer to `round`, then send the retry built from its `requestState`. */
  | { readonly kind: 'retry'; readonly round: PlannedRequest; readonly build: (requestState: string) => string }
  | { readonly kind: 'publish'; readonly change: 'tools' | 'resources' | 'static' }
  /** Everything sent so far is served: the connection must still be in `state`. */
  | { readonly kind: 'checkpoint'; readonly state: 'uninitialized' | 'modern' };

export interface CasePlan {
  readonly steps: readonly Step[];
  readonly requests: readonly PlannedRequest[];
  readonly idlessCodes: readonly number[];
  /** Requests open when the case ends: the harness cancels them, then checks their ids are free. */
  readonly openAtEnd: readonly PlannedRequest[];
  /** Ids of requests that were open at some point (their ids must be free after the case). */
  readonly longLivedIds: readonly RequestId[];
}

/** Turns a case into the steps to send and the answers they call for. */
export function planCase(testCase: DuplexCase): CasePlan {
  const steps: Step[] = [];
  const requests: PlannedRequest[] = [];
  const idlessCodes: number[] = [];
  const open = new Map<string, PlannedRequest>();
  const rounds: PlannedRequest[] = [];
  const longLived: RequestId[] = [];
  let n = 0;
  const nextId = (): [RequestId, string] => {
    const id: RequestId = n % 3 === 0 ? n : `q${n}`;
    n++;
    return [id, JSON.stringify(id)];
  };
  const planned = (id: RequestId, method: string, text: string, served: Served, token?: unknown): PlannedRequest => {
    const request: PlannedRequest = {
      id,
      method,
      text,
      answer: served.answer,
      deferred: served.deferred,
      listens: served.listens,
      heard: { tools: 0, resources: 0, static: 0 },
      ...(served.answer.kind === 'open' &&
        served.answer.stream === 'wait' &&
        token !== undefined && { progressToken: token as string | number }),
    };
    requests.push(request);
    steps.push({ kind: 'send', text });
    if (served.answer.kind === 'open') {
      open.set(idKey(id), request);
      longLived.push(id);
    }
    if (served.answer.kind === 'input_required') rounds.push(request);
    return request;
  };
  let latched = false;
  const sendModern = (spec: ModernRequestSpec, id: RequestId, idText: string): PlannedRequest => {
    const text = modernRequestText(spec, idText);
    const message = JSON.parse(text);
    const verdict = ladder(message, text);
    if ('refused' in verdict) return planned(id, spec.method, text, { answer: verdict.refused, deferred: false });
    if (spec.method !== 'server/discover') latched = true;
    const token = own(own(message.params, '_meta'), 'progressToken');
    if (open.has(idKey(id))) {
      // The id of a request in flight: refused, the other request untouched.
      return planned(id, spec.method, text, { answer: error(INVALID_REQUEST), deferred: false });
    }
    return planned(id, spec.method, text, servedOutcome(message), token);
  };
  const sendLine = (text: string) => {
    steps.push({ kind: 'send', text });
    const expectation = expectationForLine(Buffer.from(text), 'messages', Number.MAX_SAFE_INTEGER);
    if (expectation.kind === 'idless') idlessCodes.push(expectation.code);
    else if (expectation.kind === 'answer')
      requests.push({
        id: expectation.id,
        method: 'unknown',
        text,
        answer: error(expectation.outcomes[0] as number),
        deferred: false,
        heard: { tools: 0, resources: 0, static: 0 },
      });
    else if (expectation.kind !== 'silent') throw new Error(`A line with no era-free answer: ${text}`);
  };

  for (const item of testCase.prefix) {
    if (item.kind === 'line') sendLine(item.text);
    else sendModern(item.spec, ...nextId());
    if (latched) throw new Error(`A prefix item latched the era: ${JSON.stringify(item)}`);
  }
  steps.push({ kind: 'checkpoint', state: 'uninitialized' });
  sendModern(testCase.latch, ...nextId());
  if (!latched) throw new Error('The latch request did not latch');

  /** Requests whose outcome is settled when they are read: a cancel or a reused id cannot race them. */
  const settled = () => requests.filter((request) => !request.deferred && request.method !== 'unknown');
  for (const item of testCase.body) {
    switch (item.kind) {
      case 'request':
        sendModern(item.spec, ...nextId());
        break;
      case 'handshake': {
        const [id, idText] = nextId();
        const requested = own(item.params === undefined ? undefined : JSON.parse(item.params), 'protocolVersion');
        const answer =
          item.method === 'initialize'
            ? error(UNSUPPORTED_VERSION, (e) => {
                expect(e.data?.supported).toContain(MODERN_VERSION);
                expect(e.data?.requested).toBe(typeof requested === 'string' ? echoedVersion(requested) : '');
              })
            : error(INVALID_PARAMS);
        planned(id, item.method, handshakeRequestText(item.method, item.params, idText), { answer, deferred: false });
        break;
      }
      case 'cancel': {
        const candidates = item.open ? [...open.values()] : settled();
        const target =
          item.target === 'unknown' || candidates.length === 0
            ? undefined
            : candidates[item.target % candidates.length]!;
        const idText = target === undefined ? JSON.stringify(`never-${n}`) : JSON.stringify(target.id);
        steps.push({
          kind: 'send',
          text: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":${idText},"reason":"fuzz"}}`,
        });
        // A cancel names an id: it ends whatever request is in flight with that id now.
        const inFlight = target && open.get(idKey(target.id));
        if (inFlight) {
          open.delete(idKey(inFlight.id));
          inFlight.cancelled = true;
        }
        break;
      }
      case 'line':
        sendLine(item.text);
        break;
      case 'publish':
        steps.push({ kind: 'publish', change: item.change });
        for (const stream of open.values()) if (stream.listens?.[item.change]) stream.heard[item.change]++;
        break;
      case 'duplicate': {
        const candidates = settled();
        if (candidates.length === 0) break;
        const target = candidates[item.target % candidates.length]!;
        const spec: ModernRequestSpec = {
          envelope: plainEnvelope(),
          method: 'tools/call',
          params: [
            ['name', '"echo"'],
            ['arguments', '{"duplicate":true}'],
          ],
        };
        sendModern(spec, target.id, JSON.stringify(target.id));
        break;
      }
      case 'retry': {
        if (rounds.length === 0) break;
        const round = rounds[item.target % rounds.length]!;
        const [id, idText] = nextId();
        const { build, answer } = retryOf(item.variant, idText);
        requests.push({
          id,
          method: 'tools/call',
          text: `retry of ${String(round.id)} (${item.variant})`,
          answer,
          deferred: true,
          heard: { tools: 0, resources: 0, static: 0 },
        });
        steps.push({ kind: 'retry', round, build });
        break;
      }
    }
  }
  steps.push({ kind: 'checkpoint', state: 'modern' });
  return { steps, requests, idlessCodes, openAtEnd: [...open.values()], longLivedIds: longLived };
}

/** A retry of an `input_required` round of `ask`: the text from the round's state, and what it must get. */
function retryOf(variant: RetryVariant, idText: string): { build: (requestState: string) => string; answer: Answer } {
  const responses: Record<RetryVariant, string> = {
    accept: '{"name":{"action":"accept","content":{"name":"Ada"}}}',
    decline: '{"name":{"action":"decline"}}',
    'wrong-kind': '{"name":{"roots":[]}}',
    'tampered-state': '{"name":{"action":"decline"}}',
    'other-arguments': '{"name":{"action":"decline"}}',
  };
  const args = variant === 'other-arguments' ? '{"other":1}' : '{}';
  const build = (requestState: string) => {
    const state = variant === 'tampered-state' ? tamper(requestState) : requestState;
    return modernRequestText(
      {
        envelope: plainEnvelope(),
        method: 'tools/call',
        params: [
          ['name', '"ask"'],
          ['arguments', args],
          ['inputResponses', responses[variant]],
          ['requestState', JSON.stringify(state)],
        ],
      },
      idText,
    );
  };
  const answer =
    variant === 'accept'
      ? result((r) => expect(r.content[0].text).toBe('Hi, Ada'))
      : variant === 'decline'
        ? result((r) => expect(r.content[0].text).toBe('decline'))
        : error(INVALID_PARAMS);
  return { build, answer };
}

/** The state with one character in its middle changed (every bit of a middle character counts). */
function tamper(state: string): string {
  const at = Math.floor(state.length / 2);
  const replacement = state[at] === 'A' ? 'B' : 'A';
  return state.slice(0, at) + replacement + state.slice(at + 1);
}
