/**
 * OpenAPI conversion time per corpus file, against `@apidevtools/swagger-parser`'s `dereference`
 * of the same file, measured in the same run and interleaved so that machine noise hits both.
 *
 * Both sides start from the file on disk: ours reads it, parses it (`parseDescription`) and converts
 * it (`convertDescription`); the parser reads, parses and dereferences it. Goals: ratio ≤ 1.0 on the
 * large files, and the 5 MB description in under 1 s.
 *
 * Each run starts after a full garbage collection, so that neither side pays for the other's
 * garbage, and the two sides alternate which goes first. Wall-clock and CPU-time medians are both
 * printed: on a shared 2-core machine the CPU time is the steadier of the two.
 * `OPENAPI_BENCH_FILES=<text>` limits the run to the files whose name holds that text.
 *
 * Last, two hostile descriptions (test/support/hostile-descriptions.ts), each beside the petstore
 * fixture parsed and converted in the same run: the alias bomb, refused by the parser, and a schema
 * whose 64 properties each refer back to it, bounded by the converter. Neither may cost more than
 * a small multiple of an ordinary description.
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import SwaggerParser from '@apidevtools/swagger-parser';
import { isAppError } from '../src/errors.js';
import { convertDescription } from '../src/openapi/convert.js';
import { parseDescription } from '../src/openapi/load.js';
import { aliasBombYaml, wideSelfReference } from '../test/support/hostile-descriptions.js';

const CORPUS_DIR = resolve(fileURLToPath(import.meta.url), '../../../shared/corpus/openapi');
/** Files at least this large are "large" for the ratio goal. */
const LARGE_FILE_BYTES = 1_000_000;
/** Unmeasured runs per side first, so that both are compiled by the JIT before timing. */
const WARMUP_RUNS = 2;
/** Measured runs per side: at least MIN_RUNS, then more while the budget lasts. */
const MIN_RUNS = 5;
const MAX_RUNS = 20;
const TIME_BUDGET_MS = 3_000; // per file

// `npm run bench` starts node without --expose-gc; this is the documented way to reach gc() anyway.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** Medians in milliseconds: wall clock, and CPU time of the process. */
interface Timing {
  wall: number;
  cpu: number;
}

interface Row {
  file: string;
  bytes: number;
  ours: Timing;
  theirs: Timing;
  outcome: string;
}

async function ours(path: string, file: string): Promise<string> {
  const text = await readFile(path, 'utf8');
  try {
    const { document } = parseDescription(text);
    const result = convertDescription(document, `https://descriptions.example.com/${file}`, null);
    return `${result.operations.length} ops, ${result.skipped.length} skipped`;
  } catch (error) {
    if (isAppError(error)) return `refused: ${error.code}`;
    throw error;
  }
}

async function theirs(path: string): Promise<void> {
  // External references (Azure's ./examples files) are not in the corpus; the converter ignores them too.
  await SwaggerParser.dereference(path, { resolve: { external: false } });
}

