import { describe, expect, it } from 'vitest';
import { MemoryEventStore } from '../../../transports/http/event-store';
import { encodeSseComment, encodeSseEvent, SseParser, type SseEvent } from '../../../transports/http/sse';

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

  it('accepts CRLF and CR line endings split across chunks', () => {
    const parser = new SseParser();
    const parsed = [...parser.push('id:7\r'), ...parser.push('\ndata:x\r\r'), ...parser.push('\r\ndata:y\r\n\r\n')];
    expect(parsed).toEqual([{ id: '7', data: 'x' }, { data: 'y' }]);
  });

  it('ignores comments and unknown fields', () => {
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

  /** Stream a gets three events, stream b one between them. */
  function twoStreams() {
    const store = new MemoryEventStore();
    const a1 = store.append('s1', 'a', message(1));
    store.append('s1', 'b', message(100));
    store.append('s1', 'a', message(2));
    store.append('s1', 'a', message(3));
    return { store, a1 };
  }

  it('issues ids that name their stream', () => {
    expect(twoStreams().a1).toBe('a:0');
  });

  it('replays only the stream of the id, after the id', () => {
    const { store, a1 } = twoStreams();
    expect(store.replayAfter('s1', a1)).toEqual({
      streamId: 'a',
      events: [
        { id: 'a:1', message: message(2) },
        { id: 'a:2', message: message(3) },
      ],
    });
  });

  it('replays nothing after the last id', () => {
    expect(twoStreams().store.replayAfter('s1', 'a:2')).toEqual({ streamId: 'a', events: [] });
  });

  /** A store keeping 2 events of 1 stream per session; a:0 already evicted by a:2. */
  function smallStore() {
    const store = new MemoryEventStore({ maxEventsPerStream: 2, maxStreamsPerSession: 1 });
    const first = store.append('s1', 'a', message(1));
    store.append('s1', 'a', message(2));
    store.append('s1', 'a', message(3)); // evicts a:0
    return { store, first };
  }

  it('refuses an id of another session', () => {
    const { store, first } = smallStore();
    expect(store.replayAfter('s2', first)).toBeUndefined();
  });

  it('refuses unknown ids', () => {
    const { store } = smallStore();
    expect(store.replayAfter('s1', 'nope')).toBeUndefined();
    expect(store.replayAfter('s1', 'a:x')).toBeUndefined();
    expect(store.replayAfter('s1', 'a:9')).toBeUndefined();
  });

  it('replays after an evicted id while every event after it is still kept', () => {
    const { store, first } = smallStore();
    expect(store.replayAfter('s1', first)).toEqual({
      streamId: 'a',
      events: [
        { id: 'a:1', message: message(2) },
        { id: 'a:2', message: message(3) },
      ],
    });
  });

  it('refuses to replay after an id once an event after it was evicted', () => {
    const { store, first } = smallStore();
    store.append('s1', 'a', message(4)); // evicts a:1: a replay after a:0 would now miss it
    expect(store.replayAfter('s1', first)).toBeUndefined();
    expect(store.replayAfter('s1', 'a:1')).toEqual({
      streamId: 'a',
      events: [
        { id: 'a:2', message: message(3) },
        { id: 'a:3', message: message(4) },
      ],
    });
  });

  it('refuses ids of an evicted stream', () => {
    const { store } = smallStore();
    store.append('s1', 'b', message(5)); // evicts stream a
    expect(store.replayAfter('s1', 'a:1')).toBeUndefined();
  });

  it('refuses ids of a dropped session', () => {
    const { store } = smallStore();
    store.append('s1', 'b', message(5));
    store.dropSession('s1');
    expect(store.replayAfter('s1', 'b:0')).toBeUndefined();
  });
});
