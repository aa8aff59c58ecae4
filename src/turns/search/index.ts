/**
 * Tool search (issue 31, item 3), pure: a BM25 ranking (MiniSearch's BM25+) over each tool's
 * declared name, title, description, parameter names and descriptions, and its connection's name.
 * No I/O, no network, no model call; built once per tool list and then searched many times.
 *
 * Terms: NFKD-folded, lower case, split on anything that is not a letter or digit and on camelCase
 * (`stripe__post_refunds` → `stripe post refunds`), common English words dropped, then lightly
 * stemmed (plural and `-ing`/`-ed` endings) so `refund` finds `refunds`, and put in a synonym group
 * (`remove` is indexed and searched as `delete`). Prefix matching applies to query terms
 * of {@link PREFIX_MIN_LENGTH}+ characters, fuzzy matching to terms of {@link FUZZY_MIN_LENGTH}+.
 *
 * Deterministic: the index is built from the tools in id order, and hits with equal scores are
 * ordered by name, then id, so the same query on the same tool list gives the same order whatever
 * order the list came in.
 *
 * Bounded: a query is cut to {@link MAX_QUERY_LENGTH} characters and {@link MAX_QUERY_TERMS} terms,
 * `limit` to 1…{@link MAX_SEARCH_LIMIT}; each indexed field is cut to {@link MAX_FIELD_LENGTH}
 * characters and {@link searchableParams} stops at {@link MAX_PARAMS} parameters, so a hostile tool
 * description or query costs at most a bounded amount of work. NUL and other control characters are
 * separators like any other punctuation.
 */
import MiniSearch, { type SearchResult } from 'minisearch';
import type { JsonObject, JsonValue } from '../../operations/types.js';
import { isObject } from '../../operations/types.js';

export interface SearchableTool {
  /** Operation id (unique). */
  id: string;
  /** The tool's declared GENERIC name, e.g. `stripe__post_refunds`. */
  name: string;
  title?: string | null;
  description: string | null;
  params: readonly { name: string; description?: string | null }[];
  /** The connection's name or slug. */
  connection: string;
}

/** One hit: `matched` are the words of the query that matched it (lower case, sorted): why it matched. */
export interface SearchHit {
  id: string;
  score: number;
  matched: string[];
}

/** Longest query read, in UTF-16 code units; the rest is ignored. */
export const MAX_QUERY_LENGTH = 512;
/** Most terms read from one query (after dropping common words); the rest are ignored. */
export const MAX_QUERY_TERMS = 24;
/** Most hits one search returns, whatever `limit` asks for. */
export const MAX_SEARCH_LIMIT = 50;
/** Longest text indexed from one field of one tool, in UTF-16 code units. */
export const MAX_FIELD_LENGTH = 4_000;
/**
 * Longest text indexed from one tool's parameters: names first, then descriptions, cut. Measured:
 * parameter text is most of the corpus and most of the build time, and past this it adds no recall.
 */
export const MAX_PARAMS_TEXT_LENGTH = 1_500;
/** Most parameters {@link searchableParams} reads from one input schema. */
export const MAX_PARAMS = 200;
/** Deepest nesting {@link searchableParams} walks into (properties, items, combinators). */
export const MAX_PARAM_DEPTH = 4;
/** Longest parameter description kept by {@link searchableParams}. */
export const MAX_PARAM_DESCRIPTION_LENGTH = 300;

/** Query terms at least this long also match longer indexed terms they begin. */
export const PREFIX_MIN_LENGTH = 4;
/** Query terms at least this long also match indexed terms one edit away. */
export const FUZZY_MIN_LENGTH = 6;

/** Field weights, relative to the description's 1. */
export const FIELD_BOOSTS = {
  name: 3,
  title: 2,
  description: 1,
  params: 0.6,
  connection: 1.5,
} as const;

/**
 * Parts of the ranking that can be turned off, to measure what each one buys (bench/search). The
 * service always uses the defaults: every part on.
 */
export interface RankingTuning {
  stem: boolean;
  synonyms: boolean;
  boosts: boolean;
  prefix: boolean;
  fuzzy: boolean;
}
const FULL_RANKING: RankingTuning = { stem: true, synonyms: true, boosts: true, prefix: true, fuzzy: true };

type Field = keyof typeof FIELD_BOOSTS;
const FIELDS = Object.keys(FIELD_BOOSTS) as Field[];

interface Doc {
  id: string;
  name: string;
  title: string;
  description: string;
  params: string;
  connection: string;
}

const STOP_WORDS = new Set(
  (
    'a an and any are as at be by can do does for from get give has have how i in into is it its ' +
    'let my of on or our please show so some that the their them then there these this those to ' +
    'up us want was we what when where which who will with would you your'
  ).split(' '),
);

