/**
 * Runs one duplex 2026-07-28 fuzz case against a server: a fresh connection over a memory pair that copies
 * through JSON text (as stdio reads it), the plan's steps sent in order (a `server/discover` round trip as a
 * barrier where the plan needs everything before served: checkpoints of the connection's era, list changes
 * published on the server's bus), the retries of `input_required` rounds built from the rounds' answers.
 * Then the answers are checked against the plan and the schema, the streams still open are cancelled, and
 * nothing may be left: no listen stream, no bus subscriber, no handler run, no request record (the ids of
 * the long-lived requests serve new requests), no connection once it closed.
 */
import { expect } from 'vitest';
import type { InMemoryServerEventBus } from '../../lib/server/event-bus';
import { LIST_CHANGED_EVENTS } from '../../lib/server/event-bus';
import { Server, type ServerConnection } from '../../lib/server/server';
import { createMemoryPair, type MemoryTransport } from '../../transports/memory';
import { modernWireValidator, type ModernWireValidator } from '../helpers/modern-wire';
import { FUZZ_MAX_MESSAGE_BYTES } from './definition';
import { modernRequestText, plainEnvelope, STATIC_URI, type DuplexCase } from './modern-arbitraries';
import { handlerRuns, modernFuzzDefinition } from './modern-definition';
import { checkAnswers, expectedResponseCounts } from './modern-check';
import { planCase, type CasePlan } from './modern-plan';
import { idKey, type RequestId } from './oracle';

/** How long a case waits for any answer before it fails as a hang. */
const ANSWER_DEADLINE_MS = 10_000;

interface DuplexSession {
  readonly connection: ServerConnection;
  readonly received: any[];
  send(text: string): Promise<void>;
  /** Resolves once `check` holds, checked as each message arrives; fails naming `what` after the deadline or when the connection ends. */
  until(check: () => boolean, what: string): Promise<void>;
  close(): Promise<void>;
}

function openSession(server: Server): DuplexSession {
  const [peerSide, serverSide]: [MemoryTransport, MemoryTransport] = createMemoryPair({
    codec: 'json',
    maxMessageBytes: FUZZ_MAX_MESSAGE_BYTES,
  });
  const connection = server.connect(serverSide);
  const received: any[] = [];
  let ended: string | undefined;
  let wake: (() => void) | undefined;
  peerSide.messages.subscribe({
    next: (message) => {
      received.push(message);
      wake?.();
    },
    error: (error) => void ((ended = `the transport failed: ${error}`), wake?.()),
    complete: () => void ((ended = 'the transport closed'), wake?.()),
  });
  return {
    connection,
    received,
    send: (text) => peerSide.sendRaw(text),
    async until(check, what) {
      const deadline = Date.now() + ANSWER_DEADLINE_MS;
      while (!check()) {
        if (ended) throw new Error(`The connection ended while waiting for ${what}: ${ended}`);
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`Timed out waiting for ${what} (the server hangs)`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(left, 50));
          wake = () => (clearTimeout(timer), resolve());
        });
        wake = undefined;
      }
    },
    async close() {
      await peerSide.close();
      await connection.closed;
    },
  };
}

let validator: ModernWireValidator | undefined;
const validate = (method: string, message: any) => (validator ??= modernWireValidator()).check(method, message);

const BARRIER_PREFIX = 'barrier-';
let barriers = 0;

/** A `server/discover` round trip (it never latches the era): everything sent before it has been read. */
async function barrier(session: DuplexSession): Promise<void> {
  const id = `${BARRIER_PREFIX}${++barriers}`;
  await session.send(
    modernRequestText({ envelope: plainEnvelope('{}'), method: 'server/discover', params: [] }, JSON.stringify(id)),
  );
  await session.until(() => session.received.some((message) => message.id === id), `the answer to ${id}`);
}

const answerTo = (session: DuplexSession, id: RequestId) =>
  session.received.find((message) => 'id' in message && !('method' in message) && idKey(message.id) === idKey(id));

/** The case's messages, without the barriers' answers (checked against the schema apart). */
function caseMessages(session: DuplexSession): any[] {
  const barrierAnswers = session.received.filter((m) => typeof m.id === 'string' && m.id.startsWith(BARRIER_PREFIX));
  for (const answer of barrierAnswers) expect(validate('server/discover', answer)).toEqual([]);
  return session.received.filter((m) => !barrierAnswers.includes(m));
}

