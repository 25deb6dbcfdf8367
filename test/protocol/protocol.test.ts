import { describe, expect, it } from 'vitest';
import { hasCapability } from '../../lib/protocol/capabilities';
import { ALLOWED, inboundVerdict, outboundVerdict, type GateView } from '../../lib/protocol/gate';
import { HANDSHAKE_METHODS, maySend, methodSpec } from '../../lib/protocol/methods';
import { shape, shapeCallToolResult } from '../../lib/protocol/shape';
import { isAtLeast, negotiateVersion, SUPPORTED_PROTOCOL_VERSIONS } from '../../lib/protocol/versions';
import type { Tool } from '../../lib/protocol/types';

describe('version negotiation', () => {
  it('echoes a supported version', () => {
    for (const version of SUPPORTED_PROTOCOL_VERSIONS) expect(negotiateVersion(version)).toBe(version);
  });
  it('answers its newest for anything else', () => {
    for (const requested of ['2099-01-01', '2024-10-07', '', 5, undefined])
      expect(negotiateVersion(requested)).toBe('2025-11-25');
  });
  it('respects a narrower list', () => {
    expect(negotiateVersion('2025-11-25', ['2025-06-18', '2024-11-05'])).toBe('2025-06-18');
    expect(negotiateVersion('2024-11-05', ['2025-06-18', '2024-11-05'])).toBe('2024-11-05');
  });
  it('orders revisions', () => {
    expect(isAtLeast('2025-06-18', '2025-03-26')).toBe(true);
    expect(isAtLeast('2024-11-05', '2025-03-26')).toBe(false);
  });
});

describe('the method table', () => {
  it('lists 20 requests and 11 notifications of 2025-11-25', () => {
    const specs = Object.values(HANDSHAKE_METHODS.specs);
    expect(specs.filter((spec) => spec.kind === 'request')).toHaveLength(20);
    expect(specs.filter((spec) => spec.kind === 'notification')).toHaveLength(11);
  });
  it('knows the direction and first revision of a method', () => {
    expect(methodSpec('tools/call')).toMatchObject({ direction: 'toServer', since: '2024-11-05' });
    expect(methodSpec('elicitation/create')).toMatchObject({ direction: 'toClient', since: '2025-06-18' });
  });
  it('knows the capability that gates a method, and whose it is', () => {
    expect(methodSpec('tools/call')).toMatchObject({ capability: ['tools'], capabilityOf: 'receiver' });
    expect(methodSpec('notifications/tools/list_changed')).toMatchObject({
      capability: ['tools', 'listChanged'],
      capabilityOf: 'sender',
    });
    expect(methodSpec('notifications/elicitation/complete')).toMatchObject({ capabilityOf: 'receiver' });
    expect(methodSpec('completion/complete')).toMatchObject({ capabilitySince: '2025-03-26' });
  });
  it('knows no other method, inherited names included', () => {
    expect(methodSpec('constructor')).toBeUndefined();
    expect(methodSpec('nope')).toBeUndefined();
  });
  it('knows who may send what', () => {
    expect(maySend(methodSpec('tools/call')!, 'client')).toBe(true);
    expect(maySend(methodSpec('tools/call')!, 'server')).toBe(false);
    expect(maySend(methodSpec('ping')!, 'server')).toBe(true);
    expect(maySend(methodSpec('roots/list')!, 'client')).toBe(false);
  });
});

