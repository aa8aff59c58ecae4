/**
 * `npm run bench -- <name>` runs bench/<name>.bench.ts; with no name, all of them in turn.
 * Every bench prints ratios against a baseline measured in the same run: these machines are noisy.
 */
import { readdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const here = dirname(fileURLToPath(import.meta.url));
const available = (await readdir(here))
  .filter((f) => f.endsWith('.bench.ts'))
  .map((f) => f.slice(0, -'.bench.ts'.length));
const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const names = wanted.length > 0 ? wanted : available;
for (const name of names) {
  if (!available.includes(name)) {
    console.error(`unknown bench "${name}"; available: ${available.join(', ')}`);
    process.exit(2);
  }
}
for (const name of names) {
  console.log(`\n=== bench: ${name}`);
  const mod = (await import(join(here, `${name}.bench.ts`))) as { run: () => Promise<void> };
  await mod.run();
}
process.exit(0);
