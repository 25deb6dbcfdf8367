import { describe, expect, it } from 'vitest';
import type { ConnectionState } from '../../machines/connection';
import {
  ALLOWED,
  batchRefusal,
  DROPPED,
  inboundVerdict,
  outboundVerdict,
  type GateView,
  type OutboundKind,
} from '../../lib/protocol/gate';
import type { Role } from '../../lib/protocol/methods';

const ALL_SERVER = {
  tools: { listChanged: true },
  resources: { subscribe: true },
  prompts: {},
  logging: {},
  completions: {},
};
const ALL_CLIENT = { sampling: {}, roots: { listChanged: true }, elicitation: { form: {}, url: {} } };

function view(state: ConnectionState, role: Role, version = '2025-11-25', bare = false): GateView {
  const own = bare ? {} : role === 'server' ? ALL_SERVER : ALL_CLIENT;
  const peer = bare ? {} : role === 'server' ? ALL_CLIENT : ALL_SERVER;
  return {
    state,
    role,
    protocolVersion: state === 'ready' ? version : undefined,
    capabilities: own,
    peerCapabilities: state === 'ready' ? peer : undefined,
  };
}

const request = (method: string, params: unknown = {}) => ({ jsonrpc: '2.0' as const, id: 1, method, params }) as never;

type Out = 'allow' | 'closed' | 'not-ready' | 'unsupported';

/** Outbound: state, role, method, kind, revision, whether capabilities are declared (false: none) -> verdict. */
const OUTBOUND: [ConnectionState, Role, string, OutboundKind, string, boolean, Out][] = [
  ['closing', 'client', 'tools/call', 'request', '2025-11-25', true, 'closed'],
  ['closed', 'server', 'notifications/message', 'notification', '2025-11-25', true, 'closed'],
  ['uninitialized', 'client', 'initialize', 'request', '2025-11-25', true, 'not-ready'],
  ['initializing', 'client', 'initialize', 'request', '2025-11-25', true, 'allow'],
  ['initializing', 'server', 'initialize', 'request', '2025-11-25', true, 'unsupported'],
  ['initializing', 'client', 'ping', 'request', '2025-11-25', true, 'allow'],
  ['initializing', 'client', 'notifications/cancelled', 'notification', '2025-11-25', true, 'allow'],
  ['initializing', 'client', 'notifications/progress', 'notification', '2025-11-25', true, 'allow'],
  ['initializing', 'client', 'tools/list', 'request', '2025-11-25', true, 'not-ready'],
  ['uninitialized', 'server', 'notifications/message', 'notification', '2025-11-25', true, 'allow'],
  ['uninitialized', 'server', 'roots/list', 'request', '2025-11-25', true, 'not-ready'],
  ['initializing', 'client', 'x/extension', 'request', '2025-11-25', true, 'not-ready'],
  ['ready', 'client', 'x/extension', 'request', '2025-11-25', true, 'allow'],
  ['ready', 'client', 'tools/call', 'notification', '2025-11-25', true, 'unsupported'],
  ['ready', 'client', 'notifications/initialized', 'request', '2025-11-25', true, 'unsupported'],
  ['ready', 'client', 'sampling/createMessage', 'request', '2025-11-25', true, 'unsupported'],
  ['ready', 'server', 'tools/call', 'request', '2025-11-25', true, 'unsupported'],
  ['ready', 'server', 'sampling/createMessage', 'request', '2025-11-25', true, 'allow'],
  ['ready', 'server', 'sampling/createMessage', 'request', '2025-11-25', false, 'unsupported'],
  ['ready', 'client', 'tools/call', 'request', '2025-11-25', false, 'unsupported'],
  ['ready', 'server', 'elicitation/create', 'request', '2025-06-18', true, 'allow'],
  ['ready', 'server', 'elicitation/create', 'request', '2025-03-26', true, 'unsupported'],
  ['ready', 'client', 'tasks/get', 'request', '2025-06-18', true, 'unsupported'],
  ['ready', 'client', 'completion/complete', 'request', '2024-11-05', false, 'allow'],
  ['ready', 'client', 'completion/complete', 'request', '2025-03-26', false, 'unsupported'],
  ['ready', 'server', 'notifications/tools/list_changed', 'notification', '2025-11-25', true, 'allow'],
  ['ready', 'server', 'notifications/tools/list_changed', 'notification', '2025-11-25', false, 'unsupported'],
  ['ready', 'server', 'notifications/elicitation/complete', 'notification', '2025-11-25', true, 'allow'],
  ['ready', 'server', 'notifications/elicitation/complete', 'notification', '2025-11-25', false, 'unsupported'],
  ['ready', 'client', 'notifications/roots/list_changed', 'notification', '2025-11-25', true, 'allow'],
  ['ready', 'client', 'notifications/message', 'notification', '2025-11-25', true, 'unsupported'],
];

