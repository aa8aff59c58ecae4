/**
 * Tool search (issue 31, item 5): `npm run bench -- search`.
 *
 * Over Stripe, Twilio (three descriptions), Slack and Kubernetes from the corpus plus the GitHub-like
 * MCP fixture, connected together (1,000+ tools; test/support/tool-search-corpus.ts), it prints:
 * - recall@1, recall@5 and MRR over the labelled queries (bench/search/queries.json), for the
 *   ranking and for a baseline measured in the same run (count of query words found in the name
 *   and description, no BM25), and with each part of the ranking turned off in turn;
 * - build time over all the tools, search p50 and p99 (and the same for the baseline scan);
 * - the declared-schema bytes of a turn's first request with every tool declared vs with search
 *   (built-ins + search_tools + finish_turn + N up-front tools), GENERIC and OPENAI.
 * Goals (issue 31): recall@5 ≥ 0.9, search p50 < 5 ms, ≥ 85 % fewer bytes.
 * When the corpus is absent it says so and runs on what is vendored.
 */
import { loadConfig } from '../src/config.js';
import { declareTools, type DeclaredTool, type DeclaredToolList } from '../src/turns/declare.js';
import { compileToolList, MAX_TOOLS } from '../src/turns/dialects/declarations.js';
import { type ToolDialect } from '../src/turns/dialects/dialect.js';
import { searchToolsTool } from '../src/turns/search/declare-search.js';
import { ToolIndex, type RankingTuning } from '../src/turns/search/index.js';
import {
  loadQueries,
  loadToolWorld,
  measureQuality,
  SHARED_CORPUS,
  type Quality,
  type ToolWorld,
} from '../test/support/tool-search-corpus.js';
import { fmt, percentile } from './support.js';

const BUILT_INS: DeclaredTool[] = [
  {
    name: 'web_search',
    description: 'Searches the web.',
    inputSchema: {
      type: 'object',
      properties: { query: { type: 'string', minLength: 1 } },
      required: ['query'],
    },
  },
];

/** Tools declared up front with search on (the operator's "always declare" ones). */
const UP_FRONT = 5;

