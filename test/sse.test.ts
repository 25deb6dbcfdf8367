import { describe, expect, it } from 'vitest';
import { MemoryEventStore } from '../transports/http/event-store';
import { encodeSseComment, encodeSseEvent, SseParser, type SseEvent } from '../transports/http/sse';

describe('SSE framing', () => {
  it('encodes events with id, event, retry and multi-line data', () => {
    expect(encodeSseEvent({ id: 's:1', event: 'message', data: '{"a":1}' })).toBe(
      'id: s:1\nevent: message\ndata: {"a":1}\n\n',
    );
    expect(encodeSseEvent({ id: 's:0', data: '', retry: 1500 })).toBe('id: s:0\nretry: 1500\ndata: \n\n');
    expect(encodeSseEvent({ data: 'a\nb\r\nc' })).toBe('data: a\ndata: b\ndata: c\n\n');
    expect(encodeSseComment('keep-alive')).toBe(': keep-alive\n\n');
    expect(() => encodeSseEvent({ id: 'a\nb', data: '' })).toThrow('must not contain line breaks');
  });

  it('parses what it encodes, whatever the chunking', () => {
    const events: SseEvent[] = [
      { id: 's:1', event: 'message', data: '{"jsonrpc":"2.0","method":"x"}' },
      { id: 's:2', data: '' },
      { data: 'line one\nline two', retry: 3000 },
      { event: 'endpoint', data: '/messages?sessionId=abc' },
    ];
    const text = events.map(encodeSseEvent).join('') + encodeSseComment('ping');
    for (const size of [1, 2, 3, 7, 64, text.length]) {
      const parser = new SseParser();
      const parsed: SseEvent[] = [];
      for (let i = 0; i < text.length; i += size) parsed.push(...parser.push(text.slice(i, i + size)));
      expect(parsed).toEqual(events);
    }
  });

  it('accepts CRLF and CR line endings split across chunks, ignores comments and unknown fields', () => {
    const parser = new SseParser();
    const parsed = [
      ...parser.push('id:7\r'),
      ...parser.push('\ndata:x\r\nfoo: bar\r\n: comment\r'),
      ...parser.push('\r'),
      ...parser.push('data\rretry: soon\r\r'),
    ];
    expect(parsed).toEqual([{ id: '7', data: 'x' }, { data: '' }]);
  });

  it('refuses a line that never ends', () => {
    const parser = new SseParser(10);
    expect(() => parser.push('data: ' + 'x'.repeat(20))).toThrow(RangeError);
  });
});

describe('the in-memory event store', () => {
  const message = (n: number) => ({ jsonrpc: '2.0' as const, method: 'n', params: { n } });

  it('issues ids that name their stream and replays only that stream, after the id', () => {
    const store = new MemoryEventStore();
    const a1 = store.append('s1', 'a', message(1));
    store.append('s1', 'b', message(100));
    store.append('s1', 'a', message(2));
    store.append('s1', 'a', message(3));
    expect(a1).toBe('a:0');
    expect(store.replayAfter('s1', a1)).toEqual({
      streamId: 'a',
      events: [
        { id: 'a:1', message: message(2) },
        { id: 'a:2', message: message(3) },
      ],
    });
    expect(store.replayAfter('s1', 'a:2')).toEqual({ streamId: 'a', events: [] });
  });

  it('refuses ids of other sessions, unknown ids, and replays from evicted events', () => {
    const store = new MemoryEventStore({ maxEventsPerStream: 2, maxStreamsPerSession: 1 });
    const first = store.append('s1', 'a', message(1));
    store.append('s1', 'a', message(2));
    store.append('s1', 'a', message(3)); // evicts a:0
    expect(store.replayAfter('s2', first)).toBeUndefined();
    expect(store.replayAfter('s1', 'nope')).toBeUndefined();
    expect(store.replayAfter('s1', 'a:x')).toBeUndefined();
    expect(store.replayAfter('s1', 'a:9')).toBeUndefined();
    // a:0 itself is gone, but every event after it is still here: the replay is complete.
    expect(store.replayAfter('s1', first)).toEqual({
      streamId: 'a',
      events: [
        { id: 'a:1', message: message(2) },
        { id: 'a:2', message: message(3) },
      ],
    });
    store.append('s1', 'a', message(4)); // evicts a:1: a replay after a:0 would now miss it
    expect(store.replayAfter('s1', first)).toBeUndefined();
    expect(store.replayAfter('s1', 'a:1')).toEqual({
      streamId: 'a',
      events: [
        { id: 'a:2', message: message(3) },
        { id: 'a:3', message: message(4) },
      ],
    });
    store.append('s1', 'b', message(5)); // evicts stream a
    expect(store.replayAfter('s1', 'a:1')).toBeUndefined();
    store.dropSession('s1');
    expect(store.replayAfter('s1', 'b:0')).toBeUndefined();
  });
});
