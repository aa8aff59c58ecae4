/**
 * README.md and every page in docs/ link to each other: every relative link and image must name a
 * file that exists, and every `#anchor` must be one of the headings of the page it points at (as
 * GitHub makes anchors), so a heading renamed or a section moved to another page fails here. README
 * must link every page of docs/, so that a newcomer finds each one from the front page. Code that
 * points a reader at a page (`docs/limits.md` in a comment, a GraphQL description or an error
 * message) must name one that exists.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../src/project-root.js';
import { anchorsOf, linksOf } from '../../support/markdown.js';

const DOCS = join(PROJECT_ROOT, 'docs');
const README = join(PROJECT_ROOT, 'README.md');

/** Why each link of `file` does not resolve; empty when all do. */
export function problemsOf(file: string, root: string): string[] {
  const name = relative(root, file);
  const problems: string[] = [];
  for (const link of linksOf(readFileSync(file, 'utf8'))) {
    const target = link.target === '' ? file : normalize(join(dirname(file), link.target));
    if (relative(root, target).startsWith('..')) {
      problems.push(`${name}:${link.line}: ${link.target} is outside the repository`);
      continue;
    }
    if (!existsSync(target)) {
      problems.push(`${name}:${link.line}: ${link.target} does not exist`);
      continue;
    }
    if (link.anchor === undefined) continue;
    if (!target.endsWith('.md')) {
      problems.push(`${name}:${link.line}: #${link.anchor} on ${link.target}, which has no headings`);
    } else if (!anchorsOf(readFileSync(target, 'utf8')).has(link.anchor)) {
      problems.push(`${name}:${link.line}: ${link.target || name} has no heading #${link.anchor}`);
    }
  }
  return problems;
}

const pages = readdirSync(DOCS)
  .filter((entry) => entry.endsWith('.md'))
  .sort();

describe('links of README.md and docs/', () => {
  it('should resolve every relative link and anchor', () => {
    const problems = [README, ...pages.map((page) => join(DOCS, page))].flatMap((file) =>
      problemsOf(file, PROJECT_ROOT),
    );
    expect(problems).toEqual([]);
  });

  it('should link every page of docs/ from README', () => {
    const linked = new Set(linksOf(readFileSync(README, 'utf8')).map((link) => normalize(link.target)));
    expect(pages.filter((page) => !linked.has(join('docs', page)))).toEqual([]);
  });
});

/** Every file under `dir` (recursively) whose name ends with one of `endings`. */
function filesUnder(dir: string, endings: string[]): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return entry === 'node_modules' ? [] : filesUnder(path, endings);
    return endings.some((ending) => entry.endsWith(ending)) ? [path] : [];
  });
}

describe('pages the code points at', () => {
  it('should exist, for every docs/<page>.md named in src, scripts, bench and test', () => {
    const code = ['src', 'scripts', 'bench', 'test']
      .flatMap((dir) => filesUnder(join(PROJECT_ROOT, dir), ['.ts', '.graphql']))
      .filter((file) => file !== fileURLToPath(import.meta.url));
    const named = code.flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/\bdocs\/([\w-]+\.md)\b/g)].map(
        (match) => `${relative(PROJECT_ROOT, file)}: docs/${match[1] ?? ''}`,
      ),
    );
    expect(named.length).toBeGreaterThan(20);
    expect(named.filter((entry) => !existsSync(join(DOCS, entry.split('docs/').pop() ?? '')))).toEqual([]);
  });
});

describe('the link checker', () => {
  it("should make GitHub's anchors, numbering repeated headings", () => {
    expect([...anchorsOf('# A `code` heading, and more\n## Known doubles\n## Known doubles\n')]).toEqual([
      'a-code-heading-and-more',
      'known-doubles',
      'known-doubles-1',
    ]);
    expect(anchorsOf('```sh\n# not a heading\n```\n').size).toBe(0);
  });

  it('should find links and images outside code, and leave absolute addresses alone', () => {
    const text = [
      'See [a](docs/a.md#x), ![i](docs/i.png) and [b](#here).',
      '`[not](a-link.md)` and <https://example.com> and [web](https://example.com/#a)',
      '```md',
      '[fenced](nope.md)',
      '```',
    ].join('\n');
    expect(linksOf(text)).toEqual([
      { target: 'docs/a.md', anchor: 'x', line: 1 },
      { target: 'docs/i.png', anchor: undefined, line: 1 },
      { target: '', anchor: 'here', line: 1 },
    ]);
  });
});
