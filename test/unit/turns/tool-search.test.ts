/**
 * The tool-search index (src/turns/search/index.ts, issue 31 items 3 and 5): ranking, determinism,
 * bounds, hostile input, the allow filter, parameter extraction, and the quality bar over the
 * labelled query set (bench/search/queries.json) when the corpus is beside the checkout.
 */
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../../src/operations/types.js';
import {
  MAX_PARAM_DEPTH,
  MAX_PARAMS,
  MAX_QUERY_LENGTH,
  MAX_QUERY_TERMS,
  MAX_SEARCH_LIMIT,
  searchableParams,
  stem,
  ToolIndex,
  type SearchableTool,
} from '../../../src/turns/search/index.js';
import { loadQueries, loadToolWorld, measureQuality } from '../../support/tool-search-corpus.js';

function tool(
  id: string,
  name: string,
  description: string,
  extra: Partial<SearchableTool> = {},
): SearchableTool {
  return { id, name, description, params: [], connection: name.split('__')[0] ?? 'c', ...extra };
}

const TOOLS: SearchableTool[] = [
  tool('op-1', 'stripe__post_refunds', 'Create a refund of a charge.', {
    params: [{ name: 'charge', description: 'The identifier of the charge to refund.' }],
  }),
  tool('op-2', 'stripe__get_customers', 'Returns a list of your customers.'),
  tool('op-3', 'stripe__delete_customers_customer', 'Permanently deletes a customer.'),
  tool('op-4', 'slack__chat_postMessage', 'Sends a message to a channel.', { title: 'Post a message' }),
  tool('op-5', 'slack__conversations_archive', 'Archives a conversation.'),
  tool('op-6', 'github__create_issue', 'Open a new issue in a repository.'),
  tool('op-7', 'kubernetes__list_namespaced_pod', 'list or watch objects of kind Pod'),
];

describe('ToolIndex', () => {
  const index = ToolIndex.build(TOOLS);

  it('should rank the tool that answers a customer-worded query first, saying which words matched', () => {
    const [first] = index.search('refund the last charge of this customer', { limit: 3 });
    expect(first?.id).toBe('op-1');
    expect(first?.matched).toEqual(['charge', 'refund']);
    expect(index.search('list the pods', { limit: 1 })[0]?.id).toBe('op-7');
  });

  it('should split snake case, camelCase and `__` names, and match the connection name', () => {
    expect(index.search('post message', { limit: 1 })[0]?.id).toBe('op-4');
    expect(
      index
        .search('slack', { limit: 5 })
        .map((h) => h.id)
        .sort(),
    ).toEqual(['op-4', 'op-5']);
  });

  it('should stem plurals and apply synonym groups, reporting the words of the query', () => {
    expect(stem('refunds')).toBe('refund');
    expect(stem('policies')).toBe('policy');
    expect(stem('address')).toBe('address');
    const [hit] = index.search('remove a customer', { limit: 1 });
    expect(hit?.id).toBe('op-3');
    expect(hit?.matched).toEqual(['customer', 'remove']);
    expect(index.search('report a bug', { limit: 1 })[0]?.id).toBe('op-6');
  });

  it('should give the same order for the same query on the same tools, whatever order they came in', () => {
    const shuffled = [...TOOLS].reverse();
    const again = ToolIndex.build(shuffled);
    for (const q of ['customer', 'message channel', 'create', 'list', 'refund charge customer']) {
      expect(again.search(q, { limit: 10 })).toEqual(index.search(q, { limit: 10 }));
      expect(index.search(q, { limit: 10 })).toEqual(index.search(q, { limit: 10 }));
    }
  });

  it('should break ties by name, then id', () => {
    const twins = ToolIndex.build([
      tool('b', 'zeta__send_fax', 'Sends a fax.'),
      tool('c', 'alpha__send_fax', 'Sends a fax.'),
      tool('a', 'alpha__send_fax', 'Sends a fax.'),
    ]);
    const hits = twins.search('fax', { limit: 5 });
    // Same text in different connections scores the same apart from the connection field.
    expect(hits.map((h) => h.id)).toEqual(['a', 'c', 'b']);
    expect(hits[0]?.score).toBe(hits[1]?.score);
  });

  it('should keep only the tools allow passes', () => {
    const hits = index.search('customer', { limit: 10, allow: (id) => id !== 'op-2' });
    expect(hits.map((h) => h.id)).not.toContain('op-2');
    expect(hits.map((h) => h.id)).toContain('op-3');
    expect(index.search('customer', { limit: 10, allow: () => false })).toEqual([]);
  });

  it('should bound limit to 1…MAX_SEARCH_LIMIT, and find nothing for an empty or common-word query', () => {
    const many = ToolIndex.build(
      Array.from({ length: 120 }, (_, i) => tool(`id-${i}`, `c__widget_${i}`, 'Returns a widget.')),
    );
    expect(many.size).toBe(120);
    expect(many.search('widget', { limit: 10_000 })).toHaveLength(MAX_SEARCH_LIMIT);
    expect(many.search('widget', { limit: 0 })).toHaveLength(1);
    expect(many.search('widget', { limit: Number.NaN })).toHaveLength(1);
    expect(many.search('widget', { limit: -5 })).toHaveLength(1);
    expect(many.search('', { limit: 5 })).toEqual([]);
    expect(many.search('the of and to', { limit: 5 })).toEqual([]);
  });

  it(`should read only the first ${MAX_QUERY_LENGTH} characters and ${MAX_QUERY_TERMS} terms of a query`, () => {
    expect(index.search(`${' '.repeat(MAX_QUERY_LENGTH)}refund`, { limit: 5 })).toEqual([]);
    const filler = Array.from({ length: MAX_QUERY_TERMS }, (_, i) => `zz${i}`).join(' ');
    expect(index.search(`${filler} refund`, { limit: 5 })).toEqual([]);
    expect(index.search(`refund ${filler}`, { limit: 5 })[0]?.id).toBe('op-1');
  });

  it('should treat NUL and control characters as separators, and take huge input harmlessly', () => {
    expect(index.search('refund\u0000charge', { limit: 1 })[0]?.id).toBe('op-1');
    expect(index.search('\u0000'.repeat(1_000_000), { limit: 5 })).toEqual([]);
    expect(index.search('x'.repeat(5_000_000), { limit: 5 })).toEqual([]);
    expect(index.search('\ud800\udfff\u202e', { limit: 5 })).toEqual([]);
    expect(index.search(null as unknown as string, { limit: 5 })).toEqual([]);
    const hostile = ToolIndex.build([
      tool('h', 'evil__tool\u0000name', `${'spam '.repeat(1_000_000)}payload`, {
        title: '\u0000'.repeat(100_000),
        params: Array.from({ length: 10_000 }, (_, i) => ({
          name: `p${i}`,
          description: 'x'.repeat(10_000),
        })),
      }),
      tool('ok', 'good__refund', 'Refunds.'),
    ]);
    expect(hostile.size).toBe(2);
    // The description is cut before `payload`, so that word was never indexed.
    expect(hostile.search('payload', { limit: 5 })).toEqual([]);
    expect(hostile.search('refund', { limit: 5 })[0]?.id).toBe('ok');
  });

  it('should fold accents and index a repeated id once', () => {
    const folded = ToolIndex.build([
      tool('x', 'cafe__créer_facture', 'Crée une facture.'),
      tool('x', 'cafe__other', 'Another.'),
    ]);
    expect(folded.size).toBe(1);
    expect(folded.search('creer facture', { limit: 1 })[0]?.id).toBe('x');
  });
});

