/**
 * Every relative link in the README, CONTRIBUTING.md and docs/*.md leads somewhere: the file or folder exists, and an
 * `#anchor` names a heading of the Markdown file it points into (headings turned into anchors as GitHub does).
 */
import { describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../helpers/cli.js';

const PAGES = ['README.md', 'CONTRIBUTING.md', ...readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)].sort();

/** Markdown text without fenced code blocks and inline code spans, where brackets are not links. */
function proseOf(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** The link targets of a page: `[text](target)` and `[text](target "title")`, in prose only. */
export function linkTargets(markdown: string): string[] {
  const out: string[] = [];
  for (const m of proseOf(markdown).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) out.push(m[1] as string);
  return out;
}

/** GitHub's anchor for a heading: its text without markup, lower-cased, punctuation dropped, spaces as hyphens. */
export function slugOf(heading: string): string {
  const text = heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '').replace(/\s/g, '-');
}

/** Every anchor a Markdown file has: one per heading, repeats numbered `-1`, `-2` as GitHub does. */
export function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  const withoutCode = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const m of withoutCode.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slugOf(m[1] as string);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** Why a link from a page does not resolve, or null when it does. */
function brokenReason(page: string, target: string): string | null {
  const hash = target.indexOf('#');
  const file = hash === -1 ? target : target.slice(0, hash);
  const anchor = hash === -1 ? null : decodeURIComponent(target.slice(hash + 1));
  const resolved = file === '' ? path.join(ROOT, page) : path.resolve(path.dirname(path.join(ROOT, page)), decodeURIComponent(file));
  if (path.relative(ROOT, resolved).startsWith('..')) return 'leads outside the repository';
  if (!existsSync(resolved)) return 'no such file';
  if (anchor === null) return null;
  if (statSync(resolved).isDirectory() || !resolved.endsWith('.md')) return 'an anchor into something that is not a Markdown file';
  return anchorsOf(readFileSync(resolved, 'utf8')).has(anchor) ? null : `no heading makes the anchor #${anchor}`;
}

describe('relative links in the documentation', () => {
  it('finds the pages: the README, CONTRIBUTING.md and at least four pages in docs/', () => {
    expect(PAGES).toEqual(expect.arrayContaining(['README.md', 'CONTRIBUTING.md']));
    expect(PAGES.filter((p) => p.startsWith('docs/')).length).toBeGreaterThanOrEqual(4);
  });

  it('makes anchors as GitHub does', () => {
    expect(slugOf('What swc never does to your files')).toBe('what-swc-never-does-to-your-files');
    expect(slugOf('`--out-dir` never leaves the out-dir')).toBe('--out-dir-never-leaves-the-out-dir');
    expect(slugOf('Options of `swc compact`')).toBe('options-of-swc-compact');
    expect(slugOf('The strategy, exactly')).toBe('the-strategy-exactly');
    expect([...anchorsOf('# A\n## B\n```\n# not a heading\n```\n## B\n')]).toEqual(['a', 'b', 'b-1']);
    expect(linkTargets('[a](x.md) `[b](y.md)` [c](z.md#top "title")\n```\n[d](w.md)\n```\n')).toEqual(['x.md', 'z.md#top']);
  });

  it.each(PAGES)('resolves every relative link and anchor in %s', (page) => {
    const broken: string[] = [];
    for (const target of linkTargets(readFileSync(path.join(ROOT, page), 'utf8'))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: …
      const reason = brokenReason(page, target);
      if (reason !== null) broken.push(`${target}: ${reason}`);
    }
    expect(broken).toEqual([]);
  });

  it('links every page in docs/ from the README', () => {
    const linked = new Set(linkTargets(readFileSync(path.join(ROOT, 'README.md'), 'utf8')).map((t) => t.split('#')[0]));
    expect(PAGES.filter((p) => p.startsWith('docs/') && !linked.has(p))).toEqual([]);
  });
});