describe('the outbound gate', () => {
  it.each(OUTBOUND)(
    '%s %s sending %s (%s) at %s, declared %s: %s',
    (state, role, method, kind, version, declared, want) => {
      const verdict = outboundVerdict(view(state, role, version, !declared), method, kind);
      expect(verdict.kind === 'allow' ? 'allow' : verdict.reason).toBe(want);
    },
  );

  it('lets a message through with the one shared verdict, allocating none', () => {
    expect(outboundVerdict(view('ready', 'client'), 'tools/call', 'request')).toBe(ALLOWED);
  });
});

type In = 'allow' | 'drop' | number;

/** Inbound: state, role, method, params, in a batch, revision, declared -> verdict (a number: the error code). */
const INBOUND: [ConnectionState, Role, string, unknown, boolean, string, boolean, In][] = [
  ['closing', 'server', 'tools/list', {}, false, '2025-11-25', true, 'drop'],
  ['closed', 'server', 'ping', {}, false, '2025-11-25', true, 'drop'],
  ['uninitialized', 'server', 'initialize', {}, false, '2025-11-25', true, 'allow'],
  ['uninitialized', 'server', 'initialize', {}, true, '2025-11-25', true, -32600],
  ['ready', 'server', 'initialize', {}, false, '2025-11-25', true, -32600],
  ['uninitialized', 'server', 'ping', {}, false, '2025-11-25', true, 'allow'],
  ['uninitialized', 'server', 'tools/list', {}, false, '2025-11-25', true, -32600],
  ['initializing', 'client', 'roots/list', {}, false, '2025-11-25', true, -32600],
  ['ready', 'server', 'tools/list', {}, false, '2025-11-25', true, 'allow'],
  ['ready', 'server', 'tools/list', {}, false, '2025-11-25', false, -32601],
  ['ready', 'server', 'sampling/createMessage', {}, false, '2025-11-25', true, -32601],
  ['ready', 'client', 'tools/call', {}, false, '2025-11-25', true, -32601],
  ['ready', 'client', 'sampling/createMessage', {}, false, '2025-11-25', true, 'allow'],
  ['ready', 'server', 'notifications/initialized', {}, false, '2025-11-25', true, -32601],
  ['ready', 'server', 'tasks/list', {}, false, '2025-06-18', true, -32601],
  ['ready', 'server', 'completion/complete', {}, false, '2024-11-05', false, 'allow'],
  ['ready', 'server', 'completion/complete', {}, false, '2025-03-26', false, -32601],
  ['ready', 'server', 'x/extension', {}, false, '2025-11-25', true, 'allow'],
  ['ready', 'server', 'tools/list', [1], false, '2025-11-25', true, -32602],
  ['ready', 'server', 'tools/list', undefined, false, '2025-11-25', true, 'allow'],
];

describe('the inbound gate', () => {
  it.each(INBOUND)(
    '%s %s receiving %s (params %j, batch %s) at %s, declared %s: %s',
    (state, role, method, params, inBatch, version, declared, want) => {
      const verdict = inboundVerdict(view(state, role, version, !declared), request(method, params), inBatch);
      expect(verdict.kind === 'refuse' ? verdict.code : verdict.kind).toBe(want);
    },
  );

  it('serves and drops with shared verdicts', () => {
    expect(inboundVerdict(view('ready', 'server'), request('tools/list'), false)).toBe(ALLOWED);
    expect(inboundVerdict(view('closing', 'server'), request('tools/list'), false)).toBe(DROPPED);
  });
});

describe('batches', () => {
  it.each([
    ['2025-03-26', 2, undefined],
    ['2025-03-26', 0, -32600],
    ['2025-06-18', 2, -32600],
    ['2024-11-05', 2, -32600],
  ] as const)('at %s, %i elements: %s', (version, length, want) => {
    expect(batchRefusal(view('ready', 'server', version), length)?.code).toBe(want);
  });
});