describe('the gate on a stateless (2026-07-28) connection', () => {
  const modern = (role: 'client' | 'server'): GateView => ({
    state: 'modern',
    role,
    protocolVersion: '2026-07-28',
    capabilities: role === 'client' ? { roots: { listChanged: true }, sampling: {} } : { tools: {}, logging: {} },
    peerCapabilities: role === 'client' ? { tools: {}, logging: {} } : { roots: { listChanged: true }, sampling: {} },
  });
  const request = (method: string) => ({ jsonrpc: '2.0' as const, id: 1, method, params: {} });

  it('refuses to send what the revision removed, saying what replaced it', () => {
    for (const [method, kind] of [
      ['ping', 'request'],
      ['logging/setLevel', 'request'],
      ['notifications/roots/list_changed', 'notification'],
      ['notifications/initialized', 'notification'],
    ] as const) {
      const verdict = outboundVerdict(modern('client'), method, kind);
      expect(verdict, method).toMatchObject({ kind: 'refuse', reason: 'removed', removal: { revision: '2026-07-28' } });
      expect(verdict.kind === 'refuse' && verdict.message, method).toContain('2026-07-28');
    }
  });
  it('sends what the revision has, and extension methods', () => {
    expect(outboundVerdict(modern('client'), 'server/discover', 'request')).toBe(ALLOWED);
    expect(outboundVerdict(modern('client'), 'subscriptions/listen', 'request')).toBe(ALLOWED);
    expect(outboundVerdict(modern('client'), 'tools/call', 'request')).toBe(ALLOWED);
    expect(outboundVerdict(modern('client'), 'notifications/cancelled', 'notification')).toBe(ALLOWED);
    expect(outboundVerdict(modern('client'), 'resources/search', 'request')).toBe(ALLOWED);
    expect(outboundVerdict(modern('server'), 'notifications/progress', 'notification')).toBe(ALLOWED);
  });
  it('follows the revision where a direction changed: a client has no progress to report', () => {
    expect(outboundVerdict(modern('client'), 'notifications/progress', 'notification')).toMatchObject({
      reason: 'unsupported',
    });
  });
  it('sends no input request as a JSON-RPC request', () => {
    expect(outboundVerdict(modern('server'), 'sampling/createMessage', 'request')).toMatchObject({
      reason: 'unsupported',
      message: expect.stringContaining('input_required'),
    });
  });
  it('serves neither a removed method nor an input request sent as a request', () => {
    expect(inboundVerdict(modern('client'), request('ping') as never, false)).toMatchObject({
      code: -32601,
      message: expect.stringContaining('removed in 2026-07-28'),
    });
    expect(inboundVerdict(modern('client'), request('roots/list') as never, false)).toMatchObject({ code: -32601 });
  });
  it('keeps the handshake era as it was', () => {
    const legacy: GateView = { ...modern('client'), state: 'ready', protocolVersion: '2025-11-25' };
    expect(outboundVerdict(legacy, 'ping', 'request')).toBe(ALLOWED);
    expect(outboundVerdict(legacy, 'notifications/roots/list_changed', 'notification')).toBe(ALLOWED);
    expect(inboundVerdict(legacy, request('ping') as never, false)).toBe(ALLOWED);
    expect(inboundVerdict(legacy, request('roots/list') as never, false)).toBe(ALLOWED);
  });
});

describe('capabilities', () => {
  it('treats present objects and true flags as declared', () => {
    expect(hasCapability({ tools: {} }, ['tools'])).toBe(true);
    expect(hasCapability({ tools: {} }, ['tools', 'listChanged'])).toBe(false);
    expect(hasCapability({ tools: { listChanged: true } }, ['tools', 'listChanged'])).toBe(true);
    expect(hasCapability({ tools: { listChanged: false } }, ['tools', 'listChanged'])).toBe(false);
    expect(hasCapability({ tools: null }, ['tools'])).toBe(false);
    expect(hasCapability(undefined, ['tools'])).toBe(false);
  });
});

describe('shaping for older revisions', () => {
  const tool: Tool = {
    name: 't',
    title: 'T',
    description: 'd',
    icons: [{ src: 'https://x/i.png' }],
    inputSchema: { type: 'object' },
    outputSchema: { type: 'object' },
    annotations: { readOnlyHint: true },
    execution: { taskSupport: 'forbidden' },
    _meta: { 'com.example/x': 1 },
  };
  it('keeps everything for 2025-11-25 and returns the same object', () => {
    expect(shape('Tool', tool, '2025-11-25')).toBe(tool);
  });
  it('drops what each older revision cannot carry', () => {
    expect(Object.keys(shape('Tool', tool, '2025-06-18')).sort()).toEqual([
      '_meta',
      'annotations',
      'description',
      'inputSchema',
      'name',
      'outputSchema',
      'title',
    ]);
    expect(Object.keys(shape('Tool', tool, '2025-03-26')).sort()).toEqual([
      'annotations',
      'description',
      'inputSchema',
      'name',
    ]);
    expect(Object.keys(shape('Tool', tool, '2024-11-05')).sort()).toEqual(['description', 'inputSchema', 'name']);
  });
  it('drops unknown fields too', () => {
    expect(shape('Tool', { ...tool, extra: 1 } as Tool, '2025-11-25')).not.toHaveProperty('extra');
  });
  it('drops structuredContent before 2025-06-18', () => {
    const result = { content: [{ type: 'text' as const, text: '{}' }], structuredContent: {} };
    expect(shapeCallToolResult(result, '2025-06-18')).toBe(result);
    expect(shapeCallToolResult(result, '2025-03-26')).toEqual({ content: result.content });
  });
});