/**
 * Synonyms: each word of a group is indexed and searched as the group's first word, so `remove`
 * finds `delete` and a tool that says both counts the word once. Kept short and generic (the verbs
 * of the CRUD family, a few nouns), and measured on the labelled set in bench/search.
 */
const SYNONYM_GROUPS: readonly (readonly string[])[] = [
  ['delete', 'remove', 'erase', 'del'],
  ['create', 'add', 'new', 'make', 'post'],
  ['update', 'patch', 'modify', 'edit', 'change', 'replace'],
  ['get', 'fetch', 'retrieve', 'read', 'show', 'look', 'info'],
  ['message', 'text', 'sms', 'msg'],
  ['repository', 'repo'],
  ['pull', 'pr'],
  ['channel', 'conversation'],
  ['invoice', 'bill'],
  ['subscription', 'subscribe'],
  ['issue', 'bug', 'ticket'],
  ['all', 'every', 'everyone', 'everything'],
  ['link', 'permalink', 'url'],
  ['presence', 'online', 'away'],
  ['reminder', 'remind'],
  ['snooze', 'pause'],
  ['exec', 'execute', 'command'],
];
const CANONICAL = new Map<string, string>();
for (const group of SYNONYM_GROUPS) for (const word of group) CANONICAL.set(stem(word), stem(group[0]!));

/** Lower-cased, folded terms of `text`, split on camelCase and anything not a letter or digit. */
function splitTerms(text: string): string[] {
  // Printable ASCII (nearly all text) takes the fast path; the other folds `é` to `e` first.
  const ascii = !/[^ -~\t\n\r]/.test(text);
  const folded = ascii
    ? text.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    : text
        .normalize('NFKD')
        .replace(/\p{M}+/gu, '')
        .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2')
        .replace(/(\p{Lu}+)(\p{Lu}\p{Ll})/gu, '$1 $2');
  return folded
    .toLowerCase()
    .split(ascii ? /[^a-z0-9]+/ : /[^\p{L}\p{N}]+/u)
    .filter((t) => t.length > 0 && t.length <= 40);
}

/**
 * A light English stemmer: plural and `-ing` / `-ed` endings only, enough that `refund`, `refunds`
 * and `refunded` meet, without the surprises of a full Porter stemmer on API words.
 */
export function stem(term: string): string {
  if (term.length <= 3 || /\d/.test(term)) return term;
  if (term.endsWith('ies') && term.length > 4) return `${term.slice(0, -3)}y`;
  if (/(ss|us|is)$/.test(term)) return term;
  if (/(ches|shes|xes|sses|zes)$/.test(term)) return term.slice(0, -2);
  if (term.endsWith('s')) return term.slice(0, -1);
  if (term.endsWith('ing') && term.length > 5) return undouble(term.slice(0, -3));
  if (term.endsWith('ed') && term.length > 4) return undouble(term.slice(0, -2));
  return term;
}

function undouble(term: string): string {
  return /([b-df-hj-np-tv-z])\1$/.test(term) && !/(ll|ss)$/.test(term) ? term.slice(0, -1) : term;
}

/** One indexed or query term: `null` for a common word, else stemmed and put in its synonym group. */
function processTerm(term: string, tuning: RankingTuning): string | null {
  if (STOP_WORDS.has(term)) return null;
  const s = tuning.stem ? stem(term) : term;
  return tuning.synonyms ? (CANONICAL.get(s) ?? s) : s;
}

function cut(text: string | null | undefined): string {
  return typeof text === 'string' ? text.slice(0, MAX_FIELD_LENGTH) : '';
}