/** The baseline ranking: how many query words occur in a tool's name and description. */
function baselineSearch(world: ToolWorld): (query: string, limit: number) => string[] {
  const texts = world.searchable.map((t) => ({
    id: t.id,
    name: t.name,
    text: `${t.name} ${t.description ?? ''}`.toLowerCase().replace(/_/g, ' '),
  }));
  return (query, limit) => {
    const words = query
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      .filter((w) => w.length > 2);
    const scored: { id: string; name: string; score: number }[] = [];
    for (const t of texts) {
      let score = 0;
      for (const w of words) if (t.text.includes(w)) score++;
      if (score > 0) scored.push({ id: t.id, name: t.name, score });
    }
    scored.sort((a, b) => b.score - a.score || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return scored.slice(0, limit).map((s) => s.id);
  };
}

function line(label: string, q: Quality): string {
  return `${label.padEnd(28)} recall@1 ${fmt(q.recallAt1, 3)}  recall@5 ${fmt(q.recallAt5, 3)}  MRR ${fmt(q.mrr, 3)}`;
}

function timeSearches(queries: readonly string[], search: (q: string) => unknown, rounds: number): number[] {
  const times: number[] = [];
  for (let r = 0; r < rounds; r++) {
    for (const q of queries) {
      const t0 = performance.now();
      search(q);
      times.push(performance.now() - t0);
    }
  }
  return times;
}

/** Bytes of the declarations `dialect` sends for `list`; over a tool cap, the sum of capped slices. */
function declaredBytes(
  dialect: ToolDialect,
  list: DeclaredToolList,
): { bytes: number; tools: number; fits: boolean } {
  const cap = MAX_TOOLS[dialect];
  const connectionTools = list.tools.filter((t) => Object.hasOwn(list.map, t.name));
  const fits = cap === null || list.tools.length <= cap;
  const slice = fits ? list.tools.length : cap - BUILT_INS.length - 2;
  let bytes = 0;
  let tools = 0;
  for (let i = 0; i < Math.max(1, connectionTools.length); i += fits ? Infinity : slice) {
    const part = fits
      ? list
      : { tools: [...BUILT_INS, ...connectionTools.slice(i, i + slice)], map: list.map };
    const compiled = compileToolList(dialect, part, (id) => id);
    // Built-ins and finish_turn once, however many slices.
    const decls = compiled.tools
      .filter((t) => i === 0 || Object.hasOwn(list.map, t.name))
      .map((t) => t.declaration);
    bytes += Buffer.byteLength(JSON.stringify(decls));
    tools += decls.length;
  }
  return { bytes, tools, fits };
}

export async function run(): Promise<void> {
  const world = loadToolWorld();
  if (!world.corpus) {
    console.log(
      `corpus not found (${SHARED_CORPUS}; set OPENAPI_CORPUS): running on the vendored descriptions only` +
        (world.missing.length > 0 ? `, without ${world.missing.join(', ')}` : ''),
    );
  }
  const { queries, unknownKeys } = loadQueries(world);
  const perConnection = new Map<string, number>();
  for (const op of world.operations)
    perConnection.set(op.connectionSlug, (perConnection.get(op.connectionSlug) ?? 0) + 1);
  console.log(
    `${world.operations.length} tools (${[...perConnection].map(([s, n]) => `${s} ${n}`).join(', ')}); ` +
      `${queries.length} labelled queries` +
      (unknownKeys.length > 0
        ? ` (${unknownKeys.length} keys not in this world: their queries skipped)`
        : ''),
  );

  // Build time: median of several builds over all tools.
  const builds: number[] = [];
  let index = ToolIndex.build(world.searchable);
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    index = ToolIndex.build(world.searchable);
    builds.push(performance.now() - t0);
  }
  console.log(`build over ${index.size} tools: median ${fmt(percentile(builds, 50), 1)} ms (5 builds)`);

  // Quality.
  const ranked = (ix: ToolIndex) => (q: string, limit: number) => ix.search(q, { limit }).map((h) => h.id);
  const full = measureQuality(world, queries, ranked(index));
  const baseline = measureQuality(world, queries, baselineSearch(world));
  console.log(line('ranking (BM25, all parts)', full));
  console.log(line('baseline (word count)', baseline));
  const parts: (keyof RankingTuning)[] = ['stem', 'synonyms', 'boosts', 'prefix', 'fuzzy'];
  for (const part of parts) {
    const q = measureQuality(world, queries, ranked(ToolIndex.build(world.searchable, { [part]: false })));
    console.log(line(`  without ${part}`, q));
  }
  const noParams = ToolIndex.build(world.searchable.map((t) => ({ ...t, params: [] })));
  console.log(line('  without parameters', measureQuality(world, queries, ranked(noParams))));
  const goal = full.recallAt5 >= 0.9 ? 'meets' : 'MISSES';
  console.log(`recall@5 ${fmt(full.recallAt5, 3)} ${goal} the goal of 0.9`);
  if (process.argv.includes('--misses'))
    for (const m of full.misses) console.log(`  miss: ${JSON.stringify(m)}`);

  // Latency.
  const texts = queries.map((q) => q.query);
  timeSearches(texts, (q) => index.search(q, { limit: 5 }), 1); // warm up
  const times = timeSearches(texts, (q) => index.search(q, { limit: 5 }), 5);
  const base = baselineSearch(world);
  const baseTimes = timeSearches(texts, (q) => base(q, 5), 5);
  const p50 = percentile(times, 50);
  console.log(
    `search over ${index.size} tools: p50 ${fmt(p50, 3)} ms, p99 ${fmt(percentile(times, 99), 3)} ms ` +
      `(baseline scan p50 ${fmt(percentile(baseTimes, 50), 3)} ms, ratio ${fmt(p50 / percentile(baseTimes, 50))}); ` +
      `${p50 < 5 ? 'meets' : 'MISSES'} the goal of p50 < 5 ms`,
  );

  // Declared bytes of the first request.
  const all = declareTools({ builtIns: BUILT_INS, operations: world.operations });
  // search_tools is reserved (a built-in may not take its name): it goes in after the built-ins, as
  // the service's own declaration with this deployment's defaults, the way a search turn lists it.
  const upFront = declareTools({ builtIns: BUILT_INS, operations: world.operations.slice(0, UP_FRONT) });
  const searchTool = searchToolsTool(loadConfig({}).toolSearch);
  const withSearch: DeclaredToolList = {
    tools: [
      ...upFront.tools.slice(0, BUILT_INS.length),
      searchTool,
      ...upFront.tools.slice(BUILT_INS.length),
    ],
    map: upFront.map,
  };
  for (const dialect of ['GENERIC', 'OPENAI'] as const) {
    const a = declaredBytes(dialect, all);
    const s = declaredBytes(dialect, withSearch);
    const saved = 1 - s.bytes / a.bytes;
    console.log(
      `${dialect.padEnd(8)} first request: all tools ${a.bytes.toLocaleString('en')} B (${a.tools} tools` +
        `${a.fits ? '' : `, over the ${MAX_TOOLS[dialect]}-tool cap: cannot be sent`}), with search ` +
        `${s.bytes.toLocaleString('en')} B (${s.tools} tools: built-ins, search_tools, ${UP_FRONT} up front, finish_turn); ` +
        `${fmt(saved * 100, 1)} % fewer, ${saved >= 0.85 ? 'meets' : 'MISSES'} the goal of 85 %`,
    );
  }
}
