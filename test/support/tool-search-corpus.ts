/**
 * The many-tools world of the tool-search bench and test (issue 31, item 5): Stripe, Twilio, Slack
 * and Kubernetes descriptions from the corpus beside the checkout, plus a GitHub-like MCP tool list
 * (test/fixtures/tool-search/github-tools.json), connected together. Descriptions are turned into
 * operations by the service's own pure pipeline (parseDescription, convertDescription), keyed by
 * operationKey and named by declareTools, so keys and names are what the service really declares.
 * When the corpus is absent, `corpus` is false and only what is vendored is loaded.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { convertDescription } from '../../src/openapi/convert.js';
import { parseDescription } from '../../src/openapi/load.js';
import { operationKey } from '../../src/operations/keys.js';
import type { JsonObject } from '../../src/operations/types.js';
import { declareTools, type DeclarableOperation, type DeclaredToolList } from '../../src/turns/declare.js';
import { searchableParams, type SearchableTool } from '../../src/turns/search/index.js';

const repoRoot = resolve(fileURLToPath(import.meta.url), '../../..');
/**
 * The corpus: `$OPENAPI_CORPUS` when set (only there: point it at an empty folder to run without),
 * else `shared/corpus/openapi` beside the checkout, or one level further up for a worktree under a
 * folder of worktrees.
 */
export const SHARED_CORPUS =
  process.env.OPENAPI_CORPUS ??
  [resolve(repoRoot, '../shared/corpus/openapi'), resolve(repoRoot, '../../shared/corpus/openapi')].find(
    (dir) => existsSync(join(dir, 'MANIFEST.tsv')),
  ) ??
  resolve(repoRoot, '../shared/corpus/openapi');
const VENDORED = resolve(repoRoot, 'test/fixtures/openapi');
const GITHUB_TOOLS = resolve(repoRoot, 'test/fixtures/tool-search/github-tools.json');

/** One connection per description file, as the service makes them; the vendored fixtures hold some. */
export const CONNECTIONS: readonly { slug: string; files: readonly string[] }[] = [
  { slug: 'stripe', files: ['stripe-spec3-2023-09.yaml'] },
  { slug: 'twilio', files: ['twilio-api-v2010.json'] },
  { slug: 'twilio_messaging', files: ['twilio-messaging-v1.yaml'] },
  { slug: 'twilio_content', files: ['twilio-content-v1.json'] },
  { slug: 'slack', files: ['slack-web-openapi-v2.json'] },
  { slug: 'kubernetes', files: ['kubernetes-swagger-v1.9.12.json'] },
];

export interface WorldOperation extends DeclarableOperation {
  key: string;
  title: string | null;
}

export interface ToolWorld {
  /** True when the full corpus was found; false when only vendored descriptions were loaded. */
  corpus: boolean;
  operations: WorldOperation[];
  /** Operation key → operation id. */
  byKey: Map<string, string>;
  list: DeclaredToolList;
  searchable: SearchableTool[];
  /** Files that were wanted and not found. */
  missing: string[];
}

interface McpTool {
  name: string;
  title?: string;
  description: string;
  inputSchema: JsonObject;
}

export function loadToolWorld(): ToolWorld {
  const corpus = existsSync(join(SHARED_CORPUS, 'MANIFEST.tsv'));
  const operations: WorldOperation[] = [];
  const missing: string[] = [];
  const add = (
    slug: string,
    name: string,
    title: string | null,
    description: string | null,
    inputSchema: JsonObject,
  ) => {
    const key = operationKey(slug, name);
    operations.push({
      operationId: `op-${operations.length.toString().padStart(5, '0')}`,
      connectionSlug: slug,
      name,
      title,
      description,
      inputSchema,
      key,
    });
  };
  for (const { slug, files } of CONNECTIONS) {
    for (const file of files) {
      const path = [join(corpus ? SHARED_CORPUS : VENDORED, file), join(VENDORED, file)].find((p) =>
        existsSync(p),
      );
      if (path === undefined) {
        missing.push(file);
        continue;
      }
      const { document } = parseDescription(readFileSync(path, 'utf8'), { maxBytes: 64 * 1024 * 1024 });
      const converted = convertDescription(document, `https://descriptions.example.com/${file}`, null);
      for (const op of converted.operations) add(slug, op.name, op.title, op.description, op.inputSchema);
    }
  }
  const github = JSON.parse(readFileSync(GITHUB_TOOLS, 'utf8')) as McpTool[];
  for (const t of github) add('github', t.name, t.title ?? null, t.description, t.inputSchema);

  const byKey = new Map<string, string>();
  for (const op of operations) if (!byKey.has(op.key)) byKey.set(op.key, op.operationId);
  const list = declareTools({ builtIns: [], operations });
  const nameOf = new Map(Object.entries(list.map).map(([name, id]) => [id, name]));
  const searchable = operations.map((op): SearchableTool => ({
    id: op.operationId,
    name: nameOf.get(op.operationId) ?? op.name,
    title: op.title,
    description: op.description,
    params: searchableParams(op.inputSchema),
    connection: op.connectionSlug,
  }));
  return { corpus, operations, byKey, list, searchable, missing };
}

export interface LabelledQuery {
  query: string;
  /** Operation keys, any of which answers the query. */
  expect: string[];
}

export const QUERIES_FILE = resolve(repoRoot, 'bench/search/queries.json');

/** The labelled queries whose every key is in `world` (all of them when the corpus is there). */
export function loadQueries(world: ToolWorld): { queries: LabelledQuery[]; unknownKeys: string[] } {
  const all = JSON.parse(readFileSync(QUERIES_FILE, 'utf8')) as LabelledQuery[];
  const unknownKeys = [...new Set(all.flatMap((q) => q.expect).filter((k) => !world.byKey.has(k)))];
  return { queries: all.filter((q) => q.expect.every((k) => world.byKey.has(k))), unknownKeys };
}

export interface Quality {
  queries: number;
  recallAt1: number;
  recallAt5: number;
  mrr: number;
  /** Queries whose answer is not in the first five, with what came first instead. */
  misses: { query: string; expect: string[]; got: string[] }[];
}

/** Recall@1, recall@5 and MRR (over the first 10) of `search` on the labelled queries. */
export function measureQuality(
  world: ToolWorld,
  queries: readonly LabelledQuery[],
  search: (query: string, limit: number) => string[],
): Quality {
  const keyOf = new Map(world.operations.map((op) => [op.operationId, op.key]));
  let at1 = 0;
  let at5 = 0;
  let rr = 0;
  const misses: Quality['misses'] = [];
  for (const q of queries) {
    const got = search(q.query, 10).map((id) => keyOf.get(id) ?? id);
    const rank = got.findIndex((k) => q.expect.includes(k));
    if (rank === 0) at1++;
    if (rank >= 0 && rank < 5) at5++;
    else misses.push({ query: q.query, expect: q.expect, got: got.slice(0, 3) });
    if (rank >= 0) rr += 1 / (rank + 1);
  }
  const n = Math.max(1, queries.length);
  return { queries: queries.length, recallAt1: at1 / n, recallAt5: at5 / n, mrr: rr / n, misses };
}