function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export class ToolIndex {
  readonly size: number;
  readonly #search: MiniSearch<Doc>;
  readonly #names: Map<string, string>;
  readonly #tuning: RankingTuning;

  private constructor(search: MiniSearch<Doc>, names: Map<string, string>, tuning: RankingTuning) {
    this.#search = search;
    this.#names = names;
    this.#tuning = tuning;
    this.size = names.size;
  }

  /**
   * Builds the index; a tool whose id repeats an earlier one (in id order) is left out. `tuning`
   * is for measurements only.
   */
  static build(tools: readonly SearchableTool[], tuning: Partial<RankingTuning> = {}): ToolIndex {
    const t: RankingTuning = { ...FULL_RANKING, ...tuning };
    // The vocabulary is small next to the text: each distinct word is processed once per build.
    const processed = new Map<string, string | null>();
    const search = new MiniSearch<Doc>({
      fields: FIELDS,
      storeFields: [],
      tokenize: (text) => splitTerms(text),
      processTerm: (term) => {
        let out = processed.get(term);
        if (out === undefined) {
          out = processTerm(term, t);
          processed.set(term, out);
        }
        return out;
      },
    });
    const names = new Map<string, string>();
    const ordered = [...tools].sort((a, b) => compareCodeUnits(a.id, b.id));
    const docs: Doc[] = [];
    for (const tool of ordered) {
      if (names.has(tool.id)) continue;
      names.set(tool.id, tool.name);
      const taken = tool.params.slice(0, MAX_PARAMS);
      const params = [
        ...taken.map((p) => p.name.slice(0, 100)),
        ...taken.map((p) => (p.description ?? '').slice(0, 200)),
      ]
        .join(' ')
        .slice(0, MAX_PARAMS_TEXT_LENGTH);
      docs.push({
        id: tool.id,
        name: cut(tool.name),
        title: cut(tool.title),
        description: cut(tool.description),
        params,
        connection: cut(tool.connection),
      });
    }
    search.addAll(docs);
    return new ToolIndex(search, names, t);
  }

  /**
   * The best tools for `query`, best first, at most `limit` (1…{@link MAX_SEARCH_LIMIT}), only
   * those `allow` passes when given. An empty or all-common-words query finds nothing.
   */
  search(query: string, opts: { limit: number; allow?: (id: string) => boolean }): SearchHit[] {
    const limit = Math.max(1, Math.min(MAX_SEARCH_LIMIT, Math.floor(Number(opts.limit) || 1)));
    const text = typeof query === 'string' ? query.slice(0, MAX_QUERY_LENGTH) : '';
    const terms = splitTerms(text).filter((t) => !STOP_WORDS.has(t));
    const unique = [...new Set(terms)].slice(0, MAX_QUERY_TERMS);
    if (unique.length === 0 || this.size === 0) return [];
    const allow = opts.allow;
    const tuning = this.#tuning;
    const results = this.#search.search(unique.join(' '), {
      ...(tuning.boosts ? { boost: FIELD_BOOSTS } : {}),
      combineWith: 'OR',
      tokenize: (t) => t.split(' '),
      processTerm: (term) => processTerm(term, tuning),
      prefix: (term) => tuning.prefix && term.length >= PREFIX_MIN_LENGTH,
      fuzzy: (term) => (tuning.fuzzy && term.length >= FUZZY_MIN_LENGTH ? 1 : false),
      ...(allow ? { filter: (r: SearchResult) => allow(String(r.id)) } : {}),
    });
    // Matched terms are reported as the customer's own words (`remove`, not its group's `delete`).
    const wordsOf = new Map<string, string[]>();
    for (const word of unique) {
      const term = processTerm(word, tuning);
      if (term !== null) wordsOf.set(term, [...(wordsOf.get(term) ?? []), word]);
    }
    const hits = results.map((r) => ({
      id: String(r.id),
      score: r.score,
      matched: [...new Set(r.queryTerms.flatMap((t) => wordsOf.get(t) ?? [t]))].sort(compareCodeUnits),
    }));
    hits.sort(
      (a, b) =>
        b.score - a.score ||
        compareCodeUnits(this.#names.get(a.id) ?? '', this.#names.get(b.id) ?? '') ||
        compareCodeUnits(a.id, b.id),
    );
    return hits.slice(0, limit);
  }
}

/**
 * The parameter names and descriptions of an input schema worth searching: top-level properties,
 * then nested ones (object properties, array items, `anyOf`/`oneOf`/`allOf` branches) breadth
 * first, at most {@link MAX_PARAMS} of them, {@link MAX_PARAM_DEPTH} levels deep, descriptions cut
 * to {@link MAX_PARAM_DESCRIPTION_LENGTH}. A name seen twice is kept once.
 */
export function searchableParams(inputSchema: JsonObject): { name: string; description?: string | null }[] {
  const out: { name: string; description?: string | null }[] = [];
  const seen = new Set<string>();
  let frontier: { node: JsonValue | undefined; depth: number }[] = [{ node: inputSchema, depth: 0 }];
  let visited = 0;
  while (frontier.length > 0 && out.length < MAX_PARAMS) {
    const next: typeof frontier = [];
    for (const { node, depth } of frontier) {
      if (!isObject(node) || visited++ > MAX_PARAMS * 4) continue;
      const children: JsonValue[] = [];
      if (isObject(node.properties)) {
        for (const [name, sub] of Object.entries(node.properties)) {
          if (out.length >= MAX_PARAMS) break;
          if (!seen.has(name)) {
            seen.add(name);
            const description =
              isObject(sub) && typeof sub.description === 'string'
                ? sub.description.slice(0, MAX_PARAM_DESCRIPTION_LENGTH)
                : null;
            out.push(description ? { name, description } : { name });
          }
          children.push(sub);
        }
      }
      if (node.items !== undefined) children.push(node.items);
      for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
        const list = node[key];
        if (Array.isArray(list)) children.push(...list);
      }
      if (depth + 1 <= MAX_PARAM_DEPTH) for (const c of children) next.push({ node: c, depth: depth + 1 });
    }
    frontier = next.slice(0, MAX_PARAMS * 4);
  }
  return out;
}
