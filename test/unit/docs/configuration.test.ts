/**
 * Every environment variable `src/config.ts` reads has its row: in README's configuration table, or,
 * for a limit on what one caller may send, in the table of docs/limits.md. A row for a variable the
 * service no longer reads fails too, so the tables stay the service's own.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../src/project-root.js';

const read = (path: string): string => readFileSync(join(PROJECT_ROOT, path), 'utf8');

/** The variables a config source reads: `env.NAME`, `env['NAME']`, or a reader given `'NAME'`. */
export function variablesReadBy(source: string): Set<string> {
  const names = new Set<string>();
  for (const match of source.matchAll(/\benv(?:\.|\[')([A-Z][A-Z0-9_]+)/g)) names.add(match[1] ?? '');
  for (const match of source.matchAll(/\(\s*env,\s*'([A-Z][A-Z0-9_]+)'/g)) names.add(match[1] ?? '');
  return names;
}

/** The variables named in the given column of a Markdown table's rows (backticked, upper case). */
export function variablesInColumn(markdown: string, column: number): Set<string> {
  const names = new Set<string>();
  for (const line of markdown.split('\n')) {
    if (!line.startsWith('|')) continue;
    const cell = line.split('|')[column + 1] ?? '';
    for (const match of cell.matchAll(/`([A-Z][A-Z0-9_]+)`/g)) names.add(match[1] ?? '');
  }
  return names;
}

/** README's configuration section: from its heading to the next. */
function configurationSection(readme: string): string {
  return readme.split('\n## Configuration\n')[1]?.split('\n## ')[0] ?? '';
}

describe('the configuration tables', () => {
  const readByConfig = variablesReadBy(read('src/config.ts'));
  const inReadme = variablesInColumn(configurationSection(read('README.md')), 0);
  const inLimits = variablesInColumn(read('docs/limits.md'), 2);

  it('should give every variable src/config.ts reads a row', () => {
    expect(readByConfig.size).toBeGreaterThan(50);
    expect([...readByConfig].filter((name) => !inReadme.has(name) && !inLimits.has(name))).toEqual([]);
  });

  it('should have no row for a variable src/config.ts does not read', () => {
    expect([...inReadme, ...inLimits].filter((name) => !readByConfig.has(name))).toEqual([]);
  });
});

describe('the configuration checker', () => {
  it('should find the variables of every reader form, and only those', () => {
    const source =
      "int(env, 'PORT', 4000); int(\n  env,\n  'SHUTDOWN_GRACE_MS',\n); env.HOST ?? ''; env['DATA_DIR']; const NOT_ONE = 'X';";
    expect([...variablesReadBy(source)].sort()).toEqual(['DATA_DIR', 'HOST', 'PORT', 'SHUTDOWN_GRACE_MS']);
  });

  it('should read only the given column', () => {
    const table = '| Variable | Meaning |\n| --- | --- |\n| `PORT` | see `HOST` |\n';
    expect([...variablesInColumn(table, 0)]).toEqual(['PORT']);
  });
});
