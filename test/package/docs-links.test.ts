/**
 * The README and the documents under docs/ link to each other and to the repository's files: every relative
 * link must name a file that exists and, when it has an `#anchor`, a heading of that file whose GitHub slug is
 * the anchor (a section moved or renamed breaks no link silently).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const DOCUMENTS = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** The text outside fenced code blocks and code spans: a link shown as code is not a link. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens. */
export function githubSlug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a markdown file's headings; a repeated slug gets `-1`, `-2`, ... as on GitHub. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const withoutCode = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const [, heading] of withoutCode.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const slug = githubSlug(heading!);
    const count = seen.get(slug) ?? 0;
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
    seen.set(slug, count + 1);
  }
  return anchors;
}

interface Link {
  readonly from: string;
  readonly target: string;
}

/** Every relative link (and image) of the documents: absolute URLs and `mailto:` are left out. */
function relativeLinks(): Link[] {
  return DOCUMENTS.flatMap((from) =>
    [...prose(readFileSync(join(ROOT, from), 'utf8')).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)]
      .map(([, target]) => ({ from, target: target! }))
      .filter(({ target }) => !/^[a-z][a-z0-9+.-]*:/i.test(target)),
  );
}

/** What is wrong with a link, or undefined when it resolves. */
function brokenBecause({ from, target }: Link): string | undefined {
  const [path, anchor] = target.split('#', 2) as [string, string | undefined];
  const file = path === '' ? join(ROOT, from) : resolve(dirname(join(ROOT, from)), decodeURIComponent(path));
  if (!existsSync(file)) return `no file ${relative(ROOT, file)}`;
  if (anchor === undefined) return undefined;
  if (!file.endsWith('.md')) return `an anchor into ${relative(ROOT, file)}, which is not markdown`;
  return anchorsOf(readFileSync(file, 'utf8')).has(anchor)
    ? undefined
    : `no heading #${anchor} in ${relative(ROOT, file)}`;
}

describe('the links of the README and docs/', () => {
  it('slugs headings as GitHub does', () => {
    expect(githubSlug('Two eras: 2026-07-28 and the handshake')).toBe('two-eras-2026-07-28-and-the-handshake');
    expect(githubSlug('Authorization (OAuth 2.1)')).toBe('authorization-oauth-21');
    expect(githubSlug('The hub: many servers behind one')).toBe('the-hub-many-servers-behind-one');
    expect(githubSlug('Which entry exports what')).toBe('which-entry-exports-what');
    expect(githubSlug('`switchboard call` and [the hub](#x)')).toBe('switchboard-call-and-the-hub');
    expect([...anchorsOf('# A\n## A\n```md\n# B\n```\n### A')]).toEqual(['a', 'a-1', 'a-2']);
  });

  it('reads the documents and finds their links', () => {
    expect(DOCUMENTS).toEqual(expect.arrayContaining(['README.md', 'docs/api.md', 'docs/runtimes.md']));
    const links = relativeLinks();
    expect(links.length).toBeGreaterThan(30);
    expect(links.filter(({ target }) => target.includes('#')).length).toBeGreaterThan(15);
  });

  it('names files that exist and headings those files have', () => {
    const broken = relativeLinks().flatMap((link) => {
      const why = brokenBecause(link);
      return why === undefined ? [] : [`${link.from}: (${link.target}) ${why}`];
    });
    expect(broken).toEqual([]);
  });
});
