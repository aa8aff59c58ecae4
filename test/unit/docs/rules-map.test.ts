/**
 * docs/rules.md maps each rule of the platform's pages and of DESIGN.md to the module that holds
 * it and the test that pins it. This test keeps the map true when code moves: every `src/...` path
 * it names must exist, and every `#name` after a path must be declared in that file; every row names
 * a test `test/<file>.test.ts#<name>` (or says it has none yet), and that file must have a test of
 * that name. Links to other documents must resolve, and a README anchor must match one of README's
 * headings.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../src/project-root.js';
import { anchorOf, anchorsOf } from '../../support/markdown.js';

const MAP_PATH = join(PROJECT_ROOT, 'docs', 'rules.md');

interface Reference {
  path: string;
  /** `Name` or `Class.method`; null when only the file is named. */
  symbol: string | null;
  line: number;
}

/** Every code span of the form `src/<path>` or `src/<path>#<symbol>`, with its line number. */
function referencesIn(markdown: string): Reference[] {
  const found: Reference[] = [];
  markdown.split('\n').forEach((text, index) => {
    for (const match of text.matchAll(/`(src\/[^`#\s]+)(?:#([^`\s]+))?`/g)) {
      found.push({ path: match[1] ?? '', symbol: match[2] ?? null, line: index + 1 });
    }
  });
  return found;
}

interface TestReference {
  path: string;
  name: string;
  line: number;
}

/** Every code span of the form `test/<path>.test.ts#<test name>`, with its line number. */
function testReferencesIn(markdown: string): TestReference[] {
  const found: TestReference[] = [];
  markdown.split('\n').forEach((text, index) => {
    for (const match of text.matchAll(/`(test\/[^`#\s]+\.test\.ts)#([^`]+)`/g)) {
      found.push({ path: match[1] ?? '', name: match[2] ?? '', line: index + 1 });
    }
  });
  return found;
}

/** Says so in a row that no test pins its rule yet. */
const NO_TEST_YET = 'no test yet';

/** Why `ref` does not hold (no such file, or no test of that name in it), or null when it does. */
function testProblemOf(ref: TestReference, root: string): string | null {
  const file = join(root, ref.path);
  if (ref.path.split('/').includes('..') || !existsSync(file))
    return `line ${ref.line}: ${ref.path} does not exist`;
  const source = readFileSync(file, 'utf8');
  const named = ["'", '"', '`'].some((quote) => {
    const escaped = quote === "'" ? ref.name.replaceAll("'", "\\'") : ref.name;
    return source.includes(`${quote}${escaped}${quote}`);
  });
  return named ? null : `line ${ref.line}: ${ref.path} has no test named "${ref.name}"`;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** True when `source` declares `name` as a function, class, variable, type, interface or enum. */
function declaresTopLevel(source: string, name: string): boolean {
  const declaration = new RegExp(
    `\\b(?:function\\*?|class|const|let|var|type|interface|enum)\\s+${escapeRegExp(name)}(?![\\w$])`,
  );
  return declaration.test(source);
}

/** True when `source` has a class member `method(` (with any modifiers, `#` for a private one). */
function declaresMember(source: string, method: string): boolean {
  const member = new RegExp(
    `^\\s*(?:(?:public|private|protected|static|readonly|async|override|get|set)\\s+)*${escapeRegExp(method)}\\s*[(<]`,
    'm',
  );
  return member.test(source);
}

/** Why `ref` does not hold, or null when it does. */
function problemOf(ref: Reference, root: string): string | null {
  const file = join(root, ref.path);
  if (ref.path.split('/').includes('..') || !ref.path.endsWith('.ts') || !existsSync(file)) {
    return `line ${ref.line}: ${ref.path} does not exist`;
  }
  if (ref.symbol === null) return null;
  const source = readFileSync(file, 'utf8');
  const [owner = '', method] = ref.symbol.split('.', 2);
  if (!declaresTopLevel(source, owner)) return `line ${ref.line}: ${ref.path} declares no ${owner}`;
  if (method !== undefined && !declaresMember(source, method)) {
    return `line ${ref.line}: ${ref.path} has no member ${method} (in ${owner})`;
  }
  return null;
}

const map = readFileSync(MAP_PATH, 'utf8');
const references = referencesIn(map);
const testReferences = testReferencesIn(map);

/** The rows of the map's tables, header and separator rows left out. */
function tableRows(markdown: string): string[] {
  return markdown
    .split('\n')
    .filter(
      (line) =>
        line.startsWith('|') && !/^\|[\s|:-]+$/.test(line) && !/^\|\s*(?:#\s*\|\s*)?Rule\s*\|/.test(line),
    );
}

describe('docs/rules.md', () => {
  it('should name a module in every row of its tables', () => {
    const rows = tableRows(map);
    expect(rows.length).toBeGreaterThan(80);
    const bare = rows.filter((row) => referencesIn(row).length === 0);
    expect(bare).toEqual([]);
  });

  it('should point only at files that exist and names those files declare', () => {
    expect(references.length).toBeGreaterThan(100);
    const problems = references.map((ref) => problemOf(ref, PROJECT_ROOT)).filter((p) => p !== null);
    expect(problems).toEqual([]);
  });

  it('should name a test in every row of its tables, or say that none pins the rule yet', () => {
    const untested = tableRows(map).filter(
      (row) => testReferencesIn(row).length === 0 && !row.includes(NO_TEST_YET),
    );
    expect(untested).toEqual([]);
  });

  it('should name only tests that exist in the files it names', () => {
    expect(testReferences.length).toBeGreaterThan(100);
    const problems = testReferences.map((ref) => testProblemOf(ref, PROJECT_ROOT)).filter((p) => p !== null);
    expect(problems).toEqual([]);
  });

  it('should list every row without a test under its heading', () => {
    const untested = tableRows(map).filter((row) => row.includes(NO_TEST_YET)).length;
    const listed = map.split('## Rules without a test')[1]?.split('\n## ')[0] ?? '';
    expect(listed.match(/^- /gm)?.length ?? 0).toBe(untested);
  });

  it('should link only to documents and README headings that exist', () => {
    const problems: string[] = [];
    for (const match of map.matchAll(/\]\((?!https?:)([^)#\s]*)(?:#([^)\s]+))?\)/g)) {
      const [, target = '', anchor] = match;
      const file = target === '' ? MAP_PATH : join(dirname(MAP_PATH), target);
      if (!existsSync(file)) {
        problems.push(`${target} does not exist`);
        continue;
      }
      if (anchor !== undefined && !anchorsOf(readFileSync(file, 'utf8')).has(anchor)) {
        problems.push(`${target || 'rules.md'} has no heading #${anchor}`);
      }
    }
    expect(problems).toEqual([]);
  });
});

describe('the map checker', () => {
  const root = PROJECT_ROOT;
  const check = (text: string): (string | null)[] => referencesIn(text).map((ref) => problemOf(ref, root));

  it('should accept a declared function, constant, class and class method', () => {
    expect(
      check(
        '`src/operations/retry.ts#mayRetry` `src/limits.ts#CALL_TIMEOUT_MS` `src/turns/tool-cache.ts#ToolCache.invalidate` `src/turns/tool-cache.ts#ToolCache.#load` `src/limits.ts`',
      ),
    ).toEqual([null, null, null, null, null]);
  });

  it('should refuse a missing file, an undeclared or merely mentioned name, a missing method and a path that climbs out', () => {
    const problems = check(
      [
        '`src/operations/no-such-file.ts`',
        '`src/operations/retry.ts#mayRetr`',
        '`src/mcp/tool-mapping.ts#riskFromAnnotations`',
        '`src/turns/tool-cache.ts#ToolCache.noSuchMethod`',
        '`src/../package.json`',
      ].join('\n'),
    );
    expect(problems).toEqual([
      'line 1: src/operations/no-such-file.ts does not exist',
      'line 2: src/operations/retry.ts declares no mayRetr',
      'line 3: src/mcp/tool-mapping.ts declares no riskFromAnnotations',
      'line 4: src/turns/tool-cache.ts has no member noSuchMethod (in ToolCache)',
      'line 5: src/../package.json does not exist',
    ]);
  });

  it('should accept a test named as written and refuse a missing file or a name the file does not have', () => {
    const check = (text: string): (string | null)[] =>
      testReferencesIn(text).map((ref) => testProblemOf(ref, root));
    expect(
      check(
        [
          '`test/unit/operations/risk.test.ts#should start only READ operations on`',
          '`test/unit/operations/risk.test.ts#should give %s → %s`',
          "`test/unit/docs/rules-map.test.ts#should make GitHub's anchors from headings`",
          '`test/unit/operations/no-such.test.ts#should start`',
          '`test/unit/operations/risk.test.ts#should start only READ operations`',
        ].join('\n'),
      ),
    ).toEqual([
      null,
      null,
      null,
      'line 4: test/unit/operations/no-such.test.ts does not exist',
      'line 5: test/unit/operations/risk.test.ts has no test named "should start only READ operations"',
    ]);
  });

  it("should make GitHub's anchors from headings", () => {
    expect(anchorOf("How it behaves, and where we deliberately differ from the platform's pages")).toBe(
      'how-it-behaves-and-where-we-deliberately-differ-from-the-platforms-pages',
    );
    expect(anchorOf('Known doubles')).toBe('known-doubles');
  });
});
