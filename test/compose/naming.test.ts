/**
 * The hub's naming policy: valid names under the 2025-11-25 rules, the length limit with a stable hash
 * suffix, and the three collision policies over upstreams that are up or down.
 */
import { describe, expect, it } from 'vitest';
import { compileFilter } from '../../lib/compose/name-filter';
import {
  assignNames,
  DEFAULT_NAMING,
  fitName,
  formatName,
  namingPolicy,
  stableHash,
  type CollisionPolicy,
  type NameCandidate,
} from '../../lib/compose/naming';
import { TOOL_NAME_PATTERN } from '../../lib/server/tools';

function candidate(
  upstream: string,
  original: string,
  options: { collision?: CollisionPolicy; prefix?: string; serving?: boolean; maxLength?: number } = {},
): NameCandidate<string> {
  const { serving = true, ...naming } = options;
  return { upstream, original, item: `${upstream}/${original}`, serving, policy: namingPolicy(naming) };
}

const served = (candidates: NameCandidate<string>[]) =>
  assignNames('Tool', candidates).served.map(({ name, candidate: { item } }) => [name, item]);

describe('names', () => {
  it('keeps names that fit, with the prefix and separator in front', () => {
    expect(formatName(DEFAULT_NAMING, 'search')).toBe('search');
    expect(formatName(namingPolicy({ prefix: 'gh' }), 'search')).toBe('gh__search');
    expect(formatName(namingPolicy({ prefix: 'gh', separator: '.' }), 'search')).toBe('gh.search');
    expect(formatName(namingPolicy({ prefix: 'gh', separator: '' }), 'search')).toBe('ghsearch');
  });

  it('replaces characters the tool-name rules do not allow', () => {
    expect(formatName(DEFAULT_NAMING, 'read file/v2:é')).toBe('read_file_v2__');
    expect(formatName(namingPolicy({ prefix: 'fs' }), 'a b')).toMatch(TOOL_NAME_PATTERN);
  });

  const long = `${'x'.repeat(70)}_one`;

  it('cuts a long name to the limit and ends it with a hash of the whole name', () => {
    const cut = fitName(long, 64);
    expect(cut).toHaveLength(64);
    expect(cut).toBe(`${'x'.repeat(56)}_${stableHash(long)}`);
  });

  it('cuts two long names with the same start to different names, each time the same', () => {
    const other = `${'x'.repeat(70)}_two`;
    const cut = fitName(long, 64);
    expect(fitName(other, 64)).not.toBe(cut);
    expect(fitName(long, 64)).toBe(cut);
  });

  it('always fits the limit with a valid tool name', () => {
    for (const maxLength of [16, 40, 64, 128]) {
      for (const name of ['a'.repeat(200), 'ü'.repeat(130), `${'p'.repeat(100)}__${'t'.repeat(100)}`]) {
        const fitted = fitName(name, maxLength);
        expect(fitted.length).toBeLessThanOrEqual(maxLength);
        expect(fitted).toMatch(TOOL_NAME_PATTERN);
      }
    }
  });

  it('hashes stably across runs: FNV-1a of the UTF-8 bytes, always seven base-36 characters', () => {
    // The published FNV-1a (32-bit) test vectors.
    expect(parseInt(stableHash(''), 36)).toBe(0x811c9dc5);
    expect(parseInt(stableHash('a'), 36)).toBe(0xe40c292c);
    expect(parseInt(stableHash('foobar'), 36)).toBe(0xbf9cf968);
    expect(stableHash('')).toBe('0ztntfp');
    expect(stableHash('github__search_repositories')).toBe(stableHash('github__search_repositories'));
    expect(stableHash('a')).not.toBe(stableHash('b'));
    for (const text of ['', 'a', 'é', 'x'.repeat(1000)]) expect(stableHash(text)).toMatch(/^[0-9a-z]{7}$/);
    expect(stableHash('é')).toBe('08htmm9');
  });

  it('refuses bad policies with a clear error', () => {
    expect(() => namingPolicy({ prefix: 'has space' })).toThrow(/prefix "has space"/);
    expect(() => namingPolicy({ separator: '/' })).toThrow(/separator/);
    expect(() => namingPolicy({ maxLength: 8 })).toThrow(/maxLength must be an integer from 16 to 128, got 8/);
    expect(() => namingPolicy({ maxLength: 129 })).toThrow(/maxLength/);
    expect(() => namingPolicy({ collision: 'merge' as CollisionPolicy })).toThrow(/collision must be one of/);
  });
});