describe('searchableParams', () => {
  it('should list top-level then nested property names with their descriptions', () => {
    const schema: JsonObject = {
      type: 'object',
      properties: {
        customer: { type: 'string', description: 'The customer id.' },
        shipping: {
          type: 'object',
          properties: { address: { type: 'object', properties: { postal_code: { type: 'string' } } } },
        },
        items: {
          type: 'array',
          items: { anyOf: [{ type: 'object', properties: { price: { type: 'string' } } }] },
        },
      },
    };
    expect(searchableParams(schema)).toEqual([
      { name: 'customer', description: 'The customer id.' },
      { name: 'shipping' },
      { name: 'items' },
      { name: 'address' },
      { name: 'postal_code' },
      { name: 'price' },
    ]);
  });

  it(`should stop at ${MAX_PARAMS} parameters and ${MAX_PARAM_DEPTH} levels, whatever the schema`, () => {
    const wide: JsonObject = {
      type: 'object',
      properties: Object.fromEntries(
        Array.from({ length: 5_000 }, (_, i) => [
          `p${i}`,
          { type: 'string', description: 'd'.repeat(5_000) },
        ]),
      ),
    };
    const params = searchableParams(wide);
    expect(params).toHaveLength(MAX_PARAMS);
    for (const p of params) expect((p.description ?? '').length).toBeLessThanOrEqual(300);

    let deep: JsonObject = { type: 'string' };
    for (let i = 0; i < 5_000; i++) deep = { type: 'object', properties: { [`level${i}`]: deep } };
    expect(searchableParams(deep).length).toBeLessThanOrEqual(MAX_PARAM_DEPTH + 1);
    expect(searchableParams({ properties: 'not an object', items: 7 })).toEqual([]);
  });
});

const world = loadToolWorld();

describe.skipIf(!world.corpus)('the labelled query set over the full corpus', () => {
  it('should have 1,000+ tools, 200+ queries, and only keys the service really declares', () => {
    const { queries, unknownKeys } = loadQueries(world);
    expect(world.operations.length).toBeGreaterThanOrEqual(1_000);
    expect(unknownKeys).toEqual([]);
    expect(queries.length).toBeGreaterThanOrEqual(200);
    for (const q of queries) {
      // Written as a customer speaks, not by copying an operation name.
      for (const key of q.expect) expect(q.query).not.toContain(key.split('.').at(-1));
    }
  });

  it('should reach recall@5 ≥ 0.9', { timeout: 120_000 }, () => {
    const { queries } = loadQueries(world);
    const index = ToolIndex.build(world.searchable);
    const quality = measureQuality(world, queries, (q, limit) => index.search(q, { limit }).map((h) => h.id));
    expect(quality.recallAt5, JSON.stringify(quality.misses.slice(0, 5))).toBeGreaterThanOrEqual(0.9);
  });
});

describe.skipIf(world.corpus)('the labelled query set (corpus absent)', () => {
  it('is skipped: the corpus is not beside the checkout (set OPENAPI_CORPUS); only vendored tools load', () => {
    expect(world.operations.length).toBeGreaterThan(0);
  });
});