async function runSteps(server: Server, session: DuplexSession, plan: CasePlan): Promise<void> {
  for (const step of plan.steps) {
    switch (step.kind) {
      case 'send':
        await session.send(step.text);
        break;
      case 'checkpoint':
        await barrier(session);
        expect(session.connection.state, 'the era latched by the first served request that is not a probe').toBe(
          step.state,
        );
        break;
      case 'publish':
        await barrier(session);
        if (step.change === 'static') server.resourceUpdated(STATIC_URI);
        else server.events.publish(LIST_CHANGED_EVENTS[step.change]);
        break;
      case 'retry': {
        await session.until(
          () => answerTo(session, step.round.id) !== undefined,
          `the round of ${String(step.round.id)}`,
        );
        const state = answerTo(session, step.round.id).result?.requestState;
        if (typeof state !== 'string') {
          checkAnswers(plan, caseMessages(session), validate); // names what came instead of the round
          throw new Error(`${String(step.round.id)} got no input_required round`);
        }
        await session.send(step.build(state));
        break;
      }
    }
  }
}

/** Waits until every planned answer arrived (or fails naming what did arrive). */
async function awaitAnswers(session: DuplexSession, plan: CasePlan): Promise<void> {
  const wanted = expectedResponseCounts(plan);
  const enough = () => {
    const got = new Map<string, number>();
    let idless = 0;
    for (const message of session.received) {
      if ('method' in message) continue;
      if (!('id' in message) || message.id === null) idless++;
      else got.set(idKey(message.id), (got.get(idKey(message.id)) ?? 0) + 1);
    }
    return idless >= plan.idlessCodes.length && [...wanted].every(([key, count]) => (got.get(key) ?? 0) >= count);
  };
  try {
    await session.until(enough, 'every planned answer');
  } catch (error) {
    checkAnswers(plan, caseMessages(session), validate);
    throw error;
  }
}

/** Cancels what is still open, then checks that the server holds nothing for this connection. */
async function expectNothingLeft(server: Server, session: DuplexSession, plan: CasePlan): Promise<void> {
  for (const request of plan.openAtEnd) {
    await session.send(
      `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":${JSON.stringify(request.id)}}}`,
    );
  }
  // Two round trips with a macrotask between: a late answer (an input round goes out on the next macrotask) shows.
  await barrier(session);
  await new Promise((resolve) => setImmediate(resolve));
  await barrier(session);
  checkAnswers(plan, caseMessages(session), validate);

  expect(server.listenStreams.size, 'open listen streams').toBe(0);
  expect((server.events as InMemoryServerEventBus).subscriberCount, 'event-bus subscribers').toBe(0);
  expect(handlerRuns.ended, 'every run of a long-lived handler ended').toBe(handlerRuns.started);
  expect(session.connection.activeHandlerCount, 'session handler records').toBe(0);
  expect(session.connection.pendingRequestCount, 'requests of ours pending').toBe(0);
  expect(({} as Record<string, unknown>).polluted, 'Object.prototype untouched').toBeUndefined();

  // The ids of the long-lived requests are free again: a request in flight would keep its id (-32600).
  const ids = [...new Map(plan.longLivedIds.map((id) => [idKey(id), id])).values()];
  const start = session.received.length;
  for (const id of ids) {
    await session.send(
      modernRequestText(
        {
          envelope: plainEnvelope(),
          method: 'tools/call',
          params: [
            ['name', '"echo"'],
            ['arguments', '{}'],
          ],
        },
        JSON.stringify(id),
      ),
    );
  }
  await session.until(() => session.received.length - start >= ids.length, 'the answers reusing the ids');
  for (const answer of session.received.slice(start))
    expect(answer.result?.resultType, `id ${JSON.stringify(answer.id)} is free again`).toBe('complete');
}

/**
 * One case, start to end, on a fresh server (so that what one case leaves behind is counted in that case
 * alone, shrinking included) and its one connection.
 */
export async function runDuplexCase(testCase: DuplexCase): Promise<void> {
  const plan = planCase(testCase);
  const server = new Server(modernFuzzDefinition);
  handlerRuns.started = 0;
  handlerRuns.ended = 0;
  const session = openSession(server);
  try {
    await runSteps(server, session, plan);
    await awaitAnswers(session, plan);
    await expectNothingLeft(server, session, plan);
  } finally {
    await session.close();
  }
  expect(server.connectionCount, 'the closed connection is forgotten').toBe(0);
  await server.close();
}