describe('collisions', () => {
  it('error: the first upstream keeps the name, the later one is left out with an error', () => {
    const assignment = assignNames('Tool', [candidate('a', 'search'), candidate('b', 'search'), candidate('b', 'x')]);
    expect(assignment.served.map(({ name, candidate: { item } }) => [name, item])).toEqual([
      ['search', 'a/search'],
      ['x', 'b/x'],
    ]);
    expect(assignment.problems).toEqual([
      expect.objectContaining({ severity: 'error', upstream: 'b', original: 'search', name: 'search' }),
    ]);
    expect(assignment.problems[0]!.message).toMatch(/Tool "search" of b would be named search, which a already uses/);
  });

  it('first-wins: the first upstream that is up serves the name, so a second one takes over while it is down', () => {
    const both = [candidate('a', 'search'), candidate('b', 'search', { collision: 'first-wins' })];
    expect(served(both)).toEqual([['search', 'a/search']]);
    const firstDown = [
      candidate('a', 'search', { serving: false }),
      candidate('b', 'search', { collision: 'first-wins' }),
    ];
    expect(served(firstDown)).toEqual([['search', 'b/search']]);
  });

  it("rename: the later one is served under its upstream's name, whether the first one is up or not", () => {
    const rename = { collision: 'rename' as const };
    expect(served([candidate('a', 'search'), candidate('b', 'search', rename)])).toEqual([
      ['search', 'a/search'],
      ['b__search', 'b/search'],
    ]);
    // Names do not move while an upstream is down: the down one still reserves its name.
    expect(served([candidate('a', 'search', { serving: false }), candidate('b', 'search', rename)])).toEqual([
      ['b__search', 'b/search'],
    ]);
    const assignment = assignNames('Tool', [candidate('a', 'search'), candidate('b', 'search', rename)]);
    expect(assignment.problems).toEqual([expect.objectContaining({ severity: 'info', name: 'b__search' })]);
  });

  const rename = { collision: 'rename' as const };
  const crowded = () =>
    served([
      candidate('a', 'search'),
      candidate('a', 'b__search'),
      candidate('b', 'search', rename),
      candidate('c', 'search', rename),
    ]);

  it('rename never serves a name twice', () => {
    const names = crowded().map(([name]) => name);
    expect(new Set(names).size).toBe(names.length);
  });

  it('rename falls back to a hash when the renamed name is taken too', () => {
    const result = crowded();
    expect(result).toContainEqual(['b__search', 'a/b__search']);
    expect(result).toContainEqual([`search_${stableHash('b/search')}`, 'b/search']);
    expect(result).toContainEqual(['c__search', 'c/search']);
  });

  it('applies the prefix before looking for collisions', () => {
    expect(served([candidate('a', 'search', { prefix: 'a' }), candidate('b', 'search', { prefix: 'b' })])).toEqual([
      ['a__search', 'a/search'],
      ['b__search', 'b/search'],
    ]);
  });

  it('applies the length limit to renamed names', () => {
    const long = 'q'.repeat(40);
    const result = served([
      candidate('a', long, { maxLength: 32 }),
      candidate('upstream-with-a-long-name', long, { maxLength: 32, collision: 'rename' }),
    ]);
    expect(result).toHaveLength(2);
    for (const [name] of result) expect(name!.length).toBeLessThanOrEqual(32);
    expect(result[0]![0]).not.toBe(result[1]![0]);
  });

  it('gives the same names for the same catalogs every time', () => {
    const catalogs = () => [
      candidate('a', 'x'),
      candidate('b', 'x', { collision: 'rename' }),
      candidate('c', 'x'.repeat(100), { collision: 'rename' }),
    ];
    expect(served(catalogs())).toEqual(served(catalogs()));
  });
});

describe('filters', () => {
  it('allows, denies and matches * against the names the upstream gives', () => {
    const accepts = compileFilter({ allow: ['read_*', 'list'], deny: ['read_secret*'] }, 'x.tools');
    expect(['read_file', 'list', 'read_secrets', 'write', 'listing'].filter(accepts)).toEqual(['read_file', 'list']);
  });

  it('accepts everything without a filter', () => {
    expect(compileFilter(undefined, 'x')('anything')).toBe(true);
  });

  it('accepts nothing when * is denied', () => {
    expect(compileFilter({ deny: ['*'] }, 'x')('anything')).toBe(false);
  });

  it('matches other characters literally', () => {
    expect(compileFilter({ allow: ['a.b'] }, 'x')('aXb')).toBe(false);
  });

  it('refuses a filter that is not a list of strings, naming it', () => {
    expect(() => compileFilter({ allow: 'read' as never }, 'x.tools')).toThrow(
      'x.tools.allow must be a list of strings',
    );
  });
});