async function time(run: () => Promise<unknown>): Promise<Timing> {
  collectGarbage();
  const cpu = process.cpuUsage();
  const start = performance.now();
  await run();
  const wall = performance.now() - start;
  const used = process.cpuUsage(cpu);
  return { wall, cpu: (used.user + used.system) / 1000 };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

function summary(runs: Timing[]): Timing {
  return { wall: median(runs.map((r) => r.wall)), cpu: median(runs.map((r) => r.cpu)) };
}

async function measure(file: string): Promise<Row> {
  const path = join(CORPUS_DIR, file);
  const bytes = (await readFile(path)).length;
  let outcome = '';
  for (let i = 0; i < WARMUP_RUNS; i++) {
    outcome = await ours(path, file);
    await theirs(path);
  }
  const oursRuns: Timing[] = [];
  const theirsRuns: Timing[] = [];
  const started = performance.now();
  while (
    oursRuns.length < MAX_RUNS &&
    (oursRuns.length < MIN_RUNS || performance.now() - started < TIME_BUDGET_MS)
  ) {
    if (oursRuns.length % 2 === 0) {
      oursRuns.push(await time(() => ours(path, file)));
      theirsRuns.push(await time(() => theirs(path)));
    } else {
      theirsRuns.push(await time(() => theirs(path)));
      oursRuns.push(await time(() => ours(path, file)));
    }
  }
  return { file, bytes, ours: summary(oursRuns), theirs: summary(theirsRuns), outcome };
}

function ratio(row: Row, pick: (t: Timing) => number): string {
  return row.outcome.startsWith('refused') ? '-' : (pick(row.ours) / pick(row.theirs)).toFixed(2);
}

export async function run(): Promise<void> {
  const manifest = await readFile(join(CORPUS_DIR, 'MANIFEST.tsv'), 'utf8');
  const files = manifest
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => line.split('\t')[0] as string)
    // OPENAPI_BENCH_FILES=stripe measures only the files whose name holds that text.
    .filter((file) => file.includes(process.env.OPENAPI_BENCH_FILES ?? ''))
    .sort((a, b) => a.localeCompare(b));
  const header = [
    'file'.padEnd(44),
    'bytes'.padStart(9),
    'ours ms'.padStart(8),
    'parser ms'.padStart(9),
    'ratio'.padStart(6),
    'ours cpu'.padStart(9),
    'parser cpu'.padStart(10),
    'cpu ratio'.padStart(9),
  ];
  console.log(`${header.join(' ')}  result`);
  const rows: Row[] = [];
  for (const file of files) {
    const row = await measure(file);
    rows.push(row);
    const cells = [
      file.padEnd(44),
      String(row.bytes).padStart(9),
      row.ours.wall.toFixed(1).padStart(8),
      row.theirs.wall.toFixed(1).padStart(9),
      ratio(row, (t) => t.wall).padStart(6),
      row.ours.cpu.toFixed(1).padStart(9),
      row.theirs.cpu.toFixed(1).padStart(10),
      ratio(row, (t) => t.cpu).padStart(9),
    ];
    console.log(`${cells.join(' ')}  ${row.outcome}`);
  }

  const large = rows.filter((r) => r.bytes >= LARGE_FILE_BYTES && !r.outcome.startsWith('refused'));
  const worst = (pick: (t: Timing) => number): number =>
    large.reduce((max, r) => Math.max(max, pick(r.ours) / pick(r.theirs)), 0);
  const wall = worst((t) => t.wall);
  const cpu = worst((t) => t.cpu);
  console.log(
    `\nlarge files (≥ ${LARGE_FILE_BYTES} bytes), goal ratio ≤ 1.00: worst wall ratio ${wall.toFixed(2)} ` +
      `${wall <= 1 ? 'MET' : 'MISSED'}, worst cpu ratio ${cpu.toFixed(2)} ${cpu <= 1 ? 'MET' : 'MISSED'}`,
  );
  for (const row of rows.filter((r) => r.bytes > 5_000_000 && !r.outcome.startsWith('refused'))) {
    console.log(
      `${row.file}, goal < 1000 ms: ${row.ours.wall.toFixed(0)} ms wall ` +
        `${row.ours.wall < 1000 ? 'MET' : 'MISSED'} (${row.ours.cpu.toFixed(0)} ms cpu)`,
    );
  }
  await hostile();
}

const HOSTILE_RUNS = 9;

/** Each hostile description beside the petstore fixture, interleaved; medians of wall and CPU time. */
async function hostile(): Promise<void> {
  const petstorePath = resolve(
    fileURLToPath(import.meta.url),
    '../../test/fixtures/openapi/oai-petstore-v3.0.yaml',
  );
  const petstore = async (): Promise<void> => {
    await ours(petstorePath, 'petstore.yaml');
  };
  const bomb = aliasBombYaml();
  const cases: [string, () => Promise<void>][] = [
    [
      'hostile: alias bomb (10^10 strings expanded), refused',
      async () => {
        try {
          parseDescription(bomb);
        } catch (error) {
          if (isAppError(error) && error.code === 'DESCRIPTION_INVALID') return;
          throw error;
        }
        throw new Error('the alias bomb was not refused');
      },
    ],
    [
      'hostile: 64 properties referring back (64^5 unbounded), converted',
      async () => {
        convertDescription(wideSelfReference(), null, null);
      },
    ],
  ];
  console.log('');
  for (const [label, work] of cases) {
    await work();
    await petstore();
    const mine: Timing[] = [];
    const base: Timing[] = [];
    for (let i = 0; i < HOSTILE_RUNS; i++) {
      if (i % 2 === 0) {
        mine.push(await time(work));
        base.push(await time(petstore));
      } else {
        base.push(await time(petstore));
        mine.push(await time(work));
      }
    }
    const m = summary(mine);
    const b = summary(base);
    console.log(
      `${label}: ${m.wall.toFixed(1)} ms wall, ${m.cpu.toFixed(1)} ms cpu; petstore ${b.wall.toFixed(1)} ms wall, ` +
        `${b.cpu.toFixed(1)} ms cpu; ${(m.wall / b.wall).toFixed(1)}x wall, ${(m.cpu / b.cpu).toFixed(1)}x cpu`,
    );
  }
}
