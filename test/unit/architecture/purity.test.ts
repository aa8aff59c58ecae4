import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Modules whose header says "(pure)" hold rules, and must stay testable without a database, a
 * network or the GraphQL layer: nothing they import at runtime, directly or through other modules
 * of ours, may be an entity, the ORM, a driver, an HTTP client or the file system. Type-only imports
 * are erased at compile time and do not count.
 */
const SRC = resolve(import.meta.dirname, '../../../src');

const FORBIDDEN_PACKAGES = [
  /^@mikro-orm\//,
  /^pg$/,
  /^undici$/,
  /^type-graphql$/,
  /^node:(http|https|net|tls|fs|fs\/promises|child_process|worker_threads)$/,
];
const FORBIDDEN_MODULES = [/\.entity\.ts$/, /\.resolver\.ts$/, /\/services\.ts$/, /\/app\.ts$/];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

function declaresPure(file: string): boolean {
  const header = /^\/\*\*[\s\S]*?\*\//.exec(readFileSync(file, 'utf8'))?.[0] ?? '';
  return /\(pure\b/.test(header);
}

/** Specifiers a module loads at runtime: `import type`, and imports of types only, are left out. */
export function runtimeImports(text: string): string[] {
  const found: string[] = [];
  const statement = /^(?:import|export)\s+(type\s+)?([\s\S]*?)\s*from\s+'([^']+)';/gm;
  for (const m of text.matchAll(statement)) {
    if (m[1]) continue;
    const clause = m[2]!;
    const names = /\{([\s\S]*)\}/.exec(clause);
    const defaultOrStar = clause
      .replace(/\{[\s\S]*\}/, '')
      .replace(/,/g, '')
      .trim();
    const runtimeNames = names
      ? names[1]!
          .split(',')
          .map((n) => n.trim())
          .filter((n) => n.length > 0 && !n.startsWith('type '))
      : [];
    if (defaultOrStar.length > 0 || runtimeNames.length > 0 || (!names && clause.trim() === '*'))
      found.push(m[3]!);
  }
  for (const m of text.matchAll(/^import\s+'([^']+)';/gm)) found.push(m[1]!);
  return found;
}

function resolveRelative(from: string, specifier: string): string | null {
  const base = resolve(dirname(from), specifier);
  for (const candidate of [base.replace(/\.js$/, '.ts'), `${base}.ts`, join(base, 'index.ts')]) {
    if (existsSync(candidate)) return candidate;
  }
  return null;
}

/** Every forbidden thing reachable from `entry` at runtime, as `a.ts → b.ts → pkg`. */
function impurities(entry: string): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  const visit = (file: string, chain: string[]): void => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const specifier of runtimeImports(readFileSync(file, 'utf8'))) {
      const here = [...chain, relative(SRC, file)];
      if (specifier.startsWith('.')) {
        const target = resolveRelative(file, specifier);
        if (target === null) continue;
        if (FORBIDDEN_MODULES.some((r) => r.test(target))) {
          problems.push([...here, relative(SRC, target)].join(' → '));
          continue;
        }
        visit(target, here);
      } else if (FORBIDDEN_PACKAGES.some((r) => r.test(specifier))) {
        problems.push([...here, specifier].join(' → '));
      }
    }
  };
  visit(entry, []);
  return problems;
}

const pure = sourceFiles(SRC).filter(declaresPure);

describe('pure modules', () => {
  it('are found (the header marker is read)', () => {
    expect(pure.map((f) => relative(SRC, f))).toEqual(
      expect.arrayContaining(['turns/result.ts', 'operations/risk.ts', 'operations/retry.ts', 'limits.ts']),
    );
  });

  it.each(pure.map((f) => [relative(SRC, f), f]))(
    '%s reaches no entity, ORM, driver or network',
    (_, file) => {
      expect(impurities(file)).toEqual([]);
    },
  );

  it('tells a type-only import from a runtime one', () => {
    expect(
      runtimeImports(
        [
          "import type { A } from './a.js';",
          "import { type B } from './b.js';",
          "import { type C, D } from './c.js';",
          "import E from './e.js';",
          "import * as F from './f.js';",
          "export { G } from './g.js';",
          "import './h.js';",
        ].join('\n'),
      ),
    ).toEqual(['./c.js', './e.js', './f.js', './g.js', './h.js']);
  });
});
