/**
 * The sealed `requestState` of the 2026-07-28 multi round-trip requests: a token the client must echo and
 * cannot forge, replay against another request, or keep past its expiry, opened by any replica that shares
 * the key ring. `open` answers hostile input with a reason, never an exception.
 */
import { createHmac } from 'node:crypto';
import { nodeCrypto } from '../../lib/core/node-builtins';
import { nodeHmacKey, oneShotHmac, webCryptoHmacKey } from '../../lib/server/request-state/hmac';
import { inspect } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import {
  canonicalJson,
  createKeyRing,
  DEFAULT_MAX_REQUEST_STATE_LENGTH,
  open,
  processKeyRing,
  seal,
  type RequestStateBinding,
} from '../../lib/server/request-state';
import { DEFAULT_MAX_DEPTH } from '../../lib/jsonrpc/codec';

const OLD_SECRET = 'old-secret-0123456789-abcdefghijklmnop';
const NEW_SECRET = new Uint8Array(32).map((_, index) => index * 7 + 1);
const oldKey = { id: 'k2025', secret: OLD_SECRET };
const newKey = { id: 'k2026', secret: NEW_SECRET };
const ring = createKeyRing({ keys: [oldKey] });

const NOW = 1_800_000_000_000;
const binding: RequestStateBinding = {
  method: 'tools/call',
  target: 'book_flight',
  arguments: { from: 'CDG', to: 'SFO', passengers: [{ name: 'Ada', age: 36 }] },
  principal: 'user-42',
};

function sealState(state: unknown, ttlMs = 60_000): Promise<string> {
  return seal(ring, { state, ttlMs, binding, now: NOW });
}

/** Nested arrays `depth` levels deep, built without recursion. */
function nestedArrays(depth: number): unknown {
  let value: unknown = [];
  for (let level = 1; level < depth; level++) value = [value];
  return value;
}

/** The same JSON value with every object's members inserted in reverse order. */
function reversedMembers(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversedMembers);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([key, member]) => [key, reversedMembers(member)]),
  );
}

/**
 * The reference: JSON text with each object's members written in sorted key order. Written out because a
 * rebuilt object cannot hold its keys in that order (integer-like keys always enumerate first).
 */
function sortedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`;
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  const members = value as Record<string, unknown>;
  const keys = Object.keys(members).sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${sortedJson(members[key])}`).join(',')}}`;
}

describe('canonicalJson', () => {
  it('gives the same text whatever order the members were inserted in', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(canonicalJson(reversedMembers(value))).toBe(canonicalJson(value));
      }),
    );
  });

  it('writes JSON with the members of every object in sorted key order', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(canonicalJson(value)).toBe(sortedJson(value));
      }),
    );
  });

  it('keeps a __proto__ member as an ordinary member', () => {
    expect(canonicalJson(JSON.parse('{"b":1,"__proto__":{"x":2},"a":3}'))).toBe('{"__proto__":{"x":2},"a":3,"b":1}');
  });

  it('accepts nesting exactly as deep as the limit', () => {
    expect(canonicalJson(nestedArrays(DEFAULT_MAX_DEPTH))).toBeDefined();
  });

  it('refuses nesting one level deeper than the limit', () => {
    expect(canonicalJson(nestedArrays(DEFAULT_MAX_DEPTH + 1))).toBeUndefined();
  });

  it('refuses a hostile 100,000-level nesting without overflowing the stack', () => {
    expect(canonicalJson(nestedArrays(100_000))).toBeUndefined();
  });

  it('refuses, without throwing, a nesting deeper than the stack holds even when the caller allows any depth', () => {
    expect(canonicalJson(nestedArrays(1_000_000), Infinity)).toBeUndefined();
  });

  it('refuses a bigint, which JSON cannot carry', () => {
    expect(canonicalJson({ count: 10n })).toBeUndefined();
  });
});

describe('createKeyRing', () => {
  it.each([
    ['no keys', { keys: [] }],
    ['a secret shorter than 32 bytes', { keys: [{ id: 'short', secret: 'too-short' }] }],
    ['a key id outside the allowed characters', { keys: [{ id: 'has.dot', secret: OLD_SECRET }] }],
    ['a key id given twice', { keys: [oldKey, { ...newKey, id: oldKey.id }] }],
    ['a current key that is not in the ring', { keys: [oldKey], current: 'missing' }],
  ])('refuses %s', (_, options) => {
    expect(() => createKeyRing(options)).toThrow(TypeError);
  });

  it('seals with the first key when no current key is named', () => {
    expect(createKeyRing({ keys: [newKey, oldKey] }).currentKeyId).toBe('k2026');
  });

  it('shows no secret when serialized or inspected', () => {
    const shown = JSON.stringify(ring) + inspect(ring, { showHidden: true, depth: 10 }) + String(ring);
    expect(shown).not.toContain(OLD_SECRET);
  });
});

describe('seal and open', () => {
  it('give back any JSON state sealed for the same request', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), async (state) => {
        const opened = await open(ring, await sealState(state), binding, NOW);
        expect(opened).toEqual({ ok: true, state: JSON.parse(JSON.stringify(state)) });
      }),
      { numRuns: 50 },
    );
  });

  it('make a token of base64url fields and dots only', async () => {
    expect(await sealState({ step: 1, note: 'café ✈' })).toMatch(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)+$/);
  });

  it('refuse a token with any one character changed', async () => {
    const token = await sealState({ step: 1, seats: ['12A', '12B'] });
    const replacements = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.+/= é';
    await fc.assert(
      fc.asyncProperty(
        fc.nat({ max: token.length - 1 }),
        fc.nat({ max: replacements.length - 1 }),
        async (position, pick) => {
          const replacement = replacements[pick]!;
          fc.pre(token[position] !== replacement);
          const tampered = token.slice(0, position) + replacement + token.slice(position + 1);
          const opened = await open(ring, tampered, binding, NOW);
          expect(opened.ok === false && ['malformed', 'unknown-key', 'bad-signature'].includes(opened.reason)).toBe(
            true,
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it('refuse a token whose last character changes only bits the encoding leaves unused', async () => {
    const token = await sealState({ step: 1 });
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    // 32 bytes take 43 characters: the last one carries 4 bits of the tag and 2 unused ones.
    const twin = alphabet[alphabet.indexOf(token.at(-1)!) ^ 1]!;
    expect(await open(ring, token.slice(0, -1) + twin, binding, NOW)).toEqual({ ok: false, reason: 'malformed' });
  });

  it('refuse a token with text appended, as the conformance suite tampers it', async () => {
    expect(await open(ring, `${await sealState({ step: 1 })}-TAMPERED`, binding, NOW)).toEqual({
      ok: false,
      reason: 'malformed',
    });
  });

  it.each<[string, RequestStateBinding]>([
    ['another method', { ...binding, method: 'prompts/get' }],
    ['another tool', { ...binding, target: 'cancel_flight' }],
    ['other arguments', { ...binding, arguments: { ...(binding.arguments as object), to: 'JFK' } }],
    ['another principal', { ...binding, principal: 'user-43' }],
    ['no principal', { ...binding, principal: undefined }],
  ])('refuse a state retried with %s (the MAC covers the binding: "bad-signature")', async (_, retried) => {
    expect(await open(ring, await sealState({ step: 1 }), retried, NOW)).toEqual({
      ok: false,
      reason: 'bad-signature',
    });
  });

  it('accept the same arguments in another member order', async () => {
    const reordered = { ...binding, arguments: reversedMembers(binding.arguments) };
    expect(await open(ring, await sealState({ step: 1 }), reordered, NOW)).toEqual({ ok: true, state: { step: 1 } });
  });

  it('count absent arguments as empty arguments', async () => {
    const token = await seal(ring, { state: 1, binding: { method: 'prompts/get', target: 'greet' }, now: NOW });
    expect(await open(ring, token, { method: 'prompts/get', target: 'greet', arguments: {} }, NOW)).toEqual({
      ok: true,
      state: 1,
    });
  });

  it('refuse, as "binding" and without throwing, retried arguments nested past the depth limit', async () => {
    const deep = { ...binding, arguments: { deep: nestedArrays(100_000) } };
    expect(await open(ring, await sealState({ step: 1 }), deep, NOW)).toEqual({ ok: false, reason: 'binding' });
  });

  it('accept a state one millisecond before it expires', async () => {
    expect((await open(ring, await sealState('s', 5_000), binding, NOW + 4_999)).ok).toBe(true);
  });

  it('refuse a state from the instant it expires', async () => {
    expect(await open(ring, await sealState('s', 5_000), binding, NOW + 5_000)).toEqual({
      ok: false,
      reason: 'expired',
    });
  });

  it('refuse a state when the time to compare with is not a number', async () => {
    expect(await open(ring, await sealState('s'), binding, Number.NaN)).toEqual({ ok: false, reason: 'expired' });
  });

  it('refuse a state sealed with another secret under the same key id as "bad-signature"', async () => {
    const impostor = createKeyRing({ keys: [{ id: oldKey.id, secret: NEW_SECRET }] });
    const forged = await seal(impostor, { state: { admin: true }, binding, now: NOW });
    expect(await open(ring, forged, binding, NOW)).toEqual({ ok: false, reason: 'bad-signature' });
  });
});

describe('key rotation', () => {
  const rotated = createKeyRing({ keys: [oldKey, newKey], current: newKey.id });

  it('opens a state sealed with the old key after a new current key is added', async () => {
    expect(await open(rotated, await sealState({ step: 2 }), binding, NOW)).toEqual({ ok: true, state: { step: 2 } });
  });

  it('seals with the new current key', async () => {
    const token = await seal(rotated, { state: 1, binding, now: NOW });
    expect(token.split('.')[1]).toBe(newKey.id);
  });

  it('refuses a state sealed with a key the ring no longer holds as "unknown-key"', async () => {
    const retired = createKeyRing({ keys: [newKey] });
    expect(await open(retired, await sealState({ step: 2 }), binding, NOW)).toEqual({
      ok: false,
      reason: 'unknown-key',
    });
  });
});

describe('the process key ring', () => {
  it('is one ring for the whole process', () => {
    expect(processKeyRing()).toBe(processKeyRing());
  });

  it('opens what it sealed', async () => {
    const token = await seal(processKeyRing(), { state: 'mine', binding, now: NOW });
    expect(await open(processKeyRing(), token, binding, NOW)).toEqual({ ok: true, state: 'mine' });
  });

  it('is refused by a replica with its own ring as "unknown-key"', async () => {
    const token = await seal(processKeyRing(), { state: 'mine', binding, now: NOW });
    expect(await open(ring, token, binding, NOW)).toEqual({ ok: false, reason: 'unknown-key' });
  });
});

describe('hostile tokens', () => {
  it('refuses a token over the size limit as "malformed" before looking up any key', async () => {
    const fields = (await sealState({ step: 1 })).split('.');
    fields[3] = 'A'.repeat(DEFAULT_MAX_REQUEST_STATE_LENGTH); // the state: well formed but for its length
    const huge = fields.join('.');
    const lookups = vi.spyOn(ring, 'cryptoKey');
    expect(await open(ring, huge, binding, NOW)).toEqual({ ok: false, reason: 'malformed' });
    expect(lookups).not.toHaveBeenCalled();
    lookups.mockRestore();
  });

  it('honours a lower size limit given as an option', async () => {
    const token = await sealState({ step: 1 });
    expect(await open(ring, token, binding, NOW, { maxTokenLength: token.length - 1 })).toEqual({
      ok: false,
      reason: 'malformed',
    });
  });

  it.each([[undefined], [null], [42], [{ token: 'x' }], [''], ['....'], ['rs2.k2025.1.a.b.c'], ['rs1.k2025.1.a.b.c']])(
    'refuses %j as "malformed"',
    async (token) => {
      expect(await open(ring, token, binding, NOW)).toEqual({ ok: false, reason: 'malformed' });
    },
  );

  it('answers any string with a refusal, never an exception', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 300 }), async (token) => {
        await expect(open(ring, token, binding, NOW)).resolves.toMatchObject({ ok: false });
      }),
      { numRuns: 300 },
    );
  });

  it('answers any hostile binding with a refusal, never an exception', async () => {
    const token = await sealState({ step: 1 });
    await fc.assert(
      fc.asyncProperty(fc.anything({ withBigInt: true, withMap: true, withNullPrototype: true }), async (args) => {
        const hostile = { method: 'tools/call', target: 'book_flight', arguments: args } as RequestStateBinding;
        await expect(open(ring, token, hostile, NOW)).resolves.toMatchObject({ ok: false });
      }),
      { numRuns: 200 },
    );
  });
});

describe('seal refuses', () => {
  it('a state whose token would exceed the size limit', async () => {
    await expect(seal(ring, { state: 'x'.repeat(DEFAULT_MAX_REQUEST_STATE_LENGTH), binding })).rejects.toThrow(
      RangeError,
    );
  });

  it('nothing at the size limit: a token exactly as long as the limit is made and opened', async () => {
    const length = (await sealState({ step: 1 })).length;
    const token = await seal(
      ring,
      { state: { step: 1 }, ttlMs: 60_000, binding, now: NOW },
      { maxTokenLength: length },
    );
    expect(await open(ring, token, binding, NOW, { maxTokenLength: length })).toEqual({ ok: true, state: { step: 1 } });
  });

  it('a token one character over the limit', async () => {
    const length = (await sealState({ step: 1 })).length;
    await expect(
      seal(ring, { state: { step: 1 }, ttlMs: 60_000, binding, now: NOW }, { maxTokenLength: length - 1 }),
    ).rejects.toThrow(RangeError);
  });

  it('a state that is not JSON', async () => {
    await expect(seal(ring, { state: undefined, binding })).rejects.toThrow(TypeError);
  });

  it('a TTL that is not a positive number', async () => {
    await expect(seal(ring, { state: 1, binding, ttlMs: 0 })).rejects.toThrow(RangeError);
  });
});

describe('the HMAC keys', () => {
  const secret = new Uint8Array(32).fill(7);

  it('node:crypto and WebCrypto agree on every tag (a ring on either runtime opens the other’s states)', async () => {
    const node = nodeHmacKey(secret)!;
    const web = webCryptoHmacKey(secret);
    for (const text of ['', 'rs1.k.1.a.b', 'ünïcode ✓', 'x'.repeat(10_000)]) {
      const tag = await node.sign(text);
      expect(Buffer.from(await web.sign(text)).equals(Buffer.from(tag))).toBe(true);
      expect(await web.verify(tag, text)).toBe(true);
      expect(await node.verify(await web.sign(text), text)).toBe(true);
    }
  });

  it('the one-shot HMAC gives createHmac’s tag for short and long keys and texts, in any order', () => {
    const texts = ['', 'rs2.k.1.a.b\n{}', 'ünïcode ✓ 𝄞', 'x'.repeat(10_000), 'short after long'];
    for (const length of [1, 32, 64, 65, 200]) {
      const key = new Uint8Array(length).map((_, index) => (index * 31 + 7) & 0xff);
      const sign = oneShotHmac(nodeCrypto()!, key)!;
      for (const text of [...texts, ...texts.reverse()]) {
        const expected = createHmac('sha256', key).update(text).digest('hex');
        expect(Buffer.from(sign(text)).toString('hex')).toBe(expected);
      }
    }
  });

  it.each([
    ['node:crypto', () => nodeHmacKey(secret)!],
    ['WebCrypto', () => webCryptoHmacKey(secret)],
  ])('%s refuses a tag with one bit flipped, and a tag of the wrong length', async (_name, make) => {
    const key = make();
    const tag = new Uint8Array(await key.sign('text'));
    tag[31] = tag[31]! ^ 1;
    expect(await key.verify(tag, 'text')).toBe(false);
    expect(await key.verify(tag.subarray(0, 16), 'text')).toBe(false);
  });
});
